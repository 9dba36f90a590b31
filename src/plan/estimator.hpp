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

// One strategy through a fresh Oracle (oracle.hpp): for one-off estimates. Code that estimates
// many strategies of one model and cluster keeps an Oracle instead.
Estimate estimate(const PlanInputs& inputs, const Strategy& strategy, bool withRange = true);
double serialIterationSeconds(const PlanInputs& inputs, double samples);

}  // namespace paraxis::plan
