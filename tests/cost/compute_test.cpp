#include "cost/compute.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

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

// A 3x3 convolution padded by 1 skips 2 of its 3 x rows taps along each dimension at the edges;
// split along a dimension, its windows compute them: 2 rows -> 1.5x, 16 rows -> 48/46.
TEST(Compute, ASplitConvolutionComputesItsWindowsPaddingTaps) {
  for (const std::int64_t rows : {2, 16}) {
    graph::ModelBuilder b("t", graph::TensorShape{8, {rows, 4}});
    const int conv = b.conv("c", 0, {.filters = 8, .kernel = {3}, .padding = {1}});
    const int wide = b.conv("w", conv, {.filters = 8, .kernel = {3}, .stride = {2}, .padding = {0}});
    const graph::Model m = std::move(b).build();
    const graph::TensorShape& x = m.layer(0).output;
    const double share = 2.0 / (3.0 * static_cast<double>(rows));
    EXPECT_DOUBLE_EQ(paddedTapShare(m.layer(conv), x, 0), share);
    EXPECT_DOUBLE_EQ(paddedTapShare(m.layer(conv), x, 1), 2.0 / 12);
    EXPECT_EQ(paddedTapShare(m.layer(wide), m.layer(conv).output, 0), 0);  // no padding, no taps on it
    EXPECT_DOUBLE_EQ(windowTapScale(m.layer(conv), x, 0), 1 / (1 - share));
    EXPECT_DOUBLE_EQ(windowTapScale(m.layer(conv), x, 1), 1 / (1 - 2.0 / 12));
    EXPECT_EQ(windowTapScale(m.layer(wide), m.layer(conv).output, 0), 1);
  }
  // Stride 2, a 7-tap kernel padded by 3 over 64 rows (ResNet's stem): 6 of its 7 x 32 taps.
  graph::ModelBuilder b("stem", graph::TensorShape{3, {64, 64}});
  const int stem = b.conv("stem", 0, {.filters = 8, .kernel = {7}, .stride = {2}, .padding = {3}});
  const graph::Model m = std::move(b).build();
  EXPECT_DOUBLE_EQ(paddedTapShare(m.layer(stem), m.layer(0).output, 0), 6.0 / (7 * 32));
}

