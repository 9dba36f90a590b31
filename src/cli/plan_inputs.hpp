#pragma once
// What every oracle command (plan, validate, calibrate) starts from: the model, the cluster,
// the compute data type and the data set's size (0: the model's default recipe).
#include <string>

#include "plan/inputs.hpp"

namespace CLI {
class App;
class Option;
}

namespace paraxis::cli {

// The cluster options, registered once for every command that predicts: --cluster (default
// named in `defaultCluster`) and --dtype; returns --cluster (to ask whether it was given).
CLI::Option* addClusterOptions(CLI::App& command, std::string& cluster, std::string& dtype, const std::string& defaultCluster);

// Throws NotFoundError when the device has no peak for `dtype`.
plan::PlanInputs planInputs(const graph::Model& model, const hw::Cluster& cluster, const std::string& dtype,
                            double datasetSize);

}  // namespace paraxis::cli
