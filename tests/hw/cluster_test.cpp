#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hw/cluster_yaml.hpp"
#include "hw/presets.hpp"

namespace paraxis::hw {
namespace {

const std::string kData = PARAXIS_TEST_DATA;

// Loading `text` as `file` fails with a ConfigError whose message holds `expected`.
void expectRefused(const std::string& text, const std::string& file, const std::string& expected) {
  try {
    loadClusterText(text, file);
    ADD_FAILURE() << "accepted " << text;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

// `base` with `entry` at the end of its device section.
std::string withDeviceEntry(std::string base, const std::string& entry) {
  return base.insert(base.find("devices_per_node:"), entry);
}

TEST(Presets, AllLoadAndValidate) {
  for (const Preset& preset : presets()) {
    const Cluster c = loadCluster(preset.name);
    EXPECT_EQ(c.name, preset.name);
    EXPECT_GE(c.levels.back().ranks, c.totalDevices()) << preset.name;
    EXPECT_GT(c.device.peak("fp32"), 0) << preset.name;
  }
}

TEST(Presets, AbciMatchesParadlFigures) {
  const Cluster abci = loadCluster("abci");
  EXPECT_EQ(abci.devicesPerNode, 4);
  EXPECT_EQ(abci.totalDevices(), 4352);
  ASSERT_EQ(abci.levels.size(), 3U);
  EXPECT_DOUBLE_EQ(abci.levels[0].bandwidth(), 50e9);
  // GPU -> PLX -> NIC on both ends, 2 x (15 us + 110 ns), plus a leaf switch (ParaDL's code).
  EXPECT_NEAR(abci.levels[1].alpha, 2 * (15e-6 + 110e-9) + 90e-9, 1e-9);
  EXPECT_GT(abci.levels[1].alpha, abci.levels[0].alpha);  // leaving the node costs more than NVLink
  EXPECT_DOUBLE_EQ(abci.levels[1].beta, 1.0 / 12.5e9);
  EXPECT_EQ(abci.levels[1].ranks, 68);  // 17 nodes per rack
  EXPECT_DOUBLE_EQ(abci.levels[2].oversubscription, 3.0);
  EXPECT_DOUBLE_EQ(abci.device.memoryBytes, 16.0 * (1ULL << 30));
}

TEST(Cluster, LevelBetweenRanks) {
  const Cluster abci = loadCluster("abci");
  EXPECT_EQ(abci.levelBetween(0, 3), 0);    // same node
  EXPECT_EQ(abci.levelBetween(3, 4), 1);    // next node, same rack
  EXPECT_EQ(abci.levelBetween(67, 68), 2);  // next rack
}

TEST(Cluster, EfficiencyInterpolatesInLogFlopsAndClamps) {
  Device d{.efficiency = {{1e6, 0.1}, {1e8, 0.5}}};
  EXPECT_DOUBLE_EQ(d.efficiencyAt(1e3), 0.1);
  EXPECT_DOUBLE_EQ(d.efficiencyAt(1e7), 0.3);
  EXPECT_DOUBLE_EQ(d.efficiencyAt(1e9), 0.5);
}

TEST(Cluster, LocalPresetReadsTheHost) {
  const Cluster local = loadCluster("local");
  EXPECT_GE(local.devicesPerNode, 1);
  EXPECT_GT(local.device.memoryBytes, 0);
}

TEST(ClusterYaml, WrittenClusterLoadsBackEqual) {
  for (const Preset& preset : presets()) {
    Cluster c = loadCluster(preset.name);
    if (preset.name == "local") {
      c.device.backwardEfficiency = {{1e6, 0.1}, {1e9, 0.5}};
      c.device.kernels[static_cast<int>(Kernel::kConv3d)].backward = {{1e8, 0.3}};
      c.device.kernels[static_cast<int>(Kernel::kConv2d)].halfRateRows = 96;
      c.device.kernels[static_cast<int>(Kernel::kConv2d)].native = {{1e6, 0.2}, {1e8, 0.4}};
      c.device.kernels[static_cast<int>(Kernel::kConv2d)].oneSampleHalfRateRows = 12;
      c.device.kernels[static_cast<int>(Kernel::kConv2d)].halfRateDepth = 48;
      c.device.kernels[static_cast<int>(Kernel::kConv3d)].narrowWeightDepth = 128;
      c.device.kernels[static_cast<int>(Kernel::kConv3d)].narrowWeightShare = 0.375;
      c.device.kernels[static_cast<int>(Kernel::kFullyConnected)].oneSampleHalfRateRows = 0;
      c.device.bandwidthCurve = {{1e3, 2e9}, {1e8, 1e10}};
      c.implementation.overlap = {.hidden = 0.25, .slowdown = 1.5, .chunked = 0.125, .forward = 0.0625};
      c.implementation.wireConversion = {.f16 = 9.5e9, .bf16 = 8.25e9};
      c.implementation.skew = 0.0625;
      c.implementation.skewBeside = 0.0375;
      c.implementation.syncWait = 2.5e-4;
      c.implementation.syncWaitBeside = 1.5e-4;
      c.implementation.handoffWait = 1.25e-3;
      c.device.weightGradientTraffic = {3, 1.5, 2};
      c.device.forwardWeightTraffic = 2.5;
      c.device.memoryEfficiency[static_cast<int>(MemoryKind::kPool3d)][0] = 0.03125;
      c.device.memoryEfficiency[static_cast<int>(MemoryKind::kNormalization)][1] = 0.5;
    }
    if (preset.name == "abci") {
      c.implementation.halo = 3;
      c.implementation.paths[static_cast<int>(CommPath::kPointToPoint)].push_back({"rack", 40e-6, 1 / 2.5e9});
    }
    const Cluster back = loadClusterText(clusterYaml(c), "written " + preset.name);
    EXPECT_EQ(back.name, c.name);
    EXPECT_EQ(back.description, c.description);
    EXPECT_EQ(back.device.peakFlops, c.device.peakFlops);
    EXPECT_EQ(back.device.memoryBytes, c.device.memoryBytes);
    EXPECT_EQ(back.device.memoryBandwidth, c.device.memoryBandwidth);
    EXPECT_EQ(back.device.receivesByCopy, c.device.receivesByCopy) << preset.name;
    EXPECT_EQ(c.device.receivesByCopy, preset.name == "local") << preset.name;  // CPU cores copy; GPUs DMA
    EXPECT_EQ(back.device.splitKeepsRate, c.device.splitKeepsRate) << preset.name;
    EXPECT_EQ(c.device.splitKeepsRate, preset.name == "local") << preset.name;  // a core keeps its rate; a GPU's occupancy falls
    EXPECT_EQ(back.device.callOverhead, c.device.callOverhead);
    EXPECT_EQ(back.device.channelTile, c.device.channelTile);
    EXPECT_EQ(back.device.weightGradientTraffic.perPass, c.device.weightGradientTraffic.perPass);
    EXPECT_EQ(back.device.weightGradientTraffic.perSample, c.device.weightGradientTraffic.perSample);
    EXPECT_EQ(back.device.weightGradientTraffic.oneSample, c.device.weightGradientTraffic.oneSample);
    EXPECT_EQ(back.device.forwardWeightTraffic, c.device.forwardWeightTraffic);
    ASSERT_EQ(back.device.efficiency.size(), c.device.efficiency.size());
    for (std::size_t i = 0; i < c.device.efficiency.size(); ++i) {
      EXPECT_NEAR(back.device.efficiency[i].flops / c.device.efficiency[i].flops, 1, 1e-5);
      EXPECT_NEAR(back.device.efficiency[i].efficiency, c.device.efficiency[i].efficiency, 1e-6);
    }
    EXPECT_EQ(back.devicesPerNode, c.devicesPerNode);
    EXPECT_EQ(back.nodes, c.nodes);
    ASSERT_EQ(back.levels.size(), c.levels.size());
    for (std::size_t l = 0; l < c.levels.size(); ++l) {
      EXPECT_EQ(back.levels[l].name, c.levels[l].name);
      EXPECT_EQ(back.levels[l].alpha, c.levels[l].alpha);
      EXPECT_EQ(back.levels[l].beta, c.levels[l].beta);
      EXPECT_EQ(back.levels[l].ranks, c.levels[l].ranks);
      EXPECT_EQ(back.levels[l].links, c.levels[l].links);
      EXPECT_EQ(back.levels[l].oversubscription, c.levels[l].oversubscription);
    }
    EXPECT_EQ(back.implementation.halo, c.implementation.halo);
    EXPECT_EQ(back.implementation.overlap.hidden, c.implementation.overlap.hidden);
    EXPECT_EQ(back.implementation.overlap.slowdown, c.implementation.overlap.slowdown);
    EXPECT_EQ(back.implementation.overlap.chunked, c.implementation.overlap.chunked) << preset.name;
    EXPECT_EQ(back.implementation.overlap.forward, c.implementation.overlap.forward) << preset.name;
    EXPECT_EQ(back.implementation.wireConversion.f16, c.implementation.wireConversion.f16);
    EXPECT_EQ(back.implementation.wireConversion.bf16, c.implementation.wireConversion.bf16);
    EXPECT_EQ(back.implementation.skew, c.implementation.skew);
    EXPECT_EQ(back.implementation.skewBeside, c.implementation.skewBeside);
    EXPECT_EQ(back.implementation.syncWait, c.implementation.syncWait);
    EXPECT_EQ(back.implementation.syncWaitBeside, c.implementation.syncWaitBeside);
    EXPECT_EQ(back.implementation.handoffWait, c.implementation.handoffWait);
    for (int k = 0; k < kMemoryKinds; ++k) {
      EXPECT_EQ(back.device.memoryEfficiency[k][0], c.device.memoryEfficiency[k][0]) << kMemoryKindKeys[k];
      EXPECT_EQ(back.device.memoryEfficiency[k][1], c.device.memoryEfficiency[k][1]) << kMemoryKindKeys[k];
    }
    const auto sameCurve = [&](const std::vector<EfficiencyPoint>& a, const std::vector<EfficiencyPoint>& b) {
      ASSERT_EQ(a.size(), b.size()) << preset.name;
      for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_NEAR(a[i].flops / b[i].flops, 1, 1e-5);
        EXPECT_NEAR(a[i].efficiency / b[i].efficiency, 1, 1e-5);
      }
    };
    sameCurve(back.device.backwardEfficiency, c.device.backwardEfficiency);
    sameCurve(back.device.bandwidthCurve, c.device.bandwidthCurve);
    for (int k = 0; k < kKernels; ++k) {
      sameCurve(back.device.kernels[k].forward, c.device.kernels[k].forward);
      sameCurve(back.device.kernels[k].backward, c.device.kernels[k].backward);
      sameCurve(back.device.kernels[k].native, c.device.kernels[k].native);
      EXPECT_EQ(back.device.kernels[k].halfRateRows, c.device.kernels[k].halfRateRows);
      EXPECT_EQ(back.device.kernels[k].oneSampleHalfRateRows, c.device.kernels[k].oneSampleHalfRateRows);
      EXPECT_EQ(back.device.kernels[k].halfRateDepth, c.device.kernels[k].halfRateDepth);
      EXPECT_EQ(back.device.kernels[k].narrowWeightDepth, c.device.kernels[k].narrowWeightDepth);
      EXPECT_EQ(back.device.kernels[k].narrowWeightShare, c.device.kernels[k].narrowWeightShare);
    }
    for (int p = 0; p < kCommPaths; ++p) {
      ASSERT_EQ(back.implementation.paths[p].size(), c.implementation.paths[p].size());
      for (std::size_t i = 0; i < c.implementation.paths[p].size(); ++i) {
        EXPECT_EQ(back.implementation.paths[p][i].level, c.implementation.paths[p][i].level);
        EXPECT_NEAR(back.implementation.paths[p][i].alpha / c.implementation.paths[p][i].alpha, 1, 1e-5);
        EXPECT_NEAR(back.implementation.paths[p][i].beta / c.implementation.paths[p][i].beta, 1, 1e-5);
      }
    }
  }
}

// A path's measured figures replace the level's for that path only.
TEST(ClusterYaml, PathLinksReplaceTheLevelForTheirPath) {
  const std::string base = clusterYaml(loadCluster("abci"));
  const Cluster c = loadClusterText(base + "implementation:\n  paths:\n    point_to_point:\n"
                                           "      - {level: rack, alpha: 40 us, bandwidth: 2.5 GB/s}\n", "paths");
  const int rack = c.levelBetween(0, c.devicesPerNode);
  EXPECT_DOUBLE_EQ(c.alphaOn(CommPath::kPointToPoint, rack), 40e-6);
  EXPECT_DOUBLE_EQ(c.betaOn(CommPath::kPointToPoint, rack), 1 / 2.5e9);
  EXPECT_EQ(c.alphaOn(CommPath::kGradientAllreduce, rack), c.levels[rack].alpha);
  EXPECT_EQ(c.betaOn(CommPath::kPointToPoint, 0), c.levels[0].beta);
  EXPECT_FALSE(c.implementation.isIdentity());
}

TEST(ClusterYaml, WireConversionRatesAreReadWithUnitsAndChecked) {
  const std::string base = clusterYaml(loadCluster("abci"));
  const Cluster c = loadClusterText(base + "implementation:\n  wire_conversion: {f16: 11 GB/s}\n", "rates");
  EXPECT_DOUBLE_EQ(c.implementation.wireConversion.f16, 11e9);
  EXPECT_EQ(c.implementation.wireConversion.bf16, 0);
  EXPECT_FALSE(c.implementation.isIdentity());
  try {
    loadClusterText(base + "implementation:\n  wire_conversion: {bf16: 10 B/s}\n", "slow.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("slow.yaml: implementation.wire_conversion.bf16 (bytes/s): expected a value in "
                                         "[1e+06, 1e+15], found 10"),
              std::string::npos)
        << e.what();
  }
}

TEST(ClusterYaml, TheCommunicationThreadsSliceIsKeptAndChecked) {
  const std::string base = clusterYaml(loadCluster("abci"));
  EXPECT_FALSE(loadCluster("abci").implementation.commThreadSlice.has_value()) << "a preset records none";
  const Cluster c = loadClusterText(base + "implementation:\n  comm_thread_slice: 100 us\n", "sliced");
  ASSERT_TRUE(c.implementation.commThreadSlice.has_value());
  EXPECT_DOUBLE_EQ(*c.implementation.commThreadSlice, 1e-4);
  const Cluster again = loadClusterText(clusterYaml(c), "again");
  ASSERT_TRUE(again.implementation.commThreadSlice.has_value());
  EXPECT_DOUBLE_EQ(*again.implementation.commThreadSlice, 1e-4);
  const Cluster kernels = loadClusterText(base + "implementation:\n  comm_thread_slice: 0\n", "kernels");
  EXPECT_EQ(kernels.implementation.commThreadSlice.value_or(-1), 0) << "0, the kernel's own slice, is a value";
  expectRefused(base + "implementation:\n  comm_thread_slice: 1 s\n", "odd.yaml",
                "odd.yaml: implementation.comm_thread_slice: expected a value in [0, 0.1], found 1");
}

TEST(ClusterYaml, SkewAndMemoryEfficienciesAreChecked) {
  const std::string base = clusterYaml(loadCluster("abci"));
  auto refused = [](const std::string& text, const std::string& expected) { expectRefused(text, "odd.yaml", expected); };
  refused(base + "implementation:\n  skew: 1.5\n", "odd.yaml: implementation.skew: expected a value in [0, 1], found 1.5");
  refused(base + "implementation:\n  skew_beside: -0.5\n",
          "odd.yaml: implementation.skew_beside: expected a value in [0, 1], found -0.5");
  refused(base + "implementation:\n  sync_wait: -0.001\n",
          "odd.yaml: implementation.sync_wait: expected a value in [0, 1], found -0.001");
  refused(base + "implementation:\n  sync_wait_beside: 2\n",
          "odd.yaml: implementation.sync_wait_beside: expected a value in [0, 1], found 2");
  refused(base + "implementation:\n  handoff_wait: -1e-3\n",
          "odd.yaml: implementation.handoff_wait: expected a value in [0, 1], found -0.001");
  refused(base + "implementation:\n  overlap: {hidden: 0.5, slowdown: 1.2, chunked: 2}\n",
          "odd.yaml: implementation.overlap.chunked: expected a value in [0, 1], found 2");
  // Without `chunked` (a file from before it was measured) the engine's chunks hide as `hidden`.
  const Cluster old = loadClusterText(base + "implementation:\n  overlap: {hidden: 0.5, slowdown: 1.2}\n", "old");
  EXPECT_FALSE(old.implementation.overlap.chunked.has_value());
  EXPECT_FALSE(old.implementation.overlap.forward.has_value());
  refused(base + "implementation:\n  overlap: {hidden: 0.5, slowdown: 1.2, forward: 0}\n",
          "odd.yaml: implementation.overlap.forward: expected a value in [0.0001, 1], found 0");
  EXPECT_DOUBLE_EQ(old.implementation.overlap.whileChunked(), 0.5);
  const Cluster c = loadClusterText(base + "implementation:\n  skew: 0.05\n", "skewed");
  EXPECT_DOUBLE_EQ(c.implementation.skew, 0.05);
  EXPECT_FALSE(c.implementation.isIdentity());
  auto withKinds = [&](const std::string& kinds) { return withDeviceEntry(base, "  memory_efficiency:\n" + kinds); };
  refused(withKinds("    pool3d: {forward: 0, backward: 1}\n"),
          "odd.yaml: device.memory_efficiency.pool3d.forward: expected a value in [0.0001, 100], found 0");
  refused(withKinds("    pool4d: {forward: 1, backward: 1}\n"), "pool4d");
  const Cluster k = loadClusterText(withKinds("    pool3d: {forward: 0.03, backward: 0.2}\n"), "kinds");
  EXPECT_DOUBLE_EQ(k.device.memoryEfficiency[static_cast<int>(MemoryKind::kPool3d)][0], 0.03);
  EXPECT_DOUBLE_EQ(k.device.memoryEfficiency[static_cast<int>(MemoryKind::kPool3d)][1], 0.2);
  EXPECT_DOUBLE_EQ(k.device.memoryEfficiency[static_cast<int>(MemoryKind::kPool2d)][0], 1);
  EXPECT_FALSE(k.device.memoryEfficiency.flat[static_cast<int>(MemoryKind::kPool3d)][0]);
  refused(withKinds("    pool3d: {forward: 0.03, backward: 0.2, forward_flat: 2}\n"), "forward_flat");
  const Cluster f = loadClusterText(withKinds("    pool3d: {forward: 0.03, backward: 1, forward_flat: true}\n"), "flat");
  EXPECT_TRUE(f.device.memoryEfficiency.flat[static_cast<int>(MemoryKind::kPool3d)][0]);
  EXPECT_FALSE(f.device.memoryEfficiency.flat[static_cast<int>(MemoryKind::kPool3d)][1]);
  const Cluster again = loadClusterText(clusterYaml(f), "written flat");
  EXPECT_TRUE(again.device.memoryEfficiency.flat[static_cast<int>(MemoryKind::kPool3d)][0]);
  EXPECT_FALSE(again.device.memoryEfficiency.flat[static_cast<int>(MemoryKind::kPool3d)][1]);
  EXPECT_DOUBLE_EQ(again.device.memoryEfficiency[static_cast<int>(MemoryKind::kPool3d)][0], 0.03);
  refused(withDeviceEntry(base, "  kernels:\n    conv2d:\n      one_sample_half_rate_rows: -4\n"), "odd.yaml: device.kernels.conv2d.one_sample_half_rate_rows: expected a value in [0, 1e+09], found -4");
  refused(withDeviceEntry(base, "  kernels:\n    conv2d:\n      half_rate_depth: -1\n"), "odd.yaml: device.kernels.conv2d.half_rate_depth: expected a value in [0, 1e+09], found -1");
  refused(withDeviceEntry(base, "  kernels:\n    conv3d:\n      narrow_weight_share: 0\n"), "odd.yaml: device.kernels.conv3d.narrow_weight_share: expected a value in [0.001, 1], found 0");
  auto withTraffic = [&](const std::string& traffic) {
    return withDeviceEntry(base, "  weight_gradient_traffic: " + traffic + "\n");
  };
  refused(withTraffic("{per_pass: 2, per_sample: -1}"),
          "odd.yaml: device.weight_gradient_traffic.per_sample: expected a value in [0, 64], found -1");
  refused(withTraffic("2"), "weight_gradient_traffic");
  refused(withTraffic("{per_pass: 2, per_smaple: 1}"), "per_smaple");
  const Cluster t = loadClusterText(withTraffic("{per_pass: 2}"), "traffic");
  EXPECT_EQ(t.device.weightGradientTraffic.perPass, 2);
  EXPECT_EQ(t.device.weightGradientTraffic.perSample, 0);
  EXPECT_EQ(t.device.weightGradientTraffic.oneSample, -1);  // as a batch
  refused(withTraffic("{per_pass: 2, one_sample: 65}"),
          "odd.yaml: device.weight_gradient_traffic.one_sample: expected a value in [-1, 64], found 65");
  refused(withDeviceEntry(base, "  forward_weight_traffic: -2\n"), "odd.yaml: device.forward_weight_traffic: expected a value in [0, 64], found -2");
}

TEST(ClusterYaml, SpeedProbeRoundTripsAndIsChecked) {
  const Cluster c = loadClusterText(withDeviceEntry(clusterYaml(loadCluster("abci")), "  speed_probe: 12 ms\n"), "probe");
  EXPECT_DOUBLE_EQ(c.device.speedProbe, 0.012);
  EXPECT_DOUBLE_EQ(loadClusterText(clusterYaml(c), "again").device.speedProbe, 0.012);
  EXPECT_EQ(loadCluster("abci").device.speedProbe, 0);  // presets are not measured
  EXPECT_EQ(clusterYaml(loadCluster("abci")).find("speed_probe"), std::string::npos);
  expectRefused(withDeviceEntry(clusterYaml(loadCluster("abci")), "  speed_probe: 90\n"), "slow.yaml",
                "slow.yaml: device.speed_probe: expected a value in [0, 60], found 90");
}

// A rank's cache share and a kernel's rows left for resident weights: read, written, checked,
// and a call whose weights are resident runs nearer its curve's rate.
TEST(ClusterYaml, CacheShareAndResidentRowsRoundTripAndAreChecked) {
  const std::string base = clusterYaml(loadCluster("abci"));
  EXPECT_EQ(base.find("cache_share"), std::string::npos);  // presets: not measured
  const Cluster c = loadClusterText(withDeviceEntry(base, "  cache_share: 24 MiB\n  kernels:\n    fully_connected:\n"
                                                          "      half_rate_rows: 4\n      resident_rows_share: 0.4\n"),
                                    "cached");
  EXPECT_DOUBLE_EQ(c.device.cacheShare, 24.0 * (1 << 20));
  const KernelCurves& fc = c.device.kernels[static_cast<int>(Kernel::kFullyConnected)];
  EXPECT_DOUBLE_EQ(fc.residentRowsShare, 0.4);
  const Cluster again = loadClusterText(clusterYaml(c), "again");
  EXPECT_DOUBLE_EQ(again.device.cacheShare, c.device.cacheShare);
  EXPECT_DOUBLE_EQ(again.device.kernels[static_cast<int>(Kernel::kFullyConnected)].residentRowsShare, 0.4);
  EXPECT_TRUE(c.device.weightsMayStayResident());
  // A quarter of a 96 MiB working set stays; over 2 rows at 4 half-rate rows: resident, 4 x 0.4.
  EXPECT_DOUBLE_EQ(c.device.residentShare(96.0 * (1 << 20)), 0.25);
  EXPECT_DOUBLE_EQ(c.device.residentShare(8.0 * (1 << 20)), 1);
  EXPECT_DOUBLE_EQ(fc.shapeShare(2, false, 0, false, 1), 2 / (2 + 1.6));
  EXPECT_DOUBLE_EQ(fc.shapeShare(2, false, 0, false, 0), 2 / (2 + 4.0));
  const auto refused = [&](const std::string& entry, const std::string& expected) {
    expectRefused(withDeviceEntry(base, entry), "bad.yaml", expected);
  };
  refused("  cache_share: -1 MiB\n", "bad.yaml: device.cache_share");
  refused("  kernels:\n    conv2d:\n      resident_rows_share: 1.5\n",
          "bad.yaml: device.kernels.conv2d.resident_rows_share: expected a value in [0, 1], found 1.5");
}

// A kernel's strided share: read, written, checked, and paid by oneDNN's strided calls alone.
TEST(ClusterYaml, StridedShareRoundTripsAndIsChecked) {
  const std::string base = clusterYaml(loadCluster("abci"));
  EXPECT_EQ(base.find("strided_share"), std::string::npos);  // presets: none
  const Cluster c = loadClusterText(
      withDeviceEntry(base, "  kernels:\n    conv2d:\n      strided_share: 0.6\n"), "strided");
  const KernelCurves& conv = c.device.kernels[static_cast<int>(Kernel::kConv2d)];
  EXPECT_DOUBLE_EQ(conv.stridedShare, 0.6);
  EXPECT_DOUBLE_EQ(
      loadClusterText(clusterYaml(c), "again").device.kernels[static_cast<int>(Kernel::kConv2d)].stridedShare,
      0.6);
  EXPECT_DOUBLE_EQ(conv.shapeShare(1e4, false, 0, false, 0, true), 0.6);
  EXPECT_DOUBLE_EQ(conv.shapeShare(1e4, false, 0, false, 0, false), 1);
  EXPECT_DOUBLE_EQ(conv.shapeShare(1e4, true, 0, false, 0, true), 1);  // LibTorch's own kernel: not oneDNN's
  EXPECT_DOUBLE_EQ(c.device.shapeFactor(static_cast<int>(Kernel::kConv2d), 1e4, false, 0, false, 0, true),
                   0.6);
  expectRefused(withDeviceEntry(base, "  kernels:\n    conv2d:\n      strided_share: 0\n"), "bad.yaml",
                "bad.yaml: device.kernels.conv2d.strided_share: expected a value in [0.001, 1], found 0");
}

TEST(ClusterYaml, CoreSharingRoundTripsAndIsChecked) {
  const std::string base = clusterYaml(loadCluster("abci"));
  EXPECT_EQ(base.find("sharing"), std::string::npos);  // presets: a device per rank
  const Cluster c = loadClusterText(withDeviceEntry(base, "  sharing: {ranks: 2, alone_speedup: 1.25}\n"), "shared");
  EXPECT_EQ(c.device.sharing.ranks, 2);
  EXPECT_DOUBLE_EQ(c.device.sharing.aloneSpeedup, 1.25);
  const Cluster again = loadClusterText(clusterYaml(c), "again");
  EXPECT_EQ(again.device.sharing.ranks, 2);
  EXPECT_DOUBLE_EQ(again.device.sharing.aloneSpeedup, 1.25);
  const auto refused = [&](const std::string& entry, const std::string& expected) {
    expectRefused(withDeviceEntry(base, "  sharing: " + entry + "\n"), "bad.yaml", expected);
  };
  refused("{ranks: 2, alone_speedup: 0.9}", "bad.yaml: device.sharing.alone_speedup: expected a value in [1, 64], found 0.9");
  refused("{ranks: 0, alone_speedup: 2}", "ranks");
  refused("{ranks: 2, alone: 2}", "alone");
}

TEST(ClusterYaml, TimeSharingRoundTripsAndIsChecked) {
  const std::string base = clusterYaml(loadCluster("abci"));
  EXPECT_EQ(base.find("time_sharing"), std::string::npos);  // presets: a core (a GPU) per rank
  const Cluster c = loadClusterText(
      withDeviceEntry(base, "  time_sharing: {ranks: 2, shared: 1.96, slice: 4.5 ms}\n"), "shared");
  EXPECT_EQ(c.device.timeSharing.ranks, 2);
  EXPECT_DOUBLE_EQ(c.device.timeSharing.shared, 1.96);
  EXPECT_DOUBLE_EQ(c.device.timeSharing.slice, 4.5e-3);
  const Cluster again = loadClusterText(clusterYaml(c), "again");
  EXPECT_EQ(again.device.timeSharing.ranks, 2);
  EXPECT_DOUBLE_EQ(again.device.timeSharing.shared, 1.96);
  EXPECT_DOUBLE_EQ(again.device.timeSharing.slice, 4.5e-3);
  // Without `ranks`: measured with one rank a node, no job shares less.
  EXPECT_EQ(loadClusterText(withDeviceEntry(base, "  time_sharing: {shared: 2, slice: 1 ms}\n"), "one")
                .device.timeSharing.ranks,
            1);
  const auto refused = [&](const std::string& entry, const std::string& expected) {
    expectRefused(withDeviceEntry(base, "  time_sharing: " + entry + "\n"), "bad.yaml", expected);
  };
  refused("{ranks: 2, shared: 0.9, slice: 0.004}",
          "bad.yaml: device.time_sharing.shared: expected a value in [1, 64], found 0.9");
  refused("{ranks: 2, shared: 2, slice: 0}",
          "bad.yaml: device.time_sharing.slice: expected a value in [1e-06, 10], found 0");
  refused("{ranks: 2, shared: 2}", "slice");
  refused("{ranks: 0, shared: 2, slice: 1 ms}", "ranks");
  refused("{ranks: 2, shared: 2, slice: 1 ms, span: 3}", "span");
}

// A device twice as slow takes twice as long for every pass: compute-bound, memory-bound and
// the per-call overhead alike.
TEST(Device, SlowedByScalesEveryRateAndTheOverhead) {
  Device d = loadCluster("local").device;
  d.callOverhead = 5e-6;
  d.speedProbe = 0.01;
  d.bandwidthCurve = {{1e4, 50e9}, {1e8, 10e9}};
  d.prepare();
  const Device s = d.slowedBy(2);
  EXPECT_DOUBLE_EQ(s.peak("fp32"), d.peak("fp32") / 2);
  EXPECT_DOUBLE_EQ(s.memoryBandwidth, d.memoryBandwidth / 2);
  EXPECT_DOUBLE_EQ(s.callOverhead, 1e-5);
  EXPECT_DOUBLE_EQ(s.speedProbe, 0.02);
  for (const double bytes : {1e3, 1e6, 1e9}) EXPECT_DOUBLE_EQ(s.secondsPerByte(bytes), 2 * d.secondsPerByte(bytes));
  EXPECT_DOUBLE_EQ(s.efficiencyAt(1e9), d.efficiencyAt(1e9));  // a pass's efficiency is the same
}

TEST(ClusterYaml, PathLinkOnAnUnknownLevelNamesIt) {
  const std::string base = clusterYaml(loadCluster("abci"));
  try {
    loadClusterText(base + "implementation:\n  paths:\n    collectives:\n      - {level: moon, alpha: 1 us, beta: 1e-9}\n",
                    "moon.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("moon.yaml: implementation.paths.collectives (moon): expected the name of one of "
                                         "the network's levels"),
              std::string::npos)
        << e.what();
  }
}

TEST(ClusterYaml, UserFileLoads) {
  const Cluster c = loadCluster(kData + "/two_hosts.yaml");
  EXPECT_EQ(c.totalDevices(), 2);
  EXPECT_DOUBLE_EQ(c.levels[1].bandwidth(), 1.25e8);
  EXPECT_EQ(c.levelBetween(0, 1), 1);
}

TEST(ClusterYaml, BadValueNamesFileLineAndKey) {
  try {
    loadCluster(kData + "/bad_cluster.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad_cluster.yaml:6:21: device.memory_bandwidth: expected a number with an optional unit"),
              std::string::npos) << e.what();
  }
}

