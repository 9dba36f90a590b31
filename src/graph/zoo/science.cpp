// Large-sample scientific models, in the spirit of the papers paraxis learns from (they are
// not bit-for-bit copies of any published code):
// - CosmoFlow (Mathuriya et al. 2018; MLPerf HPC): 3-D convolutions over a 4-channel dark-matter
//   volume, one conv + LeakyReLU + 2x max-pool stage per halving down to 4^3, then three dense
//   layers regressing 4 cosmological parameters.
// - A mesh-tangling fully convolutional network on 2048^2 single-channel meshes (Dryden et al.
//   2019): an encoder of conv-BN-ReLU pairs that halves the resolution three times, a decoder of
//   transposed convolutions back to full resolution, and per-pixel softmax cross-entropy.
// - FC-DenseNet-103 ("Tiramisu", Jegou et al. 2017) as used by Laanait et al. for 4D-STEM:
//   diffraction patterns in, a per-pixel regression (electron density) out.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "graph/zoo/builders.hpp"

namespace paraxis::graph::zoo {
namespace {

// Number of 2x halvings that bring `extent` down to 4 (at least one).
int halvingsTo4(std::int64_t extent) {
  int n = 0;
  while (extent > 4) {
    extent /= 2;
    ++n;
  }
  return std::max(n, 1);
}

struct DenseBlock {
  int full;     // the block's input concatenated with every new feature map
  int newMaps;  // the new feature maps only
};

// What the caller consumes: the down path needs `full`, the upsampling path `newMaps`
// (Jegou et al.); building only those keeps the graph free of dangling layers.
struct DenseOutputs {
  bool full;
  bool newMaps;
};

DenseBlock denseBlock(ModelBuilder& b, const std::string& p, int x, int layers, std::int64_t growth,
                      DenseOutputs wanted) {
  std::vector<int> fresh;
  int stack = x;
  for (int i = 0; i < layers; ++i) {
    const std::string q = fmt::format("{}.layer{}", p, i);
    int y = b.batchNorm(q + ".bn", stack);
    y = b.relu(q + ".relu", y);
    y = b.conv(q + ".conv", y, {.filters = growth, .kernel = {3}, .padding = {1}});
    y = b.dropout(q + ".dropout", y, 0.2);
    fresh.push_back(y);
    if (i + 1 < layers || wanted.full) stack = b.concat(q + ".concat", {stack, y});
  }
  const bool gather = wanted.newMaps && fresh.size() > 1;
  return {stack, gather ? b.concat(p + ".new", fresh) : fresh.back()};
}

}  // namespace

Model cosmoflow(const TensorShape& input, std::int64_t targets) {
  if (input.rank() != 3) {
    throw ShapeError(fmt::format("cosmoflow: needs a 3-D input, found {}", input.str()));
  }
  ModelBuilder b(fmt::format("cosmoflow-{}", input.spatial.front()), input);
  int x = b.input();
  const int stages = halvingsTo4(input.spatial.front());
  for (int i = 0; i < stages; ++i) {
    const std::int64_t filters = 32LL << std::min(i, 4);
    const std::string p = fmt::format("conv{}", i + 1);
    x = b.conv(p, x, {.filters = filters, .kernel = {3}, .padding = {1}});
    x = b.activation(p + ".act", x, {.function = ActivationFunction::kLeakyRelu, .slope = 0.3});
    x = b.maxPool(p + ".pool", x, {.kernel = {2}});
  }
  x = b.flatten("flatten", x);
  x = b.fc("fc1", x, 128);
  x = b.activation("fc1.act", x, {.function = ActivationFunction::kLeakyRelu, .slope = 0.3});
  x = b.dropout("fc1.dropout", x, 0.5);
  x = b.fc("fc2", x, 64);
  x = b.activation("fc2.act", x, {.function = ActivationFunction::kLeakyRelu, .slope = 0.3});
  x = b.dropout("fc2.dropout", x, 0.5);
  x = b.fc("output", x, targets);
  x = b.activation("output.tanh", x, {.function = ActivationFunction::kTanh});
  b.mseLoss("loss", x);
  return std::move(b).build();
}

Model meshFcn(const TensorShape& input, std::int64_t classes) {
  ModelBuilder b("mesh-fcn", input);
  int x = b.input();
  const std::int64_t widths[] = {32, 64, 128, 256};
  for (int level = 0; level < 4; ++level) {
    for (int i = 0; i < 2; ++i) {
      const std::string p = fmt::format("enc{}.{}", level, i);
      const std::int64_t stride = (level > 0 && i == 0) ? 2 : 1;
      x = b.conv(p + ".conv", x,
                 {.filters = widths[level], .kernel = {3}, .stride = {stride}, .padding = {1},
                  .bias = false});
      x = b.batchNorm(p + ".bn", x);
      x = b.relu(p + ".relu", x);
    }
  }
  for (int level = 2; level >= 0; --level) {
    const std::string p = fmt::format("dec{}", level);
    x = b.deconv(p + ".deconv", x,
                 {.filters = widths[level], .kernel = {4}, .stride = {2}, .padding = {1},
                  .bias = false});
    x = b.batchNorm(p + ".bn", x);
    x = b.relu(p + ".relu", x);
  }
  x = b.conv("classifier", x, {.filters = classes, .kernel = {1}});
  b.softmaxLoss("loss", x);
  return std::move(b).build();
}

Model tiramisu(const TensorShape& input, std::int64_t targets) {
  constexpr int kDown[] = {4, 5, 7, 10, 12};
  constexpr int kBottleneck = 15;
  constexpr std::int64_t kGrowth = 16;
  ModelBuilder b("tiramisu", input);
  int x = b.conv("conv0", b.input(), {.filters = 48, .kernel = {3}, .padding = {1}});
  std::vector<int> skips;
  for (int i = 0; i < 5; ++i) {
    const std::string p = fmt::format("down{}", i);
    x = denseBlock(b, p + ".block", x, kDown[i], kGrowth, {.full = true, .newMaps = false}).full;
    skips.push_back(x);
    const std::int64_t channels = b.shapeOf(x).channels;
    x = b.batchNorm(p + ".td.bn", x);
    x = b.relu(p + ".td.relu", x);
    x = b.conv(p + ".td.conv", x, {.filters = channels, .kernel = {1}});
    x = b.dropout(p + ".td.dropout", x, 0.2);
    x = b.maxPool(p + ".td.pool", x, {.kernel = {2}});
  }
  DenseBlock block = denseBlock(b, "bottleneck", x, kBottleneck, kGrowth, {.full = false, .newMaps = true});
  for (int i = 0; i < 5; ++i) {
    const std::string p = fmt::format("up{}", i);
    const int up = b.deconv(p + ".tu", block.newMaps,
                            {.filters = b.shapeOf(block.newMaps).channels, .kernel = {3},
                             .stride = {2}, .padding = {1}, .outputPadding = {1}});
    x = b.concat(p + ".skip", {up, skips[4 - i]});
    block = denseBlock(b, p + ".block", x, kDown[4 - i], kGrowth, {.full = i == 4, .newMaps = i < 4});
  }
  x = b.conv("head", block.full, {.filters = targets, .kernel = {1}});
  b.mseLoss("loss", x);
  return std::move(b).build();
}

}  // namespace paraxis::graph::zoo
