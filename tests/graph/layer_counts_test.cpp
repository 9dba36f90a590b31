// Counts of small layers computed by hand (COST-MODELS.md section 2 conventions).
#include <gtest/gtest.h>

#include "graph/model.hpp"

namespace paraxis::graph {
namespace {

TEST(LayerCounts, ThreeLayerModelByHand) {
  ModelBuilder b("three", TensorShape{3, {8, 8}});
  const int conv = b.conv("conv", 0, {.filters = 4, .kernel = {3}, .padding = {1}});
  const int pool = b.maxPool("pool", b.relu("relu", conv), {.kernel = {2}});
  const int fc = b.fc("fc", b.flatten("flat", pool), 10);
  const Model m = std::move(b).build();

  const LayerCounts& c = m.layer(conv).counts;
  EXPECT_EQ(c.params, 4 * 3 * 9 + 4);
  EXPECT_DOUBLE_EQ(c.forwardFlops, 2.0 * 3 * 9 * 4 * 64 + 4 * 64);  // MACs x 2 + bias adds
  EXPECT_DOUBLE_EQ(c.backwardDataFlops, 0);  // fed by the data, whose gradient training never takes
  EXPECT_DOUBLE_EQ(c.backwardWeightFlops, 2.0 * 3 * 9 * 4 * 64 + 4 * 64);
  EXPECT_EQ(c.activationBytes, 4 * 64 * 4);
  EXPECT_EQ(c.halo, (std::vector<std::int64_t>{1, 1}));

  const LayerCounts& p = m.layer(pool).counts;
  EXPECT_EQ(p.params, 0);
  EXPECT_DOUBLE_EQ(p.forwardFlops, 4.0 * 4 * 4 * 4);  // 64 outputs x 4-element windows
  EXPECT_EQ(p.halo, (std::vector<std::int64_t>{0, 0}));  // 2x2 stride-2 windows do not overlap

  const LayerCounts& f = m.layer(fc).counts;
  EXPECT_EQ(f.params, 64 * 10 + 10);
  EXPECT_DOUBLE_EQ(f.forwardFlops, 2.0 * 64 * 10 + 10);
  EXPECT_EQ(f.activationBytes, 40);

  const ModelTotals t = m.totals();
  EXPECT_EQ(t.params, 112 + 650);
  EXPECT_EQ(t.activationBytes, (3 * 64 + 256 + 256 + 64 + 64 + 10) * 4);
}

TEST(LayerCounts, OnlyLayersWhoseInputCarriesAGradientTakeADataGradient) {
  ModelBuilder b("t", TensorShape{3, {8, 8}});
  const int scaled = b.relu("relu", 0);  // on the data: no weights, no gradient anywhere
  const int conv = b.conv("conv", scaled, {.filters = 4, .kernel = {3}, .padding = {1}});
  const int after = b.relu("after", conv);
  const Model m = std::move(b).build();
  EXPECT_DOUBLE_EQ(m.layer(scaled).counts.backwardDataFlops, 0);
  EXPECT_DOUBLE_EQ(m.layer(conv).counts.backwardDataFlops, 0);
  EXPECT_GT(m.layer(conv).counts.backwardWeightFlops, 0);
  EXPECT_GT(m.layer(after).counts.backwardDataFlops, 0);
}

TEST(LayerCounts, GroupedAndTransposedConvolutions) {
  ModelBuilder b("t", TensorShape{8, {4, 4}});
  const int grouped = b.conv("dw", 0, {.filters = 8, .kernel = {3}, .padding = {1}, .groups = 8, .bias = false});
  EXPECT_EQ(b.shapeOf(grouped), (TensorShape{8, {4, 4}}));
  const int up = b.deconv("up", grouped, {.filters = 2, .kernel = {3}, .stride = {2}, .padding = {1}, .outputPadding = {1}});
  const Model m = std::move(b).build();
  EXPECT_EQ(m.layer(grouped).counts.params, 8 * 1 * 9);
  EXPECT_DOUBLE_EQ(m.layer(grouped).counts.forwardFlops, 2.0 * 8 * 9 * 16);
  const LayerCounts& d = m.layer(up).counts;
  EXPECT_EQ(d.params, 8 * 2 * 9 + 2);
  EXPECT_DOUBLE_EQ(d.forwardFlops, 2.0 * 8 * 2 * 9 * 16 + 2 * 64);  // one MAC set per input position
  EXPECT_DOUBLE_EQ(d.backwardDataFlops, 2.0 * 8 * 2 * 9 * 16);  // its input carries the first layer's gradient
  EXPECT_EQ(d.halo, (std::vector<std::int64_t>{1, 1}));
}

TEST(LayerCounts, HaloFollowsKernelReach) {
  ModelBuilder b("t", TensorShape{1, {64, 64, 64}});
  const int wide = b.conv("wide", 0, {.filters = 1, .kernel = {7, 5, 1}, .padding = {3, 2, 0}});
  const int dilated = b.conv("dilated", wide, {.filters = 1, .kernel = {3}, .padding = {2}, .dilation = {2}});
  const int pool = b.maxPool("pool", dilated, {.kernel = {3}, .stride = {2}, .padding = {1}});
  const Model m = std::move(b).build();
  EXPECT_EQ(m.layer(wide).counts.halo, (std::vector<std::int64_t>{3, 2, 0}));
  EXPECT_EQ(m.layer(dilated).counts.halo, (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(m.layer(pool).counts.halo, (std::vector<std::int64_t>{1, 1, 1}));
}

TEST(LayerCounts, BatchNormHasTwoParametersPerChannel) {
  ModelBuilder b("t", TensorShape{16, {8, 8}});
  const int bn = b.batchNorm("bn", 0);
  const Model m = std::move(b).build();
  EXPECT_EQ(m.layer(bn).counts.params, 32);
  EXPECT_DOUBLE_EQ(m.layer(bn).counts.forwardFlops, 4.0 * 16 * 64);
  EXPECT_DOUBLE_EQ(m.layer(bn).counts.backwardWeightFlops, 2.0 * 16 * 64);
}

}  // namespace
}  // namespace paraxis::graph