// The prepared path the oracle runs must give what the reference formulas give, for every
// layer of real models, at random shares, on a device whose curve and floor both matter.
void expectPreparedEqualsReference(const hw::Cluster& cluster) {
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
        // The last trial over one sample (a device's one-sample kernels).
        LocalShare share{.samples = trial == 2 ? 1.0 : static_cast<double>(samples(rng))};
        if (trial > 0) {
          share.spatial = fraction(rng);
          share.inputSpatial = fraction(rng);
          share.inputChannels = fraction(rng);
          share.outputChannels = fraction(rng);
          share.tapScale = 1 + fraction(rng);
        }
        const graph::Layer& input = layer.inputs.empty() ? layer : m.layer(layer.inputs.front());
        const double inElems = static_cast<double>(input.counts.activationBytes / m.bytesPerElement());
        const LayerTimes want =
            layerTimes(cluster.device, peak,
                       layerWork(layer, inElems, share, m.bytesPerElement(), cluster.device,
                                 static_cast<double>(input.output.channels), nativeKernelRule(layer, input.output)));
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

TEST(Compute, PreparedProfileEqualsReference) { expectPreparedEqualsReference(hw::loadCluster("abci")); }

// The same with curves per pass and kernel kind and a bandwidth by size, as calibrate fits.
TEST(Compute, PreparedProfileEqualsReferenceWithKernelCurves) {
  hw::Cluster c = hw::loadCluster("abci");
  c.device.backwardEfficiency = {{1e6, 0.02}, {1e9, 0.4}};
  c.device.kernels[static_cast<int>(hw::Kernel::kConv3d)] = {{{1e8, 0.1}, {1e10, 0.3}}, {{1e8, 0.05}, {1e10, 0.2}}};
  c.device.kernels[static_cast<int>(hw::Kernel::kFullyConnected)].forward = {{1e5, 0.01}, {1e8, 0.2}};
  c.device.bandwidthCurve = {{1e4, 2e12}, {1e8, 5e11}};
  c.device.memoryEfficiency[static_cast<int>(hw::MemoryKind::kPool3d)][0] = 0.03;
  c.device.memoryEfficiency[static_cast<int>(hw::MemoryKind::kPool2d)][1] = 0.2;
  c.device.memoryEfficiency[static_cast<int>(hw::MemoryKind::kNormalization)][0] = 0.25;
  c.device.memoryEfficiency[static_cast<int>(hw::MemoryKind::kElementwise)][1] = 1.5;
  c.device.memoryEfficiency.flat[static_cast<int>(hw::MemoryKind::kPool3d)][0] = true;
  c.device.memoryEfficiency.flat[static_cast<int>(hw::MemoryKind::kNormalization)][1] = true;
  c.device.kernels[static_cast<int>(hw::Kernel::kConv2d)].halfRateRows = 96;
  c.device.kernels[static_cast<int>(hw::Kernel::kFullyConnected)].halfRateRows = 8;
  c.device.kernels[static_cast<int>(hw::Kernel::kConv2d)].oneSampleHalfRateRows = 6;
  c.device.kernels[static_cast<int>(hw::Kernel::kConv2d)].halfRateDepth = 48;
  c.device.kernels[static_cast<int>(hw::Kernel::kFullyConnected)].halfRateDepth = 300;
  c.device.kernels[static_cast<int>(hw::Kernel::kConv2d)].narrowWeightDepth = 100;  // LeNet's conv1 (25) is narrower
  c.device.kernels[static_cast<int>(hw::Kernel::kConv2d)].narrowWeightShare = 0.5;
  c.device.kernels[static_cast<int>(hw::Kernel::kFullyConnected)].narrowWeightDepth = 128;
  c.device.kernels[static_cast<int>(hw::Kernel::kFullyConnected)].narrowWeightShare = 0.25;
  c.device.kernels[static_cast<int>(hw::Kernel::kConv2d)].stridedShare = 0.7;  // ResNet-50's stride-2 layers
  c.device.weightGradientTraffic = {3, 1.5, 2};
  c.device.forwardWeightTraffic = 4;
  c.device.nativeColumnTraffic = 5;
  c.device.prepare();
  expectPreparedEqualsReference(c);
}

// A convolution over a stride of 2 runs at the kernel's strided share of the rate of an
// unstrided one of the same shape; its unstrided twin and a native call pay nothing.
TEST(Compute, AStridedConvolutionRunsAtItsShare) {
  graph::ModelBuilder b("t", graph::TensorShape{64, {16, 16}});
  const int plain = b.conv("plain", 0, {.filters = 64, .kernel = {3}, .padding = {1}, .bias = false});
  const int strided =
      b.conv("strided", 0, {.filters = 64, .kernel = {3}, .stride = {2}, .padding = {1}, .bias = false});
  const graph::Model m = std::move(b).build();
  EXPECT_FALSE(isStrided(m.layer(plain)));
  EXPECT_TRUE(isStrided(m.layer(strided)));
  EXPECT_FALSE(isStrided(m.layer(0)));
  hw::Device d{.memoryBandwidth = 1e15, .efficiency = {{1e3, 0.5}, {1e12, 0.5}}};
  d.kernels[static_cast<int>(hw::Kernel::kConv2d)].stridedShare = 0.5;
  d.prepare();
  const LayerWork work = layerWork(m.layer(strided), 64 * 256, {.samples = 8}, 4, d);
  EXPECT_TRUE(work.forward.strided && work.backwardData.strided && work.backwardWeight.strided);
  const int conv = static_cast<int>(hw::Kernel::kConv2d);
  PassWork unstrided = work.forward;
  unstrided.strided = false;
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, work.forward, false, conv),
                   2 * passSeconds(d, 1e12, unstrided, false, conv));
  PassWork native = work.forward;
  native.native = true;
  unstrided.native = true;
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, native, false, conv), passSeconds(d, 1e12, unstrided, false, conv));
}

