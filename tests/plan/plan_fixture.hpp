#pragma once
// A three-layer model on a toy two-node cluster with no efficiency curve, no call overhead
// and round numbers, so that estimates can be computed by hand.
#include "graph/model.hpp"
#include "hw/cluster_yaml.hpp"
#include "plan/inputs.hpp"

namespace paraxis::plan::testing {

inline graph::Model threeLayers() {
  graph::ModelBuilder b("three", graph::TensorShape{4, {8, 8}});
  int x = b.conv("conv", 0, {.filters = 8, .kernel = {3}, .padding = {1}, .bias = false});
  x = b.relu("relu", x);
  b.fc("fc", x, 10);
  return std::move(b).build();
}

inline hw::Cluster toyCluster() {
  return hw::loadClusterText(R"(name: toy
device: {name: toy, peak_flops: {fp32: 1 TFLOP/s}, memory: 1 GiB, memory_bandwidth: 100 GB/s}
devices_per_node: 2
nodes: 2
network:
  - {name: node, alpha: 1 us, bandwidth: 10 GB/s, ranks: node}
  - {name: net, alpha: 10 us, bandwidth: 1 GB/s, ranks: all}
)", "toy");
}

inline PlanInputs inputsFor(const graph::Model& m, const hw::Cluster& c) {
  PlanInputs in;
  in.model = &m;
  in.cluster = &c;
  in.datasetSamples = 800;
  in.statistics = {10, 1e9, 0.5, {}};
  return in;
}

}  // namespace paraxis::plan::testing
