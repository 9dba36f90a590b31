#pragma once
// The gradient reduction as a schedule over gradient groups (COST-MODELS.md section 5):
// gradients become ready in reverse layer order during backward; a group is reduced once all
// its members are ready and the network is free; what finishes after backward is exposed.
// In forward-priority order the tail left at the end of backward goes out first-layer-first
// while the next forward runs: only what the forward would wait for stays exposed.
#include <functional>
#include <vector>

#include "cost/compute.hpp"
#include "graph/model.hpp"
#include "hw/cluster.hpp"
#include "plan/strategy.hpp"

namespace paraxis::plan {

struct GradientSource {  // one layer with weights, in backward order
  double readySeconds;   // when backward has produced its weight gradient
  double bytes;          // its gradient, fp32
  double forwardStart = 0;  // when the next forward reaches the layer (forward-priority order)
};

struct GroupCost {
  double bytes;
  double seconds;  // reduction of the group
};

struct GradientResult {
  double total = 0;        // sum of the groups' reductions (and negotiation)
  double exposed = 0;      // past the end of backward
  double negotiation = 0;
  double computeStretch = 0;  // how much longer backward ran for the reductions' work beside it
  double forwardStretch = 0;  // how much longer the next forward ran beside the tail (forward priority)
  int groups = 0;
};

// Working arrays of scheduleGradients, kept by the caller between calls (the oracle evaluates
// thousands of configurations; the Oracle owns one).
struct ScheduleScratch {
  std::vector<double> bytes;
  std::vector<int> ends;
  std::vector<double> groupSeconds;
};

// `reduce(bytes)` costs one group's allreduce as sent on the wire (fp16 and sparsity applied
// by the caller); `negotiationSeconds` one negotiation round. `overlap`: while compute runs
// (backward, then the next forward), a reduction progresses at a share of its speed
// (progressBesideBackward, then `hidden`) and stretches the compute by (slowdown - 1) / hidden
// per second of the reduction's work done beside it (`slowdown` as measured beside one call).
GradientResult scheduleGradients(const std::vector<GradientSource>& sources, double backwardSeconds,
                                 const GradientComm& settings, const std::function<double(double)>& reduce,
                                 double negotiationSeconds, const hw::Overlap& overlap, ScheduleScratch& scratch);
// The same with arrays of its own.
GradientResult scheduleGradients(const std::vector<GradientSource>& sources, double backwardSeconds,
                                 const GradientComm& settings, const std::function<double(double)>& reduce,
                                 double negotiationSeconds, const hw::Overlap& overlap = {});

// Groups the sources' bytes (backward order) as the settings say: fusion buckets with a small
// first bucket, one group per layer, or N groups of about equal bytes.
std::vector<std::vector<int>> formGroups(const std::vector<GradientSource>& sources, const GradientComm& settings);

// The rate at which a reduction in flight progresses while backward runs: under forward
// priority the engine sends chunk by chunk then, each after a readiness agreement
// (`whileChunked()`); otherwise one call per group (`hidden`). Beside the next forward the
// priority engine's rest goes in one call per group: `hidden`.
inline double progressBesideBackward(const hw::Overlap& overlap, const GradientComm& settings) {
  return settings.order == ReduceOrder::kForwardPriority ? overlap.whileChunked() : overlap.hidden;
}

// A layer whose weight gradient is reduced: one with parameters (all its tensors together).
inline bool carriesGradient(const cost::LayerProfile& profile) { return profile.params > 0; }

// The oracle's gradient groups for a replica that splits no layer: model layer indices, groups
// in backward order and each group's layers in backward order, the runtime engine's order.
std::vector<std::vector<int>> gradientGroupLayers(const graph::Model& model, const GradientComm& settings);

}  // namespace paraxis::plan
