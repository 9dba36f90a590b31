// Each layer's share of one whole backward (calib/torch/backward_clock.hpp), which the compute
// bench fits the device to: every layer that computes has a time, the shares add up to no more
// than the backward took, a residual block's shortcut is its own 1x1 convolution's time (not the
// whole block's, as intervals between gradient arrivals made it), and no hook stays behind.
#include "calib/torch/backward_clock.hpp"

#include <gtest/gtest.h>
#include <torch/csrc/autograd/function.h>

#include <algorithm>
#include <chrono>

#include "graph/zoo/zoo.hpp"
#include "train/ir_module.hpp"

namespace paraxis::calib {
namespace {

struct Timed {
  std::vector<double> seconds;
  double wall = 0;  // the forward's end to the backward's
};

Timed timeBackward(train::IrNet& net, const torch::Tensor& input) {
  const graph::Model& model = net->model();
  BackwardClock clock(model.size());
  net->setBeforeLayer([&](int i) { clock.beforeLayer(i); });
  const std::vector<torch::Tensor> outputs = net->run(input);
  clock.forwardDone();
  net->setBeforeLayer(nullptr);
  const torch::Tensor& y = net->prediction(outputs);
  const auto start = std::chrono::steady_clock::now();
  Timed t{clock.backward(y, torch::ones_like(y))};
  t.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return t;
}

TEST(BackwardClock, EveryLayerThatComputesHasAShareAndTheyAddUpToTheBackward) {
  const graph::Model model = graph::buildZooModel("small-cnn", {.spatial = {32}, .classes = 4});
  train::IrNet net(model);
  net->train();
  const Timed t = timeBackward(net, torch::randn({4, 3, 32, 32}));
  ASSERT_EQ(t.seconds.size(), static_cast<std::size_t>(model.size()));
  double sum = 0;
  for (int i = 1; i < model.size(); ++i) {
    const graph::Layer& layer = model.layer(i);
    if (layer.kind == graph::LayerKind::kSoftmaxLoss) {
      EXPECT_EQ(t.seconds[i], 0) << layer.name;  // the backward starts at its input
    } else if (layer.counts.forwardFlops > 0) {
      EXPECT_GT(t.seconds[i], 0) << layer.name;
    }
    sum += t.seconds[i];
  }
  EXPECT_LE(sum, t.wall);
  EXPECT_GT(sum, 0.5 * t.wall);  // the nodes are the backward's work, not a share of it
  for (const torch::Tensor& p : net->parameters()) {
    EXPECT_TRUE(torch::autograd::impl::grad_accumulator(p)->post_hooks().empty());
  }
}

TEST(BackwardClock, AShortcutsConvolutionIsTimedApartFromTheBlock) {
  const graph::Model model = graph::buildZooModel("resnet18", {.spatial = {32}, .classes = 4});
  train::IrNet net(model);
  net->train();
  const torch::Tensor input = torch::randn({4, 3, 32, 32});
  auto index = [&](const std::string& name) {
    for (int i = 1; i < model.size(); ++i) {
      if (model.layer(i).name == name) return i;
    }
    ADD_FAILURE() << "no layer " << name;
    return 0;
  };
  const int shortcut = index("layer2.0.downsample.0"), conv1 = index("layer2.0.conv1"), conv2 = index("layer2.0.conv2");
  std::vector<double> ratios;  // over three passes, a preempted one aside
  for (int pass = 0; pass < 3; ++pass) {
    const Timed t = timeBackward(net, input);
    ratios.push_back(t.seconds[shortcut] / (t.seconds[conv1] + t.seconds[conv2]));
  }
  std::sort(ratios.begin(), ratios.end());
  // A 1x1 convolution against two 3x3 ones (one at twice the channels): about 1/27 of their
  // FLOPs; the whole block's interval made it several times theirs.
  EXPECT_GT(ratios[1], 0);
  EXPECT_LT(ratios[1], 0.5);
}

}  // namespace
}  // namespace paraxis::calib
