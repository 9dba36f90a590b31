#pragma once
// What the oracle predicts for one strategy, and what `train` measures, in one schema.
#include <cstdint>
#include <string>

#include "plan/strategy.hpp"

namespace paraxis::plan {

// A measured run's figures average at least this many iterations past the warm-up; a report
// with fewer says so, and validate/calibrate refuse it (too few to compare with anything).
inline constexpr std::int64_t kMinimumMeasuredIterations = 3;

// Seconds per iteration: what the oracle predicts and what `train` measures. A measured run
// times the backward pass whole (backwardData holds it, backwardWeight is 0) and the data
// loading, which the oracle does not predict (0).
struct TimeBreakdown {
  double forward = 0;
  double backwardData = 0;
  double backwardWeight = 0;
  double update = 0;             // the optimizer step and zeroing the gradients for the next backward
  double gradientAllreduce = 0;  // total time of the gradient reduction
  double gradientExposed = 0;    // the part not hidden behind backward
  double halo = 0;
  double layerCollectives = 0;  // filter allgathers, channel allreduces, a split batch norm's statistics
  double pipelineP2P = 0;
  double bubble = 0;
  double shuffle = 0;  // redistributions between layers' distributions: the gather where a spatial split ends
  double negotiation = 0;
  double dataLoading = 0;

  double compute() const { return forward + backwardData + backwardWeight + update; }
  // A rank's passes and the layer communication among them: what sets a pipeline stage's or a
  // placed device's share of the step (the busiest one's breakdown is the oracle's).
  double busy() const { return forward + backwardData + backwardWeight + halo + layerCollectives + shuffle; }
  double communication() const { return gradientExposed + halo + layerCollectives + pipelineP2P + shuffle + negotiation; }
  double iteration() const { return compute() + communication() + bubble + dataLoading; }
};

// Every term of the breakdown by its JSON key (docs/json-output.md), in the order printed.
struct TimeTerm {
  const char* key;
  double TimeBreakdown::*field;
};
inline constexpr TimeTerm kTimeTerms[] = {
    {"forward", &TimeBreakdown::forward},
    {"backward_data", &TimeBreakdown::backwardData},
    {"backward_weight", &TimeBreakdown::backwardWeight},
    {"update", &TimeBreakdown::update},
    {"gradient_allreduce", &TimeBreakdown::gradientAllreduce},
    {"gradient_exposed", &TimeBreakdown::gradientExposed},
    {"halo", &TimeBreakdown::halo},
    {"layer_collectives", &TimeBreakdown::layerCollectives},
    {"pipeline_p2p", &TimeBreakdown::pipelineP2P},
    {"bubble", &TimeBreakdown::bubble},
    {"shuffle", &TimeBreakdown::shuffle},
    {"negotiation", &TimeBreakdown::negotiation},
    {"data_loading", &TimeBreakdown::dataLoading},
};

struct MemoryBreakdown {  // bytes per device
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double halo = 0;
  double fusion = 0;
  double pipelineInFlight = 0;
  double workspace = 0;

  double total() const {
    return weights + gradients + optimizer + activations + halo + fusion + pipelineInFlight + workspace;
  }
  // The largest component, for "does not fit" messages.
  std::string largest() const;
};

// One model layer's share of a strategy's step as the oracle prices it, on one rank of a
// replica (a pipeline's: one micro-batch's pass), before the gradient schedule stretches the
// totals: what `plan --explain` lists beside the layers of `train --trace`.
struct LayerTime {
  double forward = 0, backward = 0, communication = 0;  // seconds; communication: halo and collectives
};

// The exposed gradient time's parts (their sum: TimeBreakdown::gradientExposed): the
// reductions' own time past backward (under forward priority, what the next forward waits for
// of those left at backward's end), the ranks' drift met at the step's first synchronisation
// after backward (its closing agreement), and under forward priority one synchronisation beside
// the engine for each group the next forward awaits. What `validate --trace` holds against the
// waits a run's trace shows (calib/gradient_trace.hpp).
struct ExposedGradientParts {
  double reductions = 0, drift = 0, groupAwaits = 0;  // seconds
  double total() const { return reductions + drift + groupAwaits; }
};

struct Estimate {
  Strategy strategy;
  bool feasible = true;
  std::string infeasibleReason;  // which limit or memory component breaks

  TimeBreakdown time;
  double iterationOptimistic = 0;  // the range under no / doubled contention
  double iterationCongested = 0;
  MemoryBreakdown memory;
  double memoryCapacity = 0;
  bool fits = true;
  std::string allreduceAlgorithm;
  ExposedGradientParts exposedParts;

  double samplesPerSecond = 0;
  double iterationsPerEpoch = 0;
  double epochSeconds = 0;
  double epochs = 0;
  double timeToTrain = 0;
  double deviceHours = 0;
  double scalingEfficiency = 0;  // throughput / (devices x one device's throughput)
  double statisticalEfficiency = 0;
  double modelParallelSpeedup = 0;
  std::string bottleneck;
};

}  // namespace paraxis::plan
