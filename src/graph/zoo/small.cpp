// Small models that train on a laptop-class CPU in minutes: a LeNet-style CNN for 28x28
// Fashion-MNIST and a small batch-normalised CNN for 64x64 synthetic images.
#include <fmt/format.h>

#include "graph/zoo/builders.hpp"

namespace paraxis::graph::zoo {

Model lenet(const TensorShape& input, std::int64_t classes) {
  ModelBuilder b("lenet", input);
  int x = b.conv("conv1", b.input(), {.filters = 32, .kernel = {5}, .padding = {2}});
  x = b.relu("relu1", x);
  x = b.maxPool("pool1", x, {.kernel = {2}});
  x = b.conv("conv2", x, {.filters = 64, .kernel = {5}, .padding = {2}});
  x = b.relu("relu2", x);
  x = b.maxPool("pool2", x, {.kernel = {2}});
  x = b.flatten("flatten", x);
  x = b.fc("fc1", x, 256);
  x = b.relu("relu3", x);
  x = b.dropout("dropout", x, 0.25);
  x = b.fc("fc2", x, classes);
  b.softmaxLoss("loss", x);
  return std::move(b).build();
}

Model smallCnn(const TensorShape& input, std::int64_t classes) {
  ModelBuilder b("small-cnn", input);
  int x = b.input();
  for (int i = 0; i < 4; ++i) {
    const std::string p = fmt::format("block{}", i + 1);
    x = b.conv(p + ".conv", x, {.filters = 32LL << i, .kernel = {3}, .padding = {1}, .bias = false});
    x = b.batchNorm(p + ".bn", x);
    x = b.relu(p + ".relu", x);
    x = b.maxPool(p + ".pool", x, {.kernel = {2}});
  }
  x = b.globalAvgPool("avgpool", x);
  x = b.flatten("flatten", x);
  x = b.fc("fc", x, classes);
  b.softmaxLoss("loss", x);
  return std::move(b).build();
}

}  // namespace paraxis::graph::zoo
