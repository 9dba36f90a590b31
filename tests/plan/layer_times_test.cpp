// Per-layer times (plan --explain-layers's): how a split prices each layer's compute and
// synchronisations, on small models computed by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <vector>

#include "cost/collective_cost.hpp"
#include "cost/topology.hpp"
#include "graph/model.hpp"
#include "hw/cluster_yaml.hpp"
#include "plan/oracle.hpp"
#include "plan_fixture.hpp"

namespace paraxis::plan {
namespace {

using testing::inputsFor;

// The per-layer times `plan --explain` lists add up to the breakdown; a batch norm split over
// the spatial ranks reduces its statistics there forward and backward (the executor's sums:
// 3 then 2 f64 values per channel), so it is a synchronisation too.
TEST(LayerTimes, AddUpToTheBreakdownAndASplitBatchNormSynchronises) {
  graph::ModelBuilder b("bn", graph::TensorShape{4, {8, 8}});
  int x = b.conv("conv", 0, {.filters = 8, .kernel = {3}, .padding = {1}, .bias = false});
  x = b.batchNorm("bn", x);
  x = b.relu("relu", x);
  b.fc("fc", x, 10);
  const graph::Model model = std::move(b).build();
  const hw::Cluster cluster = testing::toyCluster();
  Oracle oracle(inputsFor(model, cluster));
  for (const Strategy& s :
       {Strategy{"data", Grid{.data = 2}, 8}, Strategy{"spatial", Grid{.height = 2}, 2}}) {
    const Estimate e = oracle.estimate(s);
    const std::vector<LayerTime> layers = oracle.layerTimes(s);
    ASSERT_EQ(layers.size(), static_cast<std::size_t>(model.size()));
    double forward = 0, backward = 0, communication = 0;
    for (const LayerTime& l : layers)
      forward += l.forward, backward += l.backward, communication += l.communication;
    EXPECT_NEAR(forward, e.time.forward, 1e-15) << s.name;
    EXPECT_NEAR(backward, e.time.backwardData + e.time.backwardWeight, 1e-15) << s.name;
    EXPECT_NEAR(communication, e.time.halo + e.time.layerCollectives + e.time.shuffle, 1e-15) << s.name;
  }
  const std::vector<LayerTime> spatial = oracle.layerTimes(Strategy{"spatial", Grid{.height = 2}, 2});
  // The gather where the split ends (into fc) is a shuffle, as train times it; the batch norm's
  // statistics are layer collectives.
  const Estimate split = oracle.estimate(Strategy{"spatial", Grid{.height = 2}, 2});
  EXPECT_GT(spatial[4].communication, 0);
  EXPECT_NEAR(split.time.shuffle, spatial[4].communication, 1e-15);
  EXPECT_GT(split.time.layerCollectives, 0);
  const double channels = 8;
  const cost::LinkParams node{1e-6, 1.0 / 10e9, 3.0 / 100e9};
  EXPECT_NEAR(spatial[2].communication,
              cost::bestFlatAllreduce(2, 3 * 8 * channels, node).seconds +
                  cost::bestFlatAllreduce(2, 2 * 8 * channels, node).seconds,
              1e-15);
  EXPECT_EQ(oracle.layerTimes(Strategy{"data", Grid{.data = 2}, 8})[2].communication, 0);
  EXPECT_TRUE(
      oracle.layerTimes(Strategy{"data", Grid{.data = 3}, 8}).empty());  // 3 ranks on 2 x 2: infeasible
}

// A batch norm or ReLU after a filter layer runs on the rank's slice of the channels: it reads
// and writes that slice, as it would in a model with only that many channels (cosmoflow@64's
// first pooling and activation on a filter split took 0.45-0.53x their whole-channel time).
TEST(LayerTimes, AChannelWiseLayerOnAFilterSplitCostsItsSlice) {
  auto model = [](std::int64_t filters) {
    graph::ModelBuilder b("slice", graph::TensorShape{4, {16, 16}});
    int x = b.conv("conv", 0, {.filters = filters, .kernel = {3}, .padding = {1}, .bias = false});
    x = b.batchNorm("bn", x);
    x = b.relu("relu", x);
    b.fc("fc", x, 10);
    return std::move(b).build();
  };
  const hw::Cluster cluster = testing::toyCluster();
  const graph::Model whole = model(16), half = model(8);
  const std::vector<LayerTime> split =
      Oracle(inputsFor(whole, cluster)).layerTimes(Strategy{"filter", Grid{.filter = 2}, 8});
  const std::vector<LayerTime> alone =
      Oracle(inputsFor(half, cluster)).layerTimes(Strategy{"data", Grid{.data = 1}, 8});
  ASSERT_EQ(split.size(), alone.size());
  for (const char* name : {"bn", "relu"}) {
    const auto i = static_cast<std::size_t>(whole.find(name));
    EXPECT_GT(split[i].forward, 0) << name;
    EXPECT_NEAR(split[i].forward, alone[i].forward, 1e-12 * alone[i].forward) << name;
    EXPECT_NEAR(split[i].backward, alone[i].backward, 1e-12 * alone[i].backward) << name;
  }
}

// Where the device keeps its rate over a channel split (split_keeps_rate, a CPU core's kernel),
// a filter split narrows a convolution's product, not its size: the efficiency curve (fitted on
// whole layers, rising with a call's FLOPs) is read at the whole layer's FLOPs, so each rank's
// half of the filters takes half the time (small-cnn@32's filter=2 convolutions ran at 0.53-0.57x
// their whole time). Without it (a GPU's occupancy) the half is priced as a smaller layer.
TEST(LayerTimes, AFilterSplitConvolutionKeepsTheWholeLayersRateWhereTheDeviceSaysSo) {
  graph::ModelBuilder b("wide", graph::TensorShape{64, {16, 16}});
  const int x = b.conv("conv", 0, {.filters = 64, .kernel = {3}, .padding = {1}, .bias = false});
  b.fc("fc", x, 10);
  const graph::Model model = std::move(b).build();
  auto cluster = [](const char* keeps) {
    return hw::loadClusterText(fmt::format(R"(name: steep
device:
  name: steep
  peak_flops: {{fp32: 1 TFLOP/s}}
  memory: 1 GiB
  memory_bandwidth: 100 TB/s
  efficiency: [[1e6, 0.1], [1e10, 0.9]]
  split_keeps_rate: {}
devices_per_node: 2
nodes: 1
network:
  - {{name: node, alpha: 1 us, bandwidth: 10 GB/s, ranks: node}}
)",
                                           keeps),
                               "steep");
  };
  const auto conv = static_cast<std::size_t>(model.find("conv"));
  for (const char* keeps : {"true", "false"}) {
    const hw::Cluster c = cluster(keeps);
    ASSERT_EQ(c.device.splitKeepsRate, std::string(keeps) == "true");
    Oracle oracle(inputsFor(model, c));
    const LayerTime whole = oracle.layerTimes(Strategy{"data", Grid{.data = 1}, 8})[conv];
    const LayerTime half = oracle.layerTimes(Strategy{"filter", Grid{.filter = 2}, 8})[conv];
    ASSERT_GT(whole.forward, 0);
    if (c.device.splitKeepsRate) {
      EXPECT_NEAR(half.forward, whole.forward / 2, 1e-9 * whole.forward);
      EXPECT_NEAR(half.backward, whole.backward / 2, 1e-9 * whole.backward);
    } else {
      EXPECT_GT(half.forward, 1.05 * whole.forward / 2);  // lower on the curve
    }
  }
}

// One convolution of `filters` over `input` (then a classifier), its layer's times under
// `grids` on a 1 TFLOP/s core with memory fast enough not to matter and `device` more keys.
std::vector<LayerTime> convolutionTimes(const graph::TensorShape& input, std::int64_t filters,
                                        const std::string& device, const std::vector<Grid>& grids) {
  graph::ModelBuilder b("one", input);
  const int x = b.conv("conv", 0, {.filters = filters, .kernel = {3}, .padding = {1}, .bias = false});
  b.fc("fc", x, 10);
  const graph::Model model = std::move(b).build();
  const hw::Cluster c = hw::loadClusterText(fmt::format(R"(name: core
device:
  name: core
  peak_flops: {{fp32: 1 TFLOP/s}}
  memory: 1 GiB
  memory_bandwidth: 100 TB/s
{}devices_per_node: 4
nodes: 1
network:
  - {{name: node, alpha: 1 us, bandwidth: 10 GB/s, ranks: node}}
)",
                                                        device),
                                            "core");
  Oracle oracle(inputsFor(model, c));
  std::vector<LayerTime> times;
  for (const Grid& g : grids)
    times.push_back(oracle.layerTimes(Strategy{"one", g, 8}).at(static_cast<std::size_t>(x)));
  return times;
}

