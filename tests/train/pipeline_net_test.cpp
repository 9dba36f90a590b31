// Pipelines (PipelineNet: stages from plan::modelStages, instruction streams from
// plan::pipelineSteps, non-blocking point-to-point between stages) train like one rank: after
// five SGD steps the gathered weights equal the one-rank run's within 1e-9 in float64, under
// GPipe and 1F1B, with one micro-batch and with four (models without batch-norm: micro-batches
// change batch-norm's statistics), across skip connections that cross a stage boundary
// (ResNet-20, and ResNet-18 at 64^2), batch-norm on stages (small-cnn), one stage per rank;
// at 4 ranks two stages of two, each running h=2 or filter=2 within the stage (LeNet, ResNet-20). Linked into parallel_test (mpirun at 2, 3 and 4 ranks).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "comm/allreduce.hpp"
#include "comm/communicator.hpp"
#include "graph/zoo/zoo.hpp"
#include "reduce/gradient_engine.hpp"
#include "train/dataset.hpp"
#include "train/net_test_support.hpp"
#include "train/pipeline_net.hpp"
#include "train/spatial_net.hpp"

namespace paraxis::parallel {
extern comm::Communicator* gSpatialWorld;
}

namespace paraxis::train {
namespace {

using testing::freshNet;
using testing::kSteps;
using testing::maxRelative;
using testing::sgd;
constexpr std::int64_t kBatch = 8;

struct Case {
  std::string model;
  std::vector<std::int64_t> input;
  int micro = 1;
  plan::PipelineSchedule schedule = plan::PipelineSchedule::kOneFOneB;
};

void expectFiveStepsEqualOneRank(const Case& c) {
  const comm::Communicator& world = *parallel::gSpatialWorld;
  const graph::Model model = graph::buildZooModel(c.model, {.spatial = c.input});
  const Dataset data = syntheticDataset(model.inputShape(), targetOf(model), kSteps * kBatch, 3);
  const torch::Tensor x = data.images.to(torch::kFloat64);
  IrNet serial = testing::trainSerially(model, data, kBatch);
  const PipelineLinks links = pipelineLinks(world, world.size());
  IrNet net = freshNet(model);
  PipelineNet pipeline(net, links, c.micro, c.schedule);
  std::vector<torch::Tensor> held;
  for (int i = 0; i < model.size(); ++i) {
    if (!pipeline.holdsLayer(i)) continue;
    for (const torch::Tensor& p : net->layerParameters(i)) held.push_back(p);
  }
  reduce::GradientEngine engine(world.split(world.rank(), 0), {}, GradientComm{});  // holds nothing: readiness only
  for (int s = 0; s < kSteps; ++s) {
    pipeline.forwardBackward(x.narrow(0, kBatch * s, kBatch), data.labels.narrow(0, kBatch * s, kBatch), engine);
    sgd(held);
  }
  const std::vector<torch::Tensor> whole = pipeline.wholeParameters();
  ASSERT_EQ(whole.size(), serial->parameters().size());
  EXPECT_LT(maxRelative(whole, serial->parameters()), 1e-9) << c.model << " on " << world.size() << " stages, " << c.micro << " micro-batches, "
                         << plan::scheduleName(c.schedule) << " (" << pipeline.describe() << ")";
}

TEST(PipelineNet, FiveStepsEqualOneRank) {
  for (plan::PipelineSchedule schedule : {plan::PipelineSchedule::kGPipe, plan::PipelineSchedule::kOneFOneB}) {
    expectFiveStepsEqualOneRank({"lenet", {28, 28}, 1, schedule});
    expectFiveStepsEqualOneRank({"lenet", {28, 28}, 4, schedule});
    expectFiveStepsEqualOneRank({"cifar-resnet20", {32, 32}, 1, schedule});
  }
  expectFiveStepsEqualOneRank({"small-cnn", {32, 32}, 1, plan::PipelineSchedule::kOneFOneB});
  expectFiveStepsEqualOneRank({"resnet18", {64, 64}, 1, plan::PipelineSchedule::kGPipe});
}

// Two stages of two ranks each (rank = stage x 2 + place): within a stage h=2 (spatial blocks,
// their partial weight gradients averaged over the stage's pair, as the engine does) or
// filter=2 (weights split over the pair), tensors crossing the boundary place to place.
void expectInnerAxesEqualOneRank(const std::string& name, std::vector<std::int64_t> input, bool filter, int micro) {
  const comm::Communicator& world = *parallel::gSpatialWorld;
  const graph::Model model = graph::buildZooModel(name, {.spatial = input});
  const Dataset data = syntheticDataset(model.inputShape(), targetOf(model), kSteps * kBatch, 3);
  const torch::Tensor x = data.images.to(torch::kFloat64);
  IrNet serial = testing::trainSerially(model, data, kBatch);
  const PipelineLinks links = pipelineLinks(world, 2, 2);
  const comm::Communicator pair = world.split(world.rank() / 2, world.rank());
  const parallel::SpatialSplit spatial{filter ? world.split(world.rank(), 0) : pair, filter ? std::vector<int>{1, 1}
                                                                                             : std::vector<int>{2, 1}};
  const parallel::ChannelSplit slices{pair};
  IrNet net = freshNet(model);
  SpatialOptions options;
  if (filter) options.slices = &slices;
  PipelineNet pipeline(net, links, micro, plan::PipelineSchedule::kOneFOneB, {},
                       std::make_unique<SpatialNet>(net, spatial, options));
  reduce::GradientEngine engine(world.split(world.rank(), 0), {}, GradientComm{});  // readiness only
  for (int s = 0; s < kSteps; ++s) {
    pipeline.forwardBackward(x.narrow(0, kBatch * s, kBatch), data.labels.narrow(0, kBatch * s, kBatch), engine);
    std::vector<torch::Tensor> held;
    for (int i = 0; i < model.size(); ++i) {
      if (!pipeline.holdsLayer(i)) continue;
      for (const torch::Tensor& p : net->layerParameters(i)) {
        if (!filter && p.grad().defined()) {
          torch::Tensor g = p.grad().contiguous();
          comm::allreduce(pair, g.data_ptr<double>(), g.data_ptr<double>(), static_cast<std::size_t>(g.numel()),
                          comm::DataType::kF64);
          p.mutable_grad().copy_(g / 2);
        }
        held.push_back(p);
      }
    }
    sgd(held);
  }
  const std::vector<torch::Tensor> whole = pipeline.wholeParameters();
  EXPECT_LT(maxRelative(whole, serial->parameters()), 1e-9) << name << (filter ? " pipeline=2 x filter=2" : " pipeline=2 x h=2")
                                                            << " (" << pipeline.describe() << ")";
}

TEST(PipelineNet, InnerAxesWithinStagesEqualOneRank) {
  if (parallel::gSpatialWorld->size() != 4) GTEST_SKIP() << "two stages of two ranks";
  for (bool filter : {false, true}) {
    expectInnerAxesEqualOneRank("lenet", {28, 28}, filter, 2);
    expectInnerAxesEqualOneRank("cifar-resnet20", {32, 32}, filter, 1);  // batch-norm: one micro-batch
  }
}

TEST(PipelineNet, EvaluationGivesEveryStageTheLastStagesPrediction) {
  const comm::Communicator& world = *parallel::gSpatialWorld;
  const graph::Model model = graph::buildZooModel("lenet");
  const Dataset data = syntheticDataset(model.inputShape(), targetOf(model), kBatch, 3);
  IrNet serial = freshNet(model);
  const torch::Tensor expected = serial->prediction(serial->run(data.images.to(torch::kFloat64)));
  const PipelineLinks links = pipelineLinks(world, world.size());
  PipelineNet pipeline(freshNet(model), links, 2, plan::PipelineSchedule::kOneFOneB);
  const torch::Tensor got = pipeline.prediction(pipeline.run(data.images.to(torch::kFloat64)));
  EXPECT_LT((got - expected).abs().max().item<double>(), 1e-12);
}

}  // namespace
}  // namespace paraxis::train
