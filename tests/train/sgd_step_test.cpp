// train::sgdStep against LibTorch's own SGD, on the fused path (float, laid out alike) and on
// the elementwise one (a channels-last weight with a contiguous gradient).
#include "train/sgd_step.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace paraxis::train {
namespace {

struct Case {
  double momentum, weightDecay;
  bool nesterov, channelsLastWeight;
};

// Three steps of both on the same weights and gradients; the largest difference.
double differenceFromTorch(const Case& c) {
  torch::manual_seed(3);
  torch::Tensor start = torch::randn({8, 4, 3, 3});
  if (c.channelsLastWeight) start = start.contiguous(torch::MemoryFormat::ChannelsLast);
  std::vector<torch::Tensor> grads;
  for (int s = 0; s < 3; ++s) grads.push_back(torch::randn({8, 4, 3, 3}));

  torch::Tensor reference = start.clone().requires_grad_(true);
  torch::optim::SGD sgd({reference}, torch::optim::SGDOptions(0.1).momentum(c.momentum).nesterov(c.nesterov).weight_decay(c.weightDecay));
  torch::Tensor mine = start.clone();
  torch::Tensor momentum = torch::zeros_like(mine);
  const SgdOptions options{c.momentum, c.nesterov, c.weightDecay, false};
  for (const torch::Tensor& g : grads) {
    reference.mutable_grad() = g.clone();
    sgd.step();
    sgdStep(mine, g, momentum, options, 0.1);
  }
  return (mine - reference.detach()).abs().max().item<double>();
}

TEST(SgdStep, MatchesTorchOptimSgd) {
  for (const Case& c : {Case{0.9, 0, false, false}, Case{0.9, 1e-4, false, false}, Case{0.9, 1e-4, true, false},
                        Case{0, 1e-4, false, false}, Case{0.9, 1e-4, true, true}, Case{0.5, 0, false, true}}) {
    EXPECT_LT(differenceFromTorch(c), 1e-6) << "momentum " << c.momentum << " weight decay " << c.weightDecay
                                            << " nesterov " << c.nesterov << " channels-last " << c.channelsLastWeight;
  }
}

TEST(SgdStep, AParameterWithoutGradientKeepsItsValue) {
  torch::Tensor p = torch::ones({4});
  torch::Tensor m = torch::zeros({4});
  sgdStep(p, torch::Tensor(), m, SgdOptions{}, 0.1);
  EXPECT_TRUE(torch::equal(p, torch::ones({4})));
}

}  // namespace
}  // namespace paraxis::train
