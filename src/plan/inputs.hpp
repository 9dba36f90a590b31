#pragma once
// Everything an estimate depends on besides the strategy.
#include <string>
#include <vector>

#include "cost/compute.hpp"
#include "cost/topology.hpp"
#include "graph/model.hpp"
#include "hw/cluster.hpp"
#include "plan/statistical.hpp"

namespace paraxis::plan {

struct PlanInputs {
  const graph::Model* model = nullptr;
  const hw::Cluster* cluster = nullptr;
  std::string dtype = "fp32";                 // which device peak compute runs at
  double optimizerStatesPerWeight = 1;        // SGD with momentum 1, Adam 2
  cost::Congestion congestion = cost::Congestion::kExpected;
  StatisticalModel statistics;                // epochs to target versus global batch
  double datasetSamples = 0;                  // samples per epoch
  std::string dataset;                        // its name, for reports
};

}  // namespace paraxis::plan
