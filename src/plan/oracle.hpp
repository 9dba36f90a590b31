#pragma once
// The oracle for one model on one cluster: what it derives from them once (the layers as flat
// numbers, one device's iteration time per batch) and the working arrays it reuses, held in
// one explicit object. Build a new Oracle for another model or cluster, or after changing
// either; nothing needs clearing. Not for concurrent use: one Oracle per thread.
#include <map>
#include <string>
#include <vector>

#include "plan/estimate.hpp"
#include "plan/evaluation.hpp"
#include "plan/inputs.hpp"

namespace paraxis::plan {

class Oracle {
 public:
  explicit Oracle(const PlanInputs& inputs);

  const PlanInputs& inputs() const { return inputs_; }
  // Estimates the strategy. An infeasible strategy comes back with feasible=false and the
  // reason; one that does not fit in memory with fits=false and the component that breaks.
  // `withRange` adds the optimistic / congested iteration times (three evaluations).
  Estimate estimate(const Strategy& strategy, bool withRange = true);
  // One device running the whole model on `samples` per iteration: the reference for scaling
  // efficiency.
  double serialIterationSeconds(double samples);

 private:
  PlanInputs inputs_;
  std::vector<cost::LayerProfile> profiles_;
  std::map<double, double> serialSeconds_;  // by samples
  detail::LayerArrays arrays_;
};

}  // namespace paraxis::plan
