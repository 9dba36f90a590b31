#pragma once
// The oracle for one model on one cluster: what it derives from them once (the layers as flat
// numbers, one device's iteration time per batch) and the working arrays it reuses, held in
// one explicit object. Build a new Oracle for another model or cluster, or after changing
// either; nothing needs clearing. Not for concurrent use: one Oracle per thread.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plan/estimate.hpp"
#include "plan/evaluation.hpp"
#include "plan/inputs.hpp"

namespace paraxis::plan {

class Oracle {
 public:
  using Profiles = std::vector<cost::LayerProfile>;
  // `profiles`: the model's layers as prepared by another Oracle of the same model (they do not
  // depend on the cluster), so code that varies the cluster, such as calibration's fit, builds
  // an Oracle per cluster without preparing the model again; null: prepared here.
  explicit Oracle(const PlanInputs& inputs, std::shared_ptr<const Profiles> profiles = nullptr);
  const std::shared_ptr<const Profiles>& profiles() const { return profiles_; }

  const PlanInputs& inputs() const { return inputs_; }
  // Estimates the strategy. An infeasible strategy comes back with feasible=false and the
  // reason; one that does not fit in memory with fits=false and the component that breaks.
  // `withRange` adds the optimistic / congested iteration times (three evaluations).
  Estimate estimate(const Strategy& strategy, bool withRange = true);
  // Every model layer's LayerTime for `strategy` (in model order), at the inputs' congestion;
  // empty when the strategy is infeasible.
  std::vector<LayerTime> layerTimes(const Strategy& strategy);
  // One device running the whole model on `samples` per iteration: the reference for scaling
  // efficiency.
  double serialIterationSeconds(double samples);

 private:
  PlanInputs inputs_;
  std::shared_ptr<const Profiles> profiles_;
  std::map<double, double> serialSeconds_;  // by samples
  detail::LayerArrays arrays_;
};

}  // namespace paraxis::plan