TEST(ClusterYaml, InconsistentLevelsAreRejected) {
  const std::string text = R"(name: x
device: {name: d, peak_flops: {fp32: 1 TFLOP/s}, memory: 1 GB, memory_bandwidth: 1 GB/s}
devices_per_node: 4
nodes: 4
network:
  - {name: a, alpha: 1 us, bandwidth: 1 GB/s, ranks: 4}
  - {name: b, alpha: 1 us, bandwidth: 1 GB/s, ranks: 6}
)";
  EXPECT_THROW(loadClusterText(text, "inline"), ConfigError);
}

TEST(ClusterYaml, LinksAreCountedAndChecked) {
  const std::string head = R"(name: x
device: {name: d, peak_flops: {fp32: 1 TFLOP/s}, memory: 1 GB, memory_bandwidth: 1 GB/s}
devices_per_node: 4
nodes: 4
network:
  - {name: a, alpha: 1 us, bandwidth: 10 GB/s, ranks: node}
)";
  const Cluster c = loadClusterText(head + "  - {name: b, alpha: 1 us, bandwidth: 100 Gbit/s, links: 2, ranks: all}\n", "inline");
  EXPECT_EQ(c.levels[0].links, 1);
  EXPECT_EQ(c.levels[1].links, 2);
  EXPECT_DOUBLE_EQ(c.levels[1].injectionBandwidth(), 25e9);
  try {
    loadClusterText(head + "  - {name: b, alpha: 1 us, bandwidth: 1 GB/s, links: 0, ranks: all}\n", "inline");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("network[1].links"), std::string::npos) << e.what();
  }
}

TEST(Presets, UnknownNameListsThePresets) {
  try {
    loadCluster("frontier");
    FAIL();
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown cluster 'frontier': the presets are abci, summit"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace paraxis::hw
