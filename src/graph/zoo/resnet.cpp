// ResNets as torchvision 0.14 defines them (v1.5: the stride sits on the 3x3 convolution of a
// bottleneck), and the CIFAR ResNet of He et al. 2016 (3 stages of 16/32/64 filters, 1x1
// projection shortcuts where the shape changes).
#include <fmt/format.h>

#include "core/error.hpp"
#include "graph/zoo/builders.hpp"

namespace paraxis::graph::zoo {
namespace {

ConvAttrs conv3x3(std::int64_t filters, std::int64_t stride) {
  return {.filters = filters, .kernel = {3}, .stride = {stride}, .padding = {1}, .bias = false};
}

ConvAttrs conv1x1(std::int64_t filters, std::int64_t stride) {
  return {.filters = filters, .kernel = {1}, .stride = {stride}, .bias = false};
}

int shortcut(ModelBuilder& b, const std::string& p, int x, std::int64_t filters, std::int64_t stride) {
  if (stride == 1 && b.shapeOf(x).channels == filters) return x;
  const int s = b.conv(p + "downsample.0", x, conv1x1(filters, stride));
  return b.batchNorm(p + "downsample.1", s);
}

int basicBlock(ModelBuilder& b, const std::string& p, int x, std::int64_t planes, std::int64_t stride) {
  int y = b.conv(p + "conv1", x, conv3x3(planes, stride));
  y = b.batchNorm(p + "bn1", y);
  y = b.relu(p + "relu1", y);
  y = b.conv(p + "conv2", y, conv3x3(planes, 1));
  y = b.batchNorm(p + "bn2", y);
  const int s = shortcut(b, p, x, planes, stride);
  return b.relu(p + "relu2", b.sum(p + "add", {y, s}));
}

int bottleneck(ModelBuilder& b, const std::string& p, int x, std::int64_t planes, std::int64_t stride) {
  int y = b.conv(p + "conv1", x, conv1x1(planes, 1));
  y = b.batchNorm(p + "bn1", y);
  y = b.relu(p + "relu1", y);
  y = b.conv(p + "conv2", y, conv3x3(planes, stride));
  y = b.batchNorm(p + "bn2", y);
  y = b.relu(p + "relu2", y);
  y = b.conv(p + "conv3", y, conv1x1(planes * 4, 1));
  y = b.batchNorm(p + "bn3", y);
  const int s = shortcut(b, p, x, planes * 4, stride);
  return b.relu(p + "relu3", b.sum(p + "add", {y, s}));
}

struct Depth {
  int blocks[4];
  bool bottleneck;
};

Depth depthConfig(int depth) {
  switch (depth) {
    case 18: return {{2, 2, 2, 2}, false};
    case 34: return {{3, 4, 6, 3}, false};
    case 50: return {{3, 4, 6, 3}, true};
    case 101: return {{3, 4, 23, 3}, true};
    case 152: return {{3, 8, 36, 3}, true};
    default: throw ConfigError(fmt::format("resnet depth {}: expected 18, 34, 50, 101 or 152", depth));
  }
}

}  // namespace

Model resnet(int depth, const TensorShape& input, std::int64_t classes) {
  const Depth config = depthConfig(depth);
  ModelBuilder b(fmt::format("resnet{}", depth), input);
  int x = b.conv("conv1", b.input(),
                 {.filters = 64, .kernel = {7}, .stride = {2}, .padding = {3}, .bias = false});
  x = b.batchNorm("bn1", x);
  x = b.relu("relu", x);
  x = b.maxPool("maxpool", x, {.kernel = {3}, .stride = {2}, .padding = {1}});
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t planes = 64LL << stage;
    for (int i = 0; i < config.blocks[stage]; ++i) {
      const std::string prefix = fmt::format("layer{}.{}.", stage + 1, i);
      const std::int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = config.bottleneck ? bottleneck(b, prefix, x, planes, stride)
                            : basicBlock(b, prefix, x, planes, stride);
    }
  }
  x = b.adaptiveAvgPool("avgpool", x, {1, 1});
  x = b.flatten("flatten", x);
  x = b.fc("fc", x, classes);
  b.softmaxLoss("loss", x);
  return std::move(b).build();
}

Model cifarResnet(int depth, const TensorShape& input, std::int64_t classes) {
  if (depth < 8 || (depth - 2) % 6 != 0) {
    throw ConfigError(fmt::format("cifar resnet depth {}: expected 6n+2 (20, 32, 44, 56, 110)", depth));
  }
  const int blocks = (depth - 2) / 6;
  ModelBuilder b(fmt::format("cifar-resnet{}", depth), input);
  int x = b.conv("conv1", b.input(), conv3x3(16, 1));
  x = b.batchNorm("bn1", x);
  x = b.relu("relu", x);
  for (int stage = 0; stage < 3; ++stage) {
    for (int i = 0; i < blocks; ++i) {
      const std::int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = basicBlock(b, fmt::format("layer{}.{}.", stage + 1, i), x, 16LL << stage, stride);
    }
  }
  x = b.globalAvgPool("avgpool", x);
  x = b.flatten("flatten", x);
  x = b.fc("fc", x, classes);
  b.softmaxLoss("loss", x);
  return std::move(b).build();
}

}  // namespace paraxis::graph::zoo
