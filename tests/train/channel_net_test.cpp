// Filter and channel parallelism (plan/layer_split.hpp's rule, run by SpatialNet's channel
// axis): the four moves between whole tensors and channel slices give the values and gradients
// of the whole computation, uneven slices included; whole models with their weights split
// over the ranks train like one rank (float64, five SGD steps, gathered weights within 1e-9):
// LeNet (conv, FC, flatten, dropout), small-cnn (batch-norm on slices, global pooling), the
// mesh FCN (strided and transposed convolutions) and ResNet-18 (residual adds of slices), under filter and channel axes over every rank, and with 4 ranks h=2 x filter=2;
// a filter head (h over every rank, the head's filters over the same ranks) on LeNet and small-cnn;
// with 4 ranks both axes at once (filter=2 x channel=2: weights split over both) on LeNet,
// small-cnn and ResNet-18; every activation stays NHWC under both axes.
// Linked into parallel_test (mpirun at 2, 3 and 4 ranks).
#include <gtest/gtest.h>

#include <string>

#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "graph/yaml_loader.hpp"
#include "graph/zoo/zoo.hpp"
#include "parallel/channel_split.hpp"
#include "train/dataset.hpp"
#include "train/net_test_support.hpp"
#include "train/spatial_net.hpp"

namespace paraxis::parallel {
extern comm::Communicator* gSpatialWorld;
}