// A 3x3 512->512 convolution over 2x2 maps (9 MiB of weights, as ResNet-18's last ones at
// 64^2) and a fully connected layer after it.
struct ConvThenDense {
  graph::Model model;
  int conv = 0, fc = 0;
  ConvThenDense() {
    graph::ModelBuilder b("t", graph::TensorShape{512, {2, 2}});
    conv = b.conv("c", 0, {.filters = 512, .kernel = {3}, .padding = {1}});
    fc = b.fc("fc", b.flatten("f", conv), 1000);
    model = std::move(b).build();
  }
};

// A convolution's weight-gradient pass moves its weights per pass and per sample
// (hw::WeightGradientTraffic): with large weights the pass is memory-bound, and a spatial
// split, which leaves every rank all the weights, does not shorten it. A fully connected
// layer's weight gradient is one matrix product: its weights move once.
TEST(Compute, WeightGradientStreamsTheWeightsPerSample) {
  const ConvThenDense net;
  const graph::Model& m = net.model;
  const int conv = net.conv, fc = net.fc;
  hw::Device d{.memoryBandwidth = 1e10, .efficiency = {{1, 0.5}}};
  d.weightGradientTraffic = {3, 2};
  d.prepare();
  const double weights = static_cast<double>(m.layer(conv).counts.params) * 4;  // 3x3 512->512 and a bias
  const double io = 2 * 8 * 512 * 4 * 4;  // input and output of 8 samples, 4 positions each
  const LayerWork whole = layerWork(m.layer(conv), 512 * 4, {.samples = 8}, 4, d);
  EXPECT_DOUBLE_EQ(whole.backwardWeight.bytes, io + 19 * weights);  // 3 + 2 x 8
  EXPECT_DOUBLE_EQ(whole.forward.bytes, io + weights);
  const LayerWork half = layerWork(m.layer(conv), 512 * 4, {.samples = 8, .spatial = 0.5, .inputSpatial = 0.5}, 4, d);
  EXPECT_DOUBLE_EQ(half.backwardWeight.bytes, io / 2 + 19 * weights);
  EXPECT_DOUBLE_EQ(layerTimes(d, 1e11, half).backwardWeight, (io / 2 + 19 * weights) / 1e10);
  // The default moves the weights once.
  EXPECT_DOUBLE_EQ(layerWork(m.layer(conv), 512 * 4, {.samples = 8}, 4).backwardWeight.bytes, io + weights);
  const LayerWork dense = layerWork(m.layer(fc), 2048, {.samples = 8}, 4, d);
  EXPECT_DOUBLE_EQ(dense.backwardWeight.bytes, dense.forward.bytes);
}

// A convolution's forward over a batch reorders its weights before its arithmetic
// (hw::Device::forwardWeightTraffic), a split's share of them where a channel split slices
// them; one sample runs a kernel that reads them in place, and reorders nothing; neither does
// a fully connected layer. At one sample the weight pass moves them WeightGradientTraffic::oneSample times.
TEST(Compute, ForwardReordersAConvolutionsWeightsOverABatch) {
  const ConvThenDense net;
  const graph::Model& m = net.model;
  const int conv = net.conv, fc = net.fc;
  hw::Device d{.memoryBandwidth = 1e10, .efficiency = {{1, 0.5}}};
  d.forwardWeightTraffic = 4;
  d.weightGradientTraffic = {3, 2, 1.5};
  d.prepare();
  const double weights = static_cast<double>(m.layer(conv).counts.params) * 4;
  const LayerWork batch = layerWork(m.layer(conv), 512 * 4, {.samples = 8}, 4, d);
  EXPECT_DOUBLE_EQ(batch.forward.serialBytes, 4 * weights);
  const double compute = batch.forward.flops / (1e11 * 0.5);
  EXPECT_DOUBLE_EQ(layerTimes(d, 1e11, batch).forward, std::max(compute, batch.forward.bytes / 1e10) + 4 * weights / 1e10);
  const LayerWork sliced = layerWork(m.layer(conv), 512 * 4, {.samples = 8, .inputChannels = 0.5}, 4, d);
  EXPECT_DOUBLE_EQ(sliced.forward.serialBytes, 2 * weights);
  const LayerWork one = layerWork(m.layer(conv), 512 * 4, {.samples = 1}, 4, d);
  EXPECT_EQ(one.forward.serialBytes, 0);
  const double io = 2 * 512 * 4 * 4;  // input and output of one sample
  EXPECT_DOUBLE_EQ(one.backwardWeight.bytes, io + 1.5 * weights);
  EXPECT_EQ(layerWork(m.layer(fc), 2048, {.samples = 8}, 4, d).forward.serialBytes, 0);
  EXPECT_EQ(layerWork(m.layer(conv), 512 * 4, {.samples = 8}, 4).forward.serialBytes, 0);  // the default: none
}

