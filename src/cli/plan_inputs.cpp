#include "cli/plan_inputs.hpp"

#include "plan/statistical.hpp"

namespace paraxis::cli {

plan::PlanInputs planInputs(const graph::Model& model, const hw::Cluster& cluster, const std::string& dtype,
                            double datasetSize) {
  plan::PlanInputs in;
  in.model = &model;
  in.cluster = &cluster;
  in.dtype = dtype;
  cluster.device.peak(dtype);  // fails with the dtypes the device has
  const plan::Recipe recipe = plan::defaultRecipe(model.name());
  in.statistics = recipe.statistics;
  in.datasetSamples = datasetSize > 0 ? datasetSize : recipe.samples;
  return in;
}

}  // namespace paraxis::cli
