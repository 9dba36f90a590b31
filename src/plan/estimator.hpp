#pragma once
// The oracle's core: one strategy in, its predicted iteration time (by component), memory
// per device (by component), feasibility and time-to-train out. No MPI, no torch.
#include <string>

#include "plan/estimate.hpp"
#include "plan/inputs.hpp"

namespace paraxis::plan {

// The first limit the strategy breaks ("filter=128 exceeds the 64 filters of layer 'conv1'"),
// or empty when it is within every limit.
std::string limitViolation(const PlanInputs& inputs, const Strategy& strategy);

// Estimates the strategy. An infeasible strategy comes back with feasible=false and the
// reason; one that does not fit in memory with fits=false and the component that breaks.
// `withRange` adds the optimistic / congested iteration times (three evaluations).
Estimate estimate(const PlanInputs& inputs, const Strategy& strategy, bool withRange = true);

// One device running the whole model on `samples` per iteration: the reference for scaling
// efficiency.
double serialIterationSeconds(const PlanInputs& inputs, double samples);

}  // namespace paraxis::plan
