#pragma once
// ParaDL's own published equations (Kahira et al., HPDC 2021), to reproduce its projections:
// compute is one measured per-sample time divided by the device count, whatever the
// strategy; communication is α-β with the topology's latency and bandwidth and no sharing.
// `paraxis plan --model-variant paradl` prints these beside the default model.
#include "plan/inputs.hpp"
#include "plan/strategy.hpp"

namespace paraxis::plan {

struct ParadlEpoch {
  double compute = 0;        // seconds per epoch
  double communication = 0;  // seconds per epoch
  double total() const { return compute + communication; }
};

// Serial, data and data+filter; throws ConfigError for strategies ParaDL's variant here
// does not cover.
ParadlEpoch paradlEpoch(const PlanInputs& inputs, const Strategy& strategy, double sampleSeconds);

}  // namespace paraxis::plan
