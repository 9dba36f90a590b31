#include "cost/compute.hpp"

#include <gtest/gtest.h>

#include "graph/model.hpp"

namespace paraxis::cost {
namespace {

TEST(Compute, RooflineWithEfficiencyAndOverhead) {
  hw::Device d{.memoryBandwidth = 1e9, .efficiency = {{1e3, 0.1}, {1e9, 0.5}}};
  d.callOverhead = 1e-6;
  // Compute-bound: 1e9 FLOPs at 0.5 of 1e12 -> 2 ms (+ overhead); bytes take 1 ms.
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, {1e9, 1e6}), 1e-6 + 2e-3);
  // Memory-bound: 1e3 FLOPs at 0.1 -> 10 ns; 1e6 bytes -> 1 ms.
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, {1e3, 1e6}), 1e-6 + 1e-3);
  EXPECT_EQ(passSeconds(d, 1e12, {0, 0}), 0);
}

TEST(Compute, LocalShareScalesFlopsAndBytes) {
  graph::ModelBuilder b("t", graph::TensorShape{8, {16, 16}});
  const int conv = b.conv("c", 0, {.filters = 16, .kernel = {3}, .padding = {1}, .bias = false});
  const graph::Model m = std::move(b).build();
  const graph::Layer& layer = m.layer(conv);
  const LayerWork whole = layerWork(layer, 8 * 256, {.samples = 4}, 4);
  EXPECT_DOUBLE_EQ(whole.forward.flops, 4 * layer.counts.forwardFlops);
  const LayerWork quarter = layerWork(layer, 8 * 256, {.samples = 4, .spatial = 0.25, .outputChannels = 0.5}, 4);
  EXPECT_DOUBLE_EQ(quarter.forward.flops, 4 * layer.counts.forwardFlops * 0.25 * 0.5);
  // Output bytes shrink with the spatial and filter shares; weights with the filter share.
  EXPECT_DOUBLE_EQ(quarter.forward.bytes, (8 * 256 * 4 + 16 * 256 * 4 * 0.25 * 0.5) * 4 + 16 * 8 * 9 * 0.5 * 4);
}

}  // namespace
}  // namespace paraxis::cost