// A matrix kernel over few rows runs at rows / (rows + halfRateRows) of its curve's rate.
TEST(Compute, FewRowsSlowAMatrixKernel) {
  hw::Device d{.memoryBandwidth = 1e15, .efficiency = {{1, 0.5}}};
  const int conv = static_cast<int>(hw::Kernel::kConv2d);
  d.kernels[conv].halfRateRows = 100;
  d.prepare();
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, {1e9, 1, 100}, false, conv), 4e-3);   // half of 0.5
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, {1e9, 1, 300}, false, conv), 1e9 / (1e12 * 0.5 * 0.75));
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, {1e9, 1, 100}, false, static_cast<int>(hw::Kernel::kConv3d)), 2e-3);
  // A native call runs LibTorch's own kernel, at its own half-rate rows where fitted.
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, {1e9, 1, 100, 1, 0, true}, false, conv), 4e-3);  // not fitted: as a batch
  d.kernels[conv].oneSampleHalfRateRows = 300;
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, {1e9, 1, 300, 1, 0, true}, false, conv), 4e-3);
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, {1e9, 1, 300, 1}, false, conv), 1e9 / (1e12 * 0.5 * 0.75));
  graph::ModelBuilder b("t", graph::TensorShape{8, {16, 16}});
  const int c = b.conv("c", 0, {.filters = 8, .kernel = {3}, .stride = {2}, .padding = {1}});
  const graph::Model m = std::move(b).build();
  const LayerWork w = layerWork(m.layer(c), 8 * 256, {.samples = 4, .spatial = 0.5}, 4);
  EXPECT_DOUBLE_EQ(w.forward.rows, 4 * 0.5 * 64);  // samples x its share of the 8x8 output positions
}

// A matrix kernel summing few terms per output runs at depth / (depth + halfRateDepth) of its
// curve's rate; a channel split's call sums over its share of the input channels.
TEST(Compute, ShallowReductionsSlowAMatrixKernel) {
  hw::Device d{.memoryBandwidth = 1e15, .efficiency = {{1, 0.5}}};
  const int conv = static_cast<int>(hw::Kernel::kConv2d);
  d.kernels[conv].halfRateDepth = 72;
  d.prepare();
  cost::PassWork deep{1e9, 1, 0};
  deep.depth = 216;
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, deep, false, conv), 1e9 / (1e12 * 0.5 * 0.75));
  deep.depth = 0;  // unknown: no such effect
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, deep, false, conv), 2e-3);
  graph::ModelBuilder b("t", graph::TensorShape{8, {16, 16}});
  const int c = b.conv("c", 0, {.filters = 16, .kernel = {3}, .padding = {1}});
  const int fc = b.fc("fc", b.flatten("f", c), 10);
  const graph::Model m = std::move(b).build();
  EXPECT_DOUBLE_EQ(reductionDepth(m.layer(c)), 8 * 9);  // input channels x kernel taps
  EXPECT_DOUBLE_EQ(reductionDepth(m.layer(fc)), 16 * 256);  // input features
  EXPECT_DOUBLE_EQ(reductionDepth(m.layer(c + 1)), 0);   // no matrix kernel
  const LayerWork whole = layerWork(m.layer(c), 8 * 256, {.samples = 4}, 4, d);
  const LayerWork split = layerWork(m.layer(c), 8 * 256, {.samples = 4, .inputChannels = 0.5}, 4, d);
  EXPECT_DOUBLE_EQ(whole.forward.depth, 72);
  EXPECT_DOUBLE_EQ(split.backwardData.depth, 36);
  // Half the FLOPs at two thirds of the rate (36 / 108 against 72 / 144): 3/4 of the time.
  const double wholeCompute = passSeconds(d, 1e12, whole.forward, false, conv) - d.callOverhead;
  const double splitCompute = passSeconds(d, 1e12, split.forward, false, conv) - d.callOverhead;
  EXPECT_NEAR(splitCompute / wholeCompute, 0.5 * (0.5 / (1.0 / 3)), 1e-12);
}

