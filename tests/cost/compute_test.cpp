#include "cost/compute.hpp"
#include "cost/efficiency_fit.hpp"

#include <gtest/gtest.h>

#include <random>

#include "graph/model.hpp"
#include "graph/zoo/zoo.hpp"
#include "hw/presets.hpp"

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

// The prepared path the oracle runs must give what the reference formulas give, for every
// layer of real models, at random shares, on a device whose curve and floor both matter.
TEST(Compute, PreparedProfileEqualsReference) {
  const hw::Cluster cluster = hw::loadCluster("abci");
  const double peak = cluster.device.peak("fp32");
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> fraction(0.01, 1.0);
  std::uniform_int_distribution<int> samples(1, 256);
  for (const char* name : {"resnet50", "inception-v3", "cosmoflow", "alexnet"}) {
    const graph::Model m = graph::buildZooModel(name);
    const std::vector<LayerProfile> profiles = profileLayers(m);
    ASSERT_EQ(static_cast<int>(profiles.size()), m.size());
    LogMemo logs;
    const DeviceRates rates(cluster.device, peak);
    int compared = 0;
    for (int trial = 0; trial < 3; ++trial) {
      for (int i = 0; i < m.size(); ++i) {
        const graph::Layer& layer = m.layer(i);
        LocalShare share{.samples = static_cast<double>(samples(rng))};
        if (trial > 0) {
          share.spatial = fraction(rng);
          share.inputSpatial = fraction(rng);
          share.inputChannels = fraction(rng);
          share.outputChannels = fraction(rng);
        }
        const graph::Layer& input = layer.inputs.empty() ? layer : m.layer(layer.inputs.front());
        const double inElems = static_cast<double>(input.counts.activationBytes / m.bytesPerElement());
        const LayerTimes want =
            layerTimes(cluster.device, peak,
                       layerWork(layer, inElems, share, m.bytesPerElement(), cluster.device.channelTile,
                                 static_cast<double>(input.output.channels)));
        const LayerTimes got = layerTimes(rates, profiles[i], share, m.bytesPerElement(), logs);
        EXPECT_NEAR(got.forward, want.forward, 1e-12 * want.forward) << name << " " << layer.name;
        EXPECT_NEAR(got.backwardData, want.backwardData, 1e-12 * want.backwardData) << name << " " << layer.name;
        EXPECT_NEAR(got.backwardWeight, want.backwardWeight, 1e-12 * want.backwardWeight) << name << " " << layer.name;
        compared += want.forward > 0;
      }
    }
    EXPECT_GT(compared, m.size()) << name;
  }
}

}  // namespace
}  // namespace paraxis::cost

namespace paraxis::cost {
namespace {

// Timed calls made by the compute model itself from a known device: the fit gives it back.
TEST(EfficiencyFit, RecoversTheDeviceThatTimedTheCalls) {
  hw::Device truth;
  truth.memoryBandwidth = 8e9;
  truth.callOverhead = 2e-6;
  truth.efficiency = {{1e5, 0.5}, {1e9, 0.5}};  // flat: every matrix product at half the peak
  truth.prepare();
  const double peak = 100e9;
  std::vector<TimedCall> calls;
  for (double flops = 2e5; flops < 5e8; flops *= 3) {
    calls.push_back({flops, flops / 50, true, passSeconds(truth, peak, {flops, flops / 50})});  // compute-bound
    calls.push_back({flops / 100, flops, false, passSeconds(truth, peak, {flops / 100, flops})});  // element-wise
  }
  calls.push_back({1e6, 1e9, true, passSeconds(truth, peak, {1e6, 1e9})});  // a memory-bound product: not in the curve
  const DeviceFit fit = fitDevice(calls, peak, truth.callOverhead);
  EXPECT_NEAR(fit.memoryBandwidth / 8e9, 1, 1e-9);
  ASSERT_EQ(fit.efficiency.size(), 4U);  // decades 1e5 .. 1e8
  for (const hw::EfficiencyPoint& p : fit.efficiency) EXPECT_NEAR(p.efficiency, 0.5, 1e-9);
  EXPECT_EQ(fit.computeCalls, static_cast<int>((calls.size() - 1) / 2));  // the memory-bound one left out
}

TEST(EfficiencyFit, CurveNeverFalls) {
  // A decade measured slower than the one below stays at the lower decade's efficiency.
  const std::vector<TimedCall> calls{{1e6, 1, true, 1e6 / (1e9 * 0.4)}, {1e7, 1, true, 1e7 / (1e9 * 0.3)},
                                     {1e8, 1, true, 1e8 / (1e9 * 0.8)}};
  const DeviceFit fit = fitDevice(calls, 1e9, 0);
  ASSERT_EQ(fit.efficiency.size(), 3U);
  EXPECT_NEAR(fit.efficiency[0].efficiency, 0.4, 1e-12);
  EXPECT_NEAR(fit.efficiency[1].efficiency, 0.4, 1e-12);
  EXPECT_NEAR(fit.efficiency[2].efficiency, 0.8, 1e-12);
  EXPECT_EQ(fit.memoryBandwidth, 0);  // no element-wise calls
}

}  // namespace
}  // namespace paraxis::cost
