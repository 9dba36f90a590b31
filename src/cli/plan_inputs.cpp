#include "cli/plan_inputs.hpp"

#include <CLI/CLI.hpp>

#include "plan/statistical.hpp"

namespace paraxis::cli {

CLI::Option* addClusterOptions(CLI::App& c, std::string& cluster, std::string& dtype, const std::string& defaultCluster) {
  CLI::Option* option = c.add_option("--cluster", cluster, "preset or cluster .yaml file (default " + defaultCluster + ")");
  c.add_option("--dtype", dtype, "compute data type: fp32 (default), tf32, fp16, bf16");
  return option;
}

plan::PlanInputs planInputs(const graph::Model& model, const hw::Cluster& cluster, const std::string& dtype,
                            double datasetSize) {
  plan::PlanInputs in;
  in.model = &model;
  in.cluster = &cluster;
  in.dtype = dtype;
  cluster.device.peak(dtype);  // fails with the dtypes the device has
  const plan::Recipe recipe = plan::recipeFor(model);
  in.statistics = recipe.statistics;
  in.datasetSamples = datasetSize > 0 ? datasetSize : recipe.samples;
  in.dataset = datasetSize > 0 ? "--dataset-size" : recipe.dataset;
  return in;
}

}  // namespace paraxis::cli