namespace paraxis::train {
namespace {

using parallel::ChannelSplit;
using parallel::Consumer;

// A [2, C, 3, 2] tensor whose every cell differs, and a weight for a loss that reads it unevenly.
torch::Tensor cellsOf(std::int64_t channels, double scale) {
  return torch::arange(2 * channels * 6, torch::kFloat64).view({2, channels, 3, 2}).mul(scale).sin();
}

TEST(ChannelMoves, ValuesAndGradientsEqualTheWholeComputation) {
  const comm::Communicator& world = *parallel::gSpatialWorld;
  const ChannelSplit split{world};
  const std::int64_t channels = 2 * world.size() + 1;  // uneven slices
  const torch::Tensor whole = cellsOf(channels, 0.3), probe = cellsOf(channels, 0.7);

  // gather for a redundant consumer: the whole tensor; the gradient of this rank's slice.
  torch::Tensor mine = split.local(whole).clone().requires_grad_(true);
  torch::Tensor gathered = gatherChannels(split, mine, {channels, 1}, Consumer::kRedundant);
  EXPECT_TRUE(torch::equal(gathered, whole));
  (gathered * probe).sum().backward();
  EXPECT_TRUE(torch::allclose(mine.grad(), split.local(probe)));

  // gather for a split consumer: each rank's gradient is a partial sum; the reduce-scatter sums them.
  mine = split.local(whole).clone().requires_grad_(true);
  gathered = gatherChannels(split, mine, {channels, 1}, Consumer::kSplit);
  (gathered * probe * (world.rank() + 1)).sum().backward();
  const double ranksSum = world.size() * (world.size() + 1) / 2.0;
  EXPECT_TRUE(torch::allclose(mine.grad(), split.local(probe) * ranksSum));

  // slice a whole tensor (flattened features: units of 6 cells per channel); the gradient gathered.
  const torch::Tensor flat = whole.flatten(1).clone().requires_grad_(true);
  const torch::Tensor piece = sliceChannels(split, flat, 6);
  EXPECT_TRUE(torch::equal(piece, split.local(whole).flatten(1)));
  (piece * split.local(probe).flatten(1)).sum().backward();
  EXPECT_TRUE(torch::allclose(flat.grad(), probe.flatten(1)));

  // partial sums -> their sum on every rank; the gradient passes as it is.
  const torch::Tensor part = (whole * (world.rank() + 1)).requires_grad_(true);
  const torch::Tensor sum = sumPartials(split, part);
  EXPECT_TRUE(torch::allclose(sum, whole * ranksSum));
  (sum * probe).sum().backward();
  EXPECT_TRUE(torch::equal(part.grad(), probe));

  // a whole tensor read by split layers: forward unchanged, the gradients' partial sums completed.
  const torch::Tensor read = whole.clone().requires_grad_(true);
  const torch::Tensor same = completeGradient(split, read);
  EXPECT_TRUE(torch::equal(same, whole));
  (same * probe * (world.rank() + 1)).sum().backward();
  EXPECT_TRUE(torch::allclose(read.grad(), probe * ranksSum));

  // the weights' gather: every rank's slice of dimension 0 back into the whole.
  EXPECT_TRUE(torch::equal(split.gather(split.local(whole.transpose(0, 1).contiguous(), 0), 0, {channels, 1}),
                           whole.transpose(0, 1)));
}

// NHWC (IrNet's layout for 2-D samples) stays NHWC through the moves that build new tensors:
// torch's pooling and batch norm ran 2-8x slower on the NCHW copies they used to make.
TEST(ChannelMoves, KeepTheChannelsLastLayout) {
  const ChannelSplit split{*parallel::gSpatialWorld};
  const std::int64_t channels = 2 * split.comm.size();
  const torch::Tensor whole = cellsOf(channels, 0.3).contiguous(torch::MemoryFormat::ChannelsLast);
  const torch::Tensor sum = sumPartials(split, whole);
  EXPECT_TRUE(sum.is_contiguous(torch::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(torch::allclose(sum, whole * split.comm.size()));
  const torch::Tensor mine = split.local(whole, 1, 1).contiguous(torch::MemoryFormat::ChannelsLast);
  const torch::Tensor gathered = gatherChannels(split, mine, {channels, 1}, Consumer::kRedundant);
  EXPECT_TRUE(gathered.is_contiguous(torch::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(torch::equal(gathered, whole));
}

using testing::averageGradients;
using testing::freshNet;
using testing::kSteps;
using testing::maxRelative;
using testing::sgd;
constexpr std::int64_t kBatch = 4;

struct Case {
  std::string model;
  std::vector<std::int64_t> input;
  bool filterAxis = true;
  int spatialRanks = 1;  // h = this many ranks, the channel axis over the rest
  bool filterHead = false;  // h over every rank, the head's filters over the same ranks
  bool bothAxes = false;    // filter=2 x channel=2 on 4 ranks
};

void expectFiveStepsEqualOneRank(const Case& c) {
  const comm::Communicator& world = *parallel::gSpatialWorld;
  const graph::Model model = graph::buildZooModel(c.model, {.spatial = c.input});
  const Dataset data = syntheticDataset(model.inputShape(), targetOf(model), kSteps * kBatch, 3);
  const torch::Tensor x = data.images.to(torch::kFloat64);
  IrNet serial = testing::trainSerially(model, data, kBatch);
  // Ranks: slice index outer, spatial block inner (plan::Grid's order).
  const int s = c.filterHead ? world.size() : c.spatialRanks;
  std::vector<int> grid(static_cast<std::size_t>(model.inputShape().rank()), 1);
  grid.front() = s;
  const parallel::SpatialSplit spatial{world.split(world.rank() / s, world.rank()), grid};
  // Both axes: rank = channel slice x 2 + filter slice (plan::Grid's order).
  const ChannelSplit slices{c.filterHead ? spatial.comm
                            : c.bothAxes ? world.split(world.rank() / 2, world.rank())
                                         : world.split(world.rank() % s, world.rank())};
  const ChannelSplit channelSlices{c.bothAxes ? world.split(world.rank() % 2, world.rank()) : comm::Communicator()};
  IrNet net = freshNet(model);
  SpatialNet run(net, spatial,
                 {.slices = &slices, .filterAxis = c.filterAxis, .channelSlices = c.bothAxes ? &channelSlices : nullptr,
                  .filterHead = c.filterHead});
  for (int step = 0; step < kSteps; ++step) {
    run.loss(run.run(x.narrow(0, kBatch * step, kBatch)), data.labels.narrow(0, kBatch * step, kBatch)).backward();
    // The engine's group: the ranks holding the same slices (a filter head's: this rank alone).
    if (!c.filterHead) averageGradients(net, spatial.comm);
    sgd(net->parameters());
  }
  std::vector<torch::Tensor> expected;
  for (const auto& p : serial->parameters()) expected.push_back(p.detach());
  if (s == 1 && !c.filterHead) {
    EXPECT_EQ(run.sampleStart(), 1) << c.model << ": a group of one rank runs torch's layers";
  }
  EXPECT_LT(maxRelative(run.wholeParameters(), expected), 1e-9)
      << c.model << (c.filterHead ? " filter head=" : c.filterAxis ? " filter=" : " channel=") << slices.comm.size()
      << " x h=" << s << " (" << run.describe() << ")";
}

TEST(ChannelNet, FiveStepsEqualOneRank) {
  const int ranks = parallel::gSpatialWorld->size();
  for (bool filter : {true, false}) {
    expectFiveStepsEqualOneRank({"lenet", {28, 28}, filter});
    expectFiveStepsEqualOneRank({"small-cnn", {32, 32}, filter});
    expectFiveStepsEqualOneRank({"mesh-fcn", {32, 32}, filter});
    expectFiveStepsEqualOneRank({"resnet18", {64, 64}, filter});
  }
  if (ranks == 4) {
    expectFiveStepsEqualOneRank({"lenet", {28, 28}, true, 2});
    expectFiveStepsEqualOneRank({"small-cnn", {32, 32}, true, 2});
    expectFiveStepsEqualOneRank({"lenet", {28, 28}, true, 1, false, true});
    expectFiveStepsEqualOneRank({"small-cnn", {32, 32}, true, 1, false, true});
    expectFiveStepsEqualOneRank({"resnet18", {64, 64}, true, 1, false, true});
  }
}

// A filter head: the convolutions on spatial blocks over every rank, then the whole batch on
// every rank with the fully connected layers' filters split over the same ranks.
TEST(ChannelNet, FilterHeadFiveStepsEqualOneRank) {
  expectFiveStepsEqualOneRank({"lenet", {28, 28}, true, 1, true});
  expectFiveStepsEqualOneRank({"small-cnn", {64, 64}, true, 1, true});  // 4x4 at the last pool: h up to 4
}

// Every 4-D activation leaves its layer in IrNet's NHWC, under both axes: ResNet-18's layer4
// convolutions (2x2 positions at 64x64) run NCHW, and a channel-parallel one's partial sums came
// back NCHW, sending the batch norms after them down torch's 4-13x slower NCHW kernels.
TEST(ChannelNet, EveryActivationKeepsTheChannelsLastLayout) {
  const comm::Communicator& world = *parallel::gSpatialWorld;
  const graph::Model model = graph::buildZooModel("resnet18", {.spatial = {64, 64}});
  const parallel::SpatialSplit spatial{world.split(world.rank(), 0), {1, 1}};
  const ChannelSplit slices{world};
  const torch::Tensor batch = torch::randn({2, 3, 64, 64});
  for (bool filter : {true, false}) {
    IrNet net(model, IrNetOptions{.channelsLast = true});
    SpatialNet run(net, spatial, {.slices = &slices, .filterAxis = filter});
    const std::vector<torch::Tensor> outputs = run.run(batch);
    for (int i = 1; i < model.size(); ++i) {
      if (!outputs[i].defined() || outputs[i].dim() != 4) continue;
      EXPECT_TRUE(outputs[i].is_contiguous(torch::MemoryFormat::ChannelsLast))
          << (filter ? "filter=" : "channel=") << world.size() << ": layer '" << model.layer(i).name << "' left "
          << outputs[i].sizes() << " NCHW";
    }
  }
}

TEST(ChannelNet, TooFewChannelsForTheAxisAreRefusedNamingTheLayer) {
  const comm::Communicator& world = *parallel::gSpatialWorld;
  if (world.size() < 3) GTEST_SKIP() << "the model's layers have 2 channels or more";
  const graph::Model model = graph::loadModelFile(PARAXIS_TEST_DATA "/narrow.yaml");
  const parallel::SpatialSplit spatial{world.split(world.rank(), 0), {1, 1}};
  const ChannelSplit slices{world};
  try {
    SpatialNet net(IrNet(model), spatial, {.slices = &slices, .filterAxis = true});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'two' (conv): 2 output channels cannot be split over"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace paraxis::train
