#pragma once
// One strategy's evaluation under one congestion level, in named pieces (internal to plan):
// the per-layer terms (compute with the implementation's factors, halo and layer
// collectives), the pipeline's stages, the gradient reduction's schedule, and the memory.
#include <string>
#include <vector>

#include "cost/compute.hpp"
#include "cost/topology.hpp"
#include "plan/estimate.hpp"
#include "plan/gradient_schedule.hpp"
#include "plan/inputs.hpp"
#include "plan/layer_split.hpp"

namespace paraxis::plan::detail {

// Per-layer working arrays, reused between evaluations (owned by the Oracle, so the inner loop
// allocates nothing).
struct LayerArrays {
  std::vector<LayerSplit> splits;
  std::vector<double> forward, backward, backwardData, backwardWeight, communication, halo;
  std::vector<GradientSource> sources;
  std::vector<int> stage;
  ScheduleScratch schedule;
  // The time-sharing walk's spans of compute, and each (layer, pass) entry's span; the layers
  // the next forward awaits a gradient group's reduction before (1: an await before it).
  std::vector<double> spans;
  std::vector<int> spanOf;
  std::vector<char> awaitedAt;
  std::vector<int> gradientLayers;  // the layers carrying gradients, in backward order

  void reset(int layers);
};

// A layer's gradient bytes on a rank (fp32): a split layer's share of its weights, as the
// gradient schedule reduces them and forms its groups.
inline double localGradientBytes(const cost::LayerProfile& profile, const LayerSplit& split) {
  return profile.params * (profile.weighted ? split.share.inputChannels * split.share.outputChannels : 1.0) *
         4;
}

struct Evaluation {
  TimeBreakdown time;
  MemoryBreakdown memory;
  std::string allreduceAlgorithm = "none";
  ExposedGradientParts exposedParts;
  double replicaSeconds = 0;  // one replica's iteration without the gradient reduction
};

Evaluation evaluate(const PlanInputs& inputs, const std::vector<cost::LayerProfile>& profiles, LayerArrays& arrays,
                    const Strategy& strategy, cost::Congestion congestion);

}  // namespace paraxis::plan::detail