// A weight pass over narrow filters (fewer weights each than narrowWeightDepth) runs at
// narrowWeightShare of the rate: oneDNN's calls only, and neither the forward nor the data pass.
TEST(Compute, NarrowFiltersSlowTheWeightPassAlone) {
  hw::Device d{.memoryBandwidth = 1e15, .efficiency = {{1, 0.5}}};
  const int conv = static_cast<int>(hw::Kernel::kConv3d);
  d.kernels[conv].narrowWeightDepth = 128;
  d.kernels[conv].narrowWeightShare = 0.25;
  d.prepare();
  graph::ModelBuilder b("t", graph::TensorShape{4, {8, 8, 8}});
  const int narrow = b.conv("narrow", 0, {.filters = 16, .kernel = {3}, .padding = {1}});
  const int wide = b.conv("wide", narrow, {.filters = 16, .kernel = {3}, .padding = {1}});
  const graph::Model m = std::move(b).build();
  const LayerWork first = layerWork(m.layer(narrow), 4 * 512, {.samples = 4}, 4, d);
  const LayerWork second = layerWork(m.layer(wide), 16 * 512, {.samples = 4}, 4, d);
  hw::Device plain = d;
  plain.kernels[conv].narrowWeightDepth = 0;
  const LayerTimes t = layerTimes(d, 1e12, first), u = layerTimes(d, 1e12, second);
  const LayerTimes tPlain = layerTimes(plain, 1e12, first), uPlain = layerTimes(plain, 1e12, second);
  // 4 channels x 27 taps = 108 < 128: the weight pass at a quarter of the rate, the forward as it was.
  EXPECT_NEAR((t.backwardWeight - d.callOverhead) / (tPlain.backwardWeight - d.callOverhead), 4.0, 1e-12);
  EXPECT_DOUBLE_EQ(t.forward, tPlain.forward);
  // 16 x 27 = 432: every pass as it was.
  EXPECT_DOUBLE_EQ(u.backwardWeight, uPlain.backwardWeight);
  EXPECT_DOUBLE_EQ(u.backwardData, uPlain.backwardData);
  EXPECT_DOUBLE_EQ(u.forward, uPlain.forward);
  // LibTorch's own kernel (a native call) has no such path.
  PassWork native = first.backwardWeight;
  native.native = true;
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, native, true, conv), passSeconds(d, 1e12, first.forward, false, conv));
}

