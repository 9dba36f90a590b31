// AlexNet, VGG-11 and VGG-16 as torchvision 0.14 defines them (module names features.N, classifier.N).
#include "graph/zoo/builders.hpp"

#include <initializer_list>
#include <string>

namespace paraxis::graph::zoo {

Model alexnet(const TensorShape& input, std::int64_t classes) {
  ModelBuilder b("alexnet", input);
  int x = b.input();
  x = b.conv("features.0", x, {.filters = 64, .kernel = {11}, .stride = {4}, .padding = {2}});
  x = b.relu("features.1", x);
  x = b.maxPool("features.2", x, {.kernel = {3}, .stride = {2}});
  x = b.conv("features.3", x, {.filters = 192, .kernel = {5}, .padding = {2}});
  x = b.relu("features.4", x);
  x = b.maxPool("features.5", x, {.kernel = {3}, .stride = {2}});
  x = b.conv("features.6", x, {.filters = 384, .kernel = {3}, .padding = {1}});
  x = b.relu("features.7", x);
  x = b.conv("features.8", x, {.filters = 256, .kernel = {3}, .padding = {1}});
  x = b.relu("features.9", x);
  x = b.conv("features.10", x, {.filters = 256, .kernel = {3}, .padding = {1}});
  x = b.relu("features.11", x);
  x = b.maxPool("features.12", x, {.kernel = {3}, .stride = {2}});
  x = b.adaptiveAvgPool("avgpool", x, {6, 6});
  x = b.flatten("flatten", x);
  x = b.dropout("classifier.0", x);
  x = b.fc("classifier.1", x, 4096);
  x = b.relu("classifier.2", x);
  x = b.dropout("classifier.3", x);
  x = b.fc("classifier.4", x, 4096);
  x = b.relu("classifier.5", x);
  x = b.fc("classifier.6", x, classes);
  b.softmaxLoss("loss", x);
  return std::move(b).build();
}

namespace {

constexpr int kPool = 0;

// torchvision's VGG without batch-norm: `config`'s convolutions (3x3, 'same') and pools, the
// 7x7 adaptive pool, and the three-layer classifier.
Model vgg(const std::string& name, std::initializer_list<int> config, const TensorShape& input, std::int64_t classes) {
  ModelBuilder b(name, input);
  int x = b.input();
  int index = 0;
  for (int filters : config) {
    const std::string layer = "features." + std::to_string(index);
    if (filters == kPool) {
      x = b.maxPool(layer, x, {.kernel = {2}, .stride = {2}});
      index += 1;
    } else {
      x = b.conv(layer, x, {.filters = filters, .kernel = {3}, .padding = {1}});
      x = b.relu("features." + std::to_string(index + 1), x);
      index += 2;
    }
  }
  x = b.adaptiveAvgPool("avgpool", x, {7, 7});
  x = b.flatten("flatten", x);
  x = b.fc("classifier.0", x, 4096);
  x = b.relu("classifier.1", x);
  x = b.dropout("classifier.2", x);
  x = b.fc("classifier.3", x, 4096);
  x = b.relu("classifier.4", x);
  x = b.dropout("classifier.5", x);
  x = b.fc("classifier.6", x, classes);
  b.softmaxLoss("loss", x);
  return std::move(b).build();
}

}  // namespace

Model vgg11(const TensorShape& input, std::int64_t classes) {
  return vgg("vgg11", {64, kPool, 128, kPool, 256, 256, kPool, 512, 512, kPool, 512, 512, kPool}, input, classes);
}

Model vgg16(const TensorShape& input, std::int64_t classes) {
  return vgg("vgg16",
             {64, 64, kPool, 128, 128, kPool, 256, 256, 256, kPool, 512, 512, 512, kPool, 512, 512, 512, kPool},
             input, classes);
}

}  // namespace paraxis::graph::zoo
