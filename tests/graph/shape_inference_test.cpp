#include <gtest/gtest.h>

#include "core/error.hpp"
#include "graph/model.hpp"

namespace paraxis::graph {
namespace {

TensorShape image(std::int64_t c, std::int64_t h, std::int64_t w) { return {c, {h, w}}; }

TEST(ShapeInference, ConvolutionFollowsTorchFormula) {
  ModelBuilder b("t", image(3, 224, 224));
  const int x = b.conv("c", 0, {.filters = 64, .kernel = {7}, .stride = {2}, .padding = {3}});
  EXPECT_EQ(b.shapeOf(x), image(64, 112, 112));
  const int y = b.conv("d", x, {.filters = 8, .kernel = {3}, .stride = {1}, .padding = {2}, .dilation = {2}});
  EXPECT_EQ(b.shapeOf(y), image(8, 112, 112));
  const int z = b.conv("asym", y, {.filters = 8, .kernel = {1, 7}, .padding = {0, 3}});
  EXPECT_EQ(b.shapeOf(z), image(8, 112, 112));
}

TEST(ShapeInference, ThreeDimensionalConvolutionAndPooling) {
  ModelBuilder b("t", TensorShape{4, {128, 128, 128}});
  const int x = b.conv("c", 0, {.filters = 16, .kernel = {3}, .padding = {1}});
  const int y = b.maxPool("p", x, {.kernel = {2}});
  EXPECT_EQ(b.shapeOf(y), (TensorShape{16, {64, 64, 64}}));
}

TEST(ShapeInference, TransposedConvolutionInvertsAStridedConvolution) {
  ModelBuilder b("t", image(16, 32, 32));
  const int x = b.deconv("up", 0, {.filters = 8, .kernel = {3}, .stride = {2}, .padding = {1}, .outputPadding = {1}});
  EXPECT_EQ(b.shapeOf(x), image(8, 64, 64));
  const int y = b.deconv("up4", x, {.filters = 4, .kernel = {4}, .stride = {2}, .padding = {1}});
  EXPECT_EQ(b.shapeOf(y), image(4, 128, 128));
}

TEST(ShapeInference, PoolingCeilModeMatchesTorch) {
  ModelBuilder b("t", image(1, 6, 7));
  const int floorPool = b.maxPool("f", 0, {.kernel = {3}, .stride = {2}});
  EXPECT_EQ(b.shapeOf(floorPool), image(1, 2, 3));
  const int ceilPool = b.maxPool("c", 0, {.kernel = {3}, .stride = {2}, .ceilMode = true});
  EXPECT_EQ(b.shapeOf(ceilPool), image(1, 3, 3));
  const int padded = b.avgPool("a", 0, {.kernel = {3}, .stride = {1}, .padding = {1}});
  EXPECT_EQ(b.shapeOf(padded), image(1, 6, 7));
}

TEST(ShapeInference, JoinsFlattenAndLosses) {
  ModelBuilder b("t", image(8, 4, 4));
  const int a = b.conv("a", 0, {.filters = 8, .kernel = {1}});
  const int s = b.sum("s", {0, a});
  EXPECT_EQ(b.shapeOf(s), image(8, 4, 4));
  const int c = b.concat("c", {s, a, 0});
  EXPECT_EQ(b.shapeOf(c), image(24, 4, 4));
  const int g = b.globalAvgPool("g", c);
  EXPECT_EQ(b.shapeOf(g), image(24, 1, 1));
  const int f = b.flatten("f", c);
  EXPECT_EQ(b.shapeOf(f), (TensorShape{384, {}}));
  const int l = b.softmaxLoss("loss", b.fc("fc", f, 10));
  EXPECT_EQ(b.shapeOf(l), (TensorShape{1, {}}));
}

TEST(ShapeInference, MismatchedAddNamesTheLayerAndBothShapes) {
  ModelBuilder b("t", image(8, 4, 4));
  const int a = b.conv("narrow", 0, {.filters = 16, .kernel = {1}, .stride = {2}});
  try {
    b.sum("join", {0, a});
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(),
                 "layer 'join' (add): input shapes do not fit: 'input' gives 8x4x4, 'narrow' gives "
                 "16x2x2 (add needs equal shapes)");
  }
}

TEST(ShapeInference, RejectsImpossibleLayers) {
  ModelBuilder b("t", image(6, 4, 4));
  EXPECT_THROW(b.conv("big", 0, {.filters = 4, .kernel = {5}}), ShapeError);
  EXPECT_THROW(b.conv("groups", 0, {.filters = 4, .kernel = {1}, .groups = 4}), ShapeError);
  EXPECT_THROW(b.conv("rank", 0, {.filters = 4, .kernel = {1, 1, 1}}), ShapeError);
  EXPECT_THROW(b.maxPool("pad", 0, {.kernel = {2}, .padding = {2}}), ShapeError);
  EXPECT_THROW(b.concat("single", {0}), ShapeError);
  const int f = b.flatten("f", 0);
  EXPECT_THROW(b.conv("flat", f, {.filters = 4, .kernel = {1}}), ShapeError);
  EXPECT_THROW(b.conv("f", 0, {.filters = 4, .kernel = {1}}), ConfigError);  // duplicate name
}

}  // namespace
}  // namespace paraxis::graph
