// Whole models split spatially ("spatial early, sample late") train like one rank: after five
// SGD steps every weight and batch-norm statistic equals the one-rank run's. Covered: small-cnn
// (global pooling, then a replicated head shared out by sample), LeNet (flatten: the
// all-to-all-v shuffle to samples), the mesh FCN (strided convolutions, transposed
// convolutions, batch-norm, a per-position loss on the blocks), CosmoFlow (3-D, regression,
// dropout: each sample's mask is the one-rank run's however the batch is split) and ResNet-18
// (stride-2 stem and projections, 3x3 stride-2 max pooling, residual adds).
// The gradients are averaged over the group as the gradient engine does. In float64: in float32
// a ReLU whose input lies within rounding of zero can switch between two runs that sum in
// different orders, and after a few steps that discontinuity, not the distribution, dominates
// the difference. Linked into parallel_test (mpirun at 2, 3 and 4 ranks).
#include <gtest/gtest.h>

#include <string>

#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "graph/zoo/zoo.hpp"
#include "train/dataset.hpp"
#include "train/net_test_support.hpp"
#include "train/spatial_net.hpp"

namespace paraxis::parallel {
extern comm::Communicator* gSpatialWorld;
}

namespace paraxis::train {
namespace {

using testing::averageGradients;
using testing::freshNet;
using testing::kSteps;
using testing::maxRelative;
using testing::sgd;
constexpr std::int64_t kBatch = 4;

std::vector<torch::Tensor> snapshot(IrNet& net) {
  std::vector<torch::Tensor> out;
  for (const auto& p : net->parameters()) out.push_back(p.detach().clone());
  for (const auto& b : net->buffers()) out.push_back(b.detach().clone().to(torch::kFloat64));
  return out;
}

struct ModelCase {
  std::string name;
  std::vector<std::int64_t> input;  // spatial extents
  int sampleFrom = 0;               // a per-layer plan's switch to whole samples (0: the model's own)
  bool alternate = false;           // a per-layer plan that changes grids: odd layers on the transposed grid
};

void expectFiveStepsEqualOneRank(const ModelCase& c, const std::vector<int>& grid) {
  const comm::Communicator& world = *parallel::gSpatialWorld;
  const graph::Model model = graph::buildZooModel(c.name, {.spatial = c.input});
  const TargetShape target = targetOf(model);
  const Dataset data = syntheticDataset(model.inputShape(), target, kSteps * kBatch, 3);
  const torch::Tensor x = data.images.to(torch::kFloat64);

  IrNet serial = testing::trainSerially(model, data, kBatch);

  const parallel::SpatialSplit split{world, grid};
  IrNet net = freshNet(model);
  SpatialOptions options{.sampleFrom = c.sampleFrom};
  if (c.alternate) {
    for (int i = 0; i < model.size(); ++i) options.layerGrids.push_back(i % 2 == 0 ? grid : std::vector<int>{grid[1], grid[0]});
  }
  SpatialNet spatial(net, split, options);
  for (int s = 0; s < kSteps; ++s) {
    const auto outputs = spatial.run(x.narrow(0, kBatch * s, kBatch));
    spatial.loss(outputs, data.labels.narrow(0, kBatch * s, kBatch)).backward();
    averageGradients(net, world);
    sgd(net->parameters());
  }
  std::string where;
  for (int g : grid) {
    if (!where.empty()) where += 'x';
    where += std::to_string(g);
  }
  EXPECT_LT(maxRelative(snapshot(net), snapshot(serial)), 1e-9) << c.name << " on grid " << where << " ("
                                                                << spatial.describe() << ")";
  if (c.sampleFrom > 0) {
    EXPECT_EQ(spatial.sampleStart(), c.sampleFrom) << spatial.describe();
  }
}

TEST(SpatialNet, FiveStepsEqualOneRank) {
  const int ranks = parallel::gSpatialWorld->size();
  const std::vector<int> rows{ranks, 1}, square = ranks == 4 ? std::vector<int>{2, 2} : rows;
  // small-cnn halves four times: at least one row per rank at the end, uneven blocks on the way.
  expectFiveStepsEqualOneRank({"small-cnn", {16 * ranks + 4, 18}}, rows);
  if (ranks == 4) expectFiveStepsEqualOneRank({"small-cnn", {36, 34}}, square);
  expectFiveStepsEqualOneRank({"lenet", {28, 28}}, square);
  // A plan that changes grids from layer to layer (rows, columns, rows, ...): every layer reads
  // across grids, windowed or not.
  expectFiveStepsEqualOneRank({"small-cnn", {16 * ranks + 4, 16 * ranks + 4}, 0, true}, rows);
  // A plan's earlier switch: LeNet's second convolution and all after it on whole samples.
  expectFiveStepsEqualOneRank({"lenet", {28, 28}, 4}, square);
  expectFiveStepsEqualOneRank({"mesh-fcn", {32, 32}}, square);
  expectFiveStepsEqualOneRank({"cosmoflow", {16, 16, 16}}, {ranks, 1, 1});
  // ResNet-18 halves five times: 32 rows per rank along h.
  expectFiveStepsEqualOneRank({"resnet18", ranks == 3 ? std::vector<std::int64_t>{96, 64} : std::vector<std::int64_t>{64, 64}},
                              square);
}

// A block's layers run NHWC as IrNet's do, after LeNet's one-channel convolution too (torch
// returns it NCHW; its max pool then ran 10x slower).
TEST(SpatialNet, BlocksStayChannelsLastAfterAOneChannelConvolution) {
  torch::NoGradGuard noGrad;
  const int ranks = parallel::gSpatialWorld->size();
  const graph::Model model = graph::buildZooModel("lenet", {});
  const parallel::SpatialSplit split{*parallel::gSpatialWorld, {ranks, 1}};
  SpatialNet spatial(IrNet(model, IrNetOptions{.channelsLast = true}), split, {});
  const auto outputs = spatial.run(torch::randn({2, 1, 28, 28}));
  const int conv1 = 1;
  ASSERT_EQ(model.layer(conv1).kind, graph::LayerKind::kConv);
  EXPECT_TRUE(outputs[conv1].is_contiguous(torch::MemoryFormat::ChannelsLast)) << "strides " << outputs[conv1].strides();
}

TEST(SpatialNet, AGridFinerThanALayerIsRefusedNamingTheLayer) {
  const int ranks = parallel::gSpatialWorld->size();
  if (ranks < 2) GTEST_SKIP() << "one rank always has a block";
  const parallel::SpatialSplit split{*parallel::gSpatialWorld, {ranks, 1}};
  // small-cnn halves its rows four times: 16 rows end as 1, too few for 2 or more ranks.
  const graph::Model model = graph::buildZooModel("small-cnn", {.spatial = {16, 16}});
  try {
    SpatialNet net(IrNet(model), split);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer '"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("some rank would hold nothing"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace paraxis::train
