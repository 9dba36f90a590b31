#include "graph/zoo/zoo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/error.hpp"
#include "graph/zoo/builders.hpp"

namespace paraxis::graph {
namespace {

TensorShape image(std::int64_t channels, std::int64_t size) { return {channels, {size, size}}; }
TensorShape volume(std::int64_t channels, std::int64_t size) { return {channels, {size, size, size}}; }

std::vector<ZooEntry> makeEntries() {
  using namespace zoo;
  auto resnetEntry = [](int depth) {
    return ZooEntry{fmt::format("resnet{}", depth),
                    fmt::format("ResNet-{} (He et al. 2016; torchvision definition)", depth),
                    image(3, 224), 1000,
                    [depth](const TensorShape& in, std::int64_t k) { return resnet(depth, in, k); }};
  };
  auto cosmoflowEntry = [](const std::string& name, std::int64_t size) {
    return ZooEntry{name, fmt::format("CosmoFlow 3-D CNN on 4-channel {}^3 volumes (regression)", size),
                    volume(4, size), 4, cosmoflow};
  };
  return {
      {"alexnet", "AlexNet (Krizhevsky et al. 2012; torchvision definition)", image(3, 224), 1000, alexnet},
      {"vgg11", "VGG11 (Simonyan & Zisserman 2015, configuration A; torchvision definition)", image(3, 224), 1000, vgg11},
      {"vgg16", "VGG16 (Simonyan & Zisserman 2015; torchvision definition)", image(3, 224), 1000, vgg16},
      resnetEntry(18),
      resnetEntry(34),
      resnetEntry(50),
      resnetEntry(101),
      resnetEntry(152),
      {"inception-v3", "Inception-v3 with its auxiliary classifier (torchvision definition)",
       image(3, 299), 1000,
       [](const TensorShape& in, std::int64_t k) { return zoo::inceptionV3(in, k, true); }},
      {"inception-v3-noaux", "Inception-v3 without the auxiliary classifier", image(3, 299), 1000,
       [](const TensorShape& in, std::int64_t k) { return zoo::inceptionV3(in, k, false); }},
      cosmoflowEntry("cosmoflow", 128),
      cosmoflowEntry("cosmoflow-256", 256),
      cosmoflowEntry("cosmoflow-512", 512),
      {"mesh-fcn", "fully convolutional mesh-tangling network on 2048^2 meshes (Dryden et al. 2019)",
       image(1, 2048), 2, meshFcn},
      {"tiramisu", "FC-DenseNet-103 for 4D-STEM diffraction patterns (Laanait et al. 2019)",
       image(1, 256), 1, tiramisu},
      {"lenet", "LeNet-style CNN for 28x28 Fashion-MNIST", image(1, 28), 10, lenet},
      {"cifar-resnet20", "ResNet-20 for 32x32 CIFAR images (He et al. 2016)", image(3, 32), 10,
       [](const TensorShape& in, std::int64_t k) { return cifarResnet(20, in, k); }},
      {"small-cnn", "4-block batch-normalised CNN for 64x64 synthetic images", image(3, 64), 10, smallCnn},
  };
}

std::string canonical(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

}  // namespace

const std::vector<ZooEntry>& zooEntries() {
  static const std::vector<ZooEntry> entries = makeEntries();
  return entries;
}

const ZooEntry& findZooEntry(const std::string& name) {
  const std::string wanted = canonical(name);
  for (const ZooEntry& entry : zooEntries()) {
    if (entry.name == wanted) return entry;
  }
  std::vector<std::string> names;
  for (const ZooEntry& entry : zooEntries()) names.push_back(entry.name);
  throw NotFoundError(fmt::format("unknown model '{}': the zoo has {} (or give a .yaml file)", name,
                                  fmt::join(names, ", ")));
}

Model buildZooModel(const std::string& name, const ZooOptions& options) {
  const ZooEntry& entry = findZooEntry(name);
  TensorShape input = entry.defaultInput;
  if (options.channels > 0) input.channels = options.channels;
  if (options.spatial.size() == 1) {
    std::fill(input.spatial.begin(), input.spatial.end(), options.spatial.front());
  } else if (!options.spatial.empty()) {
    if (options.spatial.size() != input.spatial.size()) {
      throw ShapeError(fmt::format("model '{}' takes {} spatial dimensions, {} were given",
                                   entry.name, input.spatial.size(), options.spatial.size()));
    }
    input.spatial = options.spatial;
  }
  return entry.build(input, options.classes > 0 ? options.classes : entry.defaultClasses);
}

}  // namespace paraxis::graph
