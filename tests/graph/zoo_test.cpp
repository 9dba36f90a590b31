#include "graph/zoo/zoo.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace paraxis::graph {
namespace {

// torchvision 0.14's counts (shared/reference/README.md).
TEST(Zoo, ParameterCountsEqualTorchvision) {
  const std::pair<const char*, std::int64_t> expected[] = {
      {"alexnet", 61'100'840},    {"vgg11", 132'863'336},    {"vgg16", 138'357'544},     {"resnet18", 11'689'512},
      {"resnet50", 25'557'032},   {"resnet101", 44'549'160},  {"resnet152", 60'192'808},
      {"inception-v3", 27'161'264}, {"inception-v3-noaux", 23'834'568}};
  for (const auto& [name, params] : expected) {
    EXPECT_EQ(buildZooModel(name).totals().params, params) << name;
  }
}

TEST(Zoo, EveryEntryBuildsAtItsDefaultsAndEndsInALoss) {
  for (const ZooEntry& entry : zooEntries()) {
    const Model m = entry.build(entry.defaultInput, entry.defaultClasses);
    EXPECT_EQ(m.inputShape(), entry.defaultInput) << entry.name;
    for (int output : m.outputs()) {
      const LayerKind kind = m.layer(output).kind;
      EXPECT_TRUE(kind == LayerKind::kSoftmaxLoss || kind == LayerKind::kMseLoss) << entry.name;
    }
  }
}

TEST(Zoo, InputSizeAndClassesAreParameters) {
  const Model small = buildZooModel("resnet18", {.spatial = {64}, .classes = 10});
  EXPECT_EQ(small.inputShape(), (TensorShape{3, {64, 64}}));
  EXPECT_EQ(small.layer(small.find("fc")).output.channels, 10);
  EXPECT_EQ(small.layer(small.find("layer4.1.relu2")).output, (TensorShape{512, {2, 2}}));
  // Adaptive pooling keeps the parameter count independent of the input size.
  EXPECT_EQ(buildZooModel("vgg16", {.spatial = {64}}).totals().params, 138'357'544);
}

TEST(Zoo, CosmoflowGrowsOneStagePerDoubling) {
  const Model m128 = buildZooModel("cosmoflow");
  const Model m256 = buildZooModel("cosmoflow-256");
  EXPECT_EQ(m128.layer(m128.find("flatten")).output.channels, 512 * 4 * 4 * 4);
  EXPECT_NO_THROW(m256.find("conv6"));
  EXPECT_THROW(m128.find("conv6"), NotFoundError);
  EXPECT_EQ(m256.inputShape(), (TensorShape{4, {256, 256, 256}}));
}

TEST(Zoo, LargeSampleModelsKeepFullResolutionOutputs) {
  const Model mesh = buildZooModel("mesh-fcn");
  EXPECT_EQ(mesh.layer(mesh.find("classifier")).output, (TensorShape{2, {2048, 2048}}));
  const Model tiramisu = buildZooModel("tiramisu");
  EXPECT_EQ(tiramisu.layer(tiramisu.find("head")).output, (TensorShape{1, {256, 256}}));
}

TEST(Zoo, UnknownNameListsTheZoo) {
  try {
    buildZooModel("resnet51");
    FAIL() << "expected NotFoundError";
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown model 'resnet51': the zoo has alexnet, vgg11, vgg16"), std::string::npos);
  }
  EXPECT_EQ(findZooEntry("inception_v3").name, "inception-v3");
  EXPECT_THROW(buildZooModel("cosmoflow", {.spatial = {64, 64}}), ShapeError);
}

}  // namespace
}  // namespace paraxis::graph