// A memory-bound kind streams at its fraction of the curve, forward and backward apart; its
// arithmetic runs at the peak, not on the matrix kernels' curve.
TEST(Compute, MemoryKindsStreamAtTheirFractionOfTheBandwidth) {
  hw::Device d{.memoryBandwidth = 1e9, .efficiency = {{1e3, 0.001}, {1e7, 0.001}, {1e9, 0.5}}};
  const int pool = static_cast<int>(hw::MemoryKind::kPool3d);
  d.memoryEfficiency[pool][0] = 0.25;
  d.memoryEfficiency[pool][1] = 0.5;
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, {1e3, 1e6}, false, -1, pool), 4e-3);
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, {1e3, 1e6}, true, -1, pool), 2e-3);
  // 1e6 FLOPs on the matrix curve (0.001 of the peak) would take 1 ms: a kind's take 1 us.
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e12, {1e6, 1e3}, false, -1, static_cast<int>(hw::MemoryKind::kElementwise)), 1e-6);
  EXPECT_NEAR(passSeconds(d, 1e12, {1e6, 1e3}), 1e-3, 1e-12);
  // Along a curve that runs small calls 4x faster, unless the pass is flat.
  d.bandwidthCurve = {{1e4, 4e9}, {1e8, 1e9}};
  d.prepare();
  EXPECT_NEAR(passSeconds(d, 1e12, {1e3, 1e4}, false, -1, pool), 1e4 / 4e9 / 0.25, 1e-15);
  d.memoryEfficiency.flat[pool][0] = true;
  EXPECT_NEAR(passSeconds(d, 1e12, {1e3, 1e4}, false, -1, pool), 1e4 / 1e9 / 0.25, 1e-15);
  EXPECT_NEAR(passSeconds(d, 1e12, {1e3, 1e4}, true, -1, pool), 1e4 / 4e9 / 0.5, 1e-15);  // backward: the curve
  graph::ModelBuilder b("t", graph::TensorShape{4, {8, 8, 8}});
  const int pooled = b.maxPool("p", b.conv("c", 0, {.filters = 4, .kernel = {3}, .padding = {1}}), {.kernel = {2}});
  const int dropped = b.dropout("d", b.relu("r", pooled));
  const graph::Model m = std::move(b).build();
  EXPECT_EQ(memoryKindOf(m.layer(pooled)), pool);
  EXPECT_EQ(memoryKindOf(m.layer(1)), -1);  // the convolution
  EXPECT_EQ(memoryKindOf(m.layer(dropped - 1)), static_cast<int>(hw::MemoryKind::kElementwise));
  EXPECT_EQ(memoryKindOf(m.layer(dropped)), static_cast<int>(hw::MemoryKind::kRandom));  // its mask's draws
}

// A kernel's curve is used for its layers only; backward passes take the backward curve.
TEST(Compute, KernelAndPassPickTheirCurve) {
  hw::Device d;
  d.memoryBandwidth = 1e18;
  d.efficiency = {{1, 0.5}};
  d.backwardEfficiency = {{1, 0.25}};
  d.kernels[static_cast<int>(hw::Kernel::kConv3d)] = {{{1, 0.1}}, {{1, 0.05}}};
  d.prepare();
  const double logFlops = std::log(1e9);
  EXPECT_EQ(d.efficiencyOf(-1, false, logFlops), 0.5);
  EXPECT_EQ(d.efficiencyOf(-1, true, logFlops), 0.25);
  EXPECT_EQ(d.efficiencyOf(static_cast<int>(hw::Kernel::kConv2d), true, logFlops), 0.25);
  EXPECT_EQ(d.efficiencyOf(static_cast<int>(hw::Kernel::kConv3d), false, logFlops), 0.1);
  EXPECT_EQ(d.efficiencyOf(static_cast<int>(hw::Kernel::kConv3d), true, logFlops), 0.05);
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e9, {1e9, 1}, true, static_cast<int>(hw::Kernel::kConv3d)), 20);
  // A native call's forward (LibTorch's own kernel) reads the kernel's native curve where it
  // has one; its backward passes the batched chain.
  const int conv3d = static_cast<int>(hw::Kernel::kConv3d), conv2d = static_cast<int>(hw::Kernel::kConv2d);
  d.kernels[conv3d].native = {{1, 0.02}};
  d.prepare();
  EXPECT_EQ(d.efficiencyOf(conv3d, false, logFlops, true), 0.02);
  EXPECT_EQ(d.efficiencyOf(conv3d, true, logFlops, true), 0.05);
  EXPECT_EQ(d.efficiencyOf(conv3d, false, logFlops, false), 0.1);
  EXPECT_EQ(d.efficiencyOf(conv2d, false, logFlops, true), 0.5);
  EXPECT_TRUE(d.backwardDiffers(conv3d, true));
  cost::PassWork native{1e9, 1};
  native.native = true;
  EXPECT_DOUBLE_EQ(passSeconds(d, 1e9, native, false, conv3d), 50);
  // The layer's whole pricing too: its forward on the native curve, its backward not reusing it.
  d.backwardEfficiency.clear();
  d.kernels[conv3d].backward.clear();
  d.prepare();
  cost::LayerWork w;
  w.kernel = conv3d;
  w.forward = native;
  w.backwardData = native;
  const cost::LayerTimes t = layerTimes(d, 1e9, w);
  EXPECT_DOUBLE_EQ(t.forward, 50);
  EXPECT_DOUBLE_EQ(t.backwardData, 10);  // the kernel's forward curve, 0.1 (no backward curve now)
}