// A weight pass over few weights a filter (narrow_weight_depth) is slow for laying its input
// out, as much for a few filters as for all: split by filters, only its product halves.
// CosmoFlow 64^3's conv1 (4 channels x 27 taps) took 66 ms over 32 filters and 53 over 16.
TEST(LayerTimes, AFilterSplitOfANarrowWeightPassHalvesOnlyItsProduct) {
  const std::vector<LayerTime> t = convolutionTimes(graph::TensorShape{4, {16, 16, 16}}, 32,
                                                    "  split_keeps_rate: true\n  kernels:\n    conv3d: "
                                                    "{narrow_weight_depth: 128, narrow_weight_share: 0.25}\n",
                                                    {Grid{.data = 1}, Grid{.filter = 2}});
  const LayerTime &whole = t[0], &half = t[1];
  ASSERT_GT(whole.forward, 0);
  EXPECT_NEAR(half.forward, whole.forward / 2, 1e-9 * whole.forward);
  // The first layer's backward is its weight pass: a quarter product, three quarters layout.
  EXPECT_NEAR(whole.backward, 4 * whole.forward, 1e-9 * whole.forward);
  EXPECT_NEAR(half.backward, (0.5 + 3) / 4 * whole.backward, 1e-9 * whole.backward);
}

// Split along its rows (h=2), a 3x3 convolution over 4 rows computes its window's padding row
// too (parallel/spatial_conv.cpp), where the whole layer's kernel skips its padding: 6 row taps
// a rank over 2 output rows against 10 for the whole's 4, so each half costs 0.6 of the whole.
TEST(LayerTimes, ASpatiallySplitConvolutionComputesItsWindowsPadding) {
  const std::vector<LayerTime> t =
      convolutionTimes(graph::TensorShape{64, {4, 8}}, 64, "",
                       {Grid{.data = 1}, Grid{.height = 2}, Grid{.width = 2}, Grid{.height = 2, .width = 2}});
  const LayerTime &whole = t[0], &half = t[1], &across = t[2], &quarter = t[3];
  ASSERT_GT(whole.forward, 0);
  EXPECT_NEAR(half.forward, 0.6 * whole.forward, 1e-9 * whole.forward);
  EXPECT_NEAR(half.backward, 0.6 * whole.backward, 1e-9 * whole.backward);
  // Along the 8 columns: 12 taps a rank against 22 for the whole.
  EXPECT_NEAR(across.forward, 12.0 / 22 * whole.forward, 1e-9 * whole.forward);
  // Split both ways, each dimension's window computes its own padding.
  EXPECT_NEAR(quarter.forward, whole.forward / 4 * (12.0 / 10) * (24.0 / 22), 1e-9 * whole.forward);
}

}  // namespace
}  // namespace paraxis::plan