// Which calls LibTorch runs with its own kernel, as Debian's torch 1.13 picks them
// (torch._C._select_conv_backend): CosmoFlow 64^3's conv2 over one sample has 32 x 32 x 32
// leading input elements (> 20,480) and runs oneDNN's kernel; conv1, conv3 and conv4
// (16,384, 16,384, 8,192) their native one; over two samples none. A 5x5 kernel runs oneDNN's
// at any batch, a transposed one the native one at any, an unstrided 1x1 one the native one
// below 16 samples, a fully connected layer a matrix-vector product over one sample.
TEST(Compute, NativeKernelAsLibTorchPicksIt) {
  const graph::Model cosmo = graph::buildZooModel("cosmoflow", {.spatial = {64}});
  auto native = [&](const std::string& name, const LocalShare& share) {
    const int i = cosmo.find(name);
    return runsNativeKernel(nativeKernelRule(cosmo.layer(i), cosmo.layer(cosmo.layer(i).inputs.front()).output), share);
  };
  EXPECT_TRUE(native("conv1", {.samples = 1}));
  EXPECT_FALSE(native("conv2", {.samples = 1}));
  EXPECT_TRUE(native("conv3", {.samples = 1}));
  EXPECT_TRUE(native("conv4", {.samples = 1}));
  for (const char* conv : {"conv1", "conv2", "conv3", "conv4"}) EXPECT_FALSE(native(conv, {.samples = 2})) << conv;
  EXPECT_TRUE(native("conv2", {.samples = 1, .inputSpatial = 0.5}));  // a spatial half: the local input counts
  EXPECT_TRUE(native("fc1", {.samples = 1}));
  EXPECT_FALSE(native("fc1", {.samples = 2}));

  graph::ModelBuilder b("t", graph::TensorShape{1, {28, 28}});
  const int wide = b.conv("wide", 0, {.filters = 6, .kernel = {5}, .padding = {2}});
  const int pointwise = b.conv("pointwise", wide, {.filters = 8, .kernel = {1}});
  const int strided = b.conv("strided", pointwise, {.filters = 8, .kernel = {1}, .stride = {2}});
  const int up = b.deconv("up", strided, {.filters = 4, .kernel = {2}, .stride = {2}});
  const graph::Model m = std::move(b).build();
  auto nativeIn = [&](int i, double samples) {
    return runsNativeKernel(nativeKernelRule(m.layer(i), m.layer(m.layer(i).inputs.front()).output), {.samples = samples});
  };
  EXPECT_FALSE(nativeIn(wide, 1));
  EXPECT_TRUE(nativeIn(pointwise, 8));
  EXPECT_FALSE(nativeIn(pointwise, 16));
  EXPECT_TRUE(nativeIn(strided, 1));
  EXPECT_FALSE(nativeIn(strided, 2));
  EXPECT_TRUE(nativeIn(up, 32));
  // Without a rule (a caller that knows no input shape) every one-sample call counts as native.
  EXPECT_TRUE(runsNativeKernel({}, {.samples = 1}));
  EXPECT_FALSE(runsNativeKernel({}, {.samples = 2}));
}

}  // namespace
}  // namespace paraxis::cost
