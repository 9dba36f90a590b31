// On a CUDA device (scripts/gpu-check.sh; registered where CMake's PARAXIS_GPU_TESTS is on):
// every layer's output on the GPU equals the CPU's, and training steps leave the same weights,
// within fp32 tolerance. TF32 is off here: with it cuDNN rounds products to 10-bit mantissas,
// and only the order of the fp32 sums may differ between cuDNN and oneDNN.
// Built everywhere LibTorch is, so that the CUDA path compiles against Debian's CPU LibTorch.
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "comm/self/self_transport.hpp"
#include "graph/zoo/zoo.hpp"
#include "train/data_parallel.hpp"
#include "train/device.hpp"
#include "train/ir_module.hpp"
#include "train/torch_runtime.hpp"

namespace paraxis::train {
namespace {

torch::Device cuda() { return torchDevice({.kind = ComputeDevice::Kind::kCuda}, "gpu_test"); }

void fp32Only() {
  at::globalContext().setAllowTF32CuDNN(false);
  at::globalContext().setAllowTF32CuBLAS(false);
}

// |a - b| at its largest over |b| at its largest: the error against the tensor's own scale.
double relativeError(const torch::Tensor& a, const torch::Tensor& b) {
  const double scale = std::max(b.abs().max().item<double>(), 1e-12);
  return (a.to(torch::kCPU, torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>() / scale;
}

struct Case {
  const char* model;
  std::int64_t extent;  // of every spatial axis
  std::int64_t batch;
};

// The done-when of issue #18: ResNet-50 at 224^2, batch 64, and CosmoFlow at 128^3 (batch 4:
// the CPU reference is the slow side). Evaluation mode: dropout draws from a device's own
// generator, so training mode would compare two different masks.
TEST(Gpu, EveryLayerOutputEqualsTheCpuRun) {
  fp32Only();
  configureTorchThreads(0, 1);  // the CPU reference on every core (LibTorch may start with one)
  for (const Case& c : {Case{"resnet50", 224, 64}, Case{"cosmoflow", 128, 4}}) {
    const graph::Model model = graph::buildZooModel(c.model, {.spatial = {c.extent}});
    torch::manual_seed(1);
    IrNet onCpu(model);
    torch::manual_seed(1);
    IrNet onGpu(model, IrNetOptions{.channelsLast = false});
    onGpu->to(cuda());
    onCpu->eval();
    onGpu->eval();
    const graph::TensorShape& shape = model.inputShape();
    std::vector<std::int64_t> dims{c.batch, shape.channels};
    dims.insert(dims.end(), shape.spatial.begin(), shape.spatial.end());
    torch::manual_seed(2);
    const torch::Tensor input = torch::randn(dims);
    torch::NoGradGuard noGrad;
    const std::vector<torch::Tensor> expected = onCpu->run(input);
    const std::vector<torch::Tensor> got = onGpu->run(input.to(cuda()));
    double worst = 0;
    std::string worstLayer;
    int compared = 0;
    for (int i = 1; i < model.size(); ++i) {
      if (!expected[i].defined()) continue;
      ASSERT_TRUE(got[i].defined()) << c.model << " " << model.layer(i).name;
      ASSERT_TRUE(got[i].is_cuda()) << c.model << " " << model.layer(i).name;
      const double error = relativeError(got[i], expected[i]);
      EXPECT_LT(error, 1e-3) << c.model << " layer " << model.layer(i).name;
      if (error >= worst) {
        worst = error;
        worstLayer = model.layer(i).name;
      }
      ++compared;
    }
    std::cout << c.model << " " << c.extent << " batch " << c.batch << ": " << compared
              << " layer outputs, largest relative difference " << worst << " (" << worstLayer << ")\n";
  }
}

// Data-parallel steps on one rank of small-cnn (batch norm over 16 samples, learning rate 0.05,
// Nesterov momentum): the weights after `steps` steps, taken to the CPU.
std::vector<torch::Tensor> trainSmallCnn(const torch::Device& device, bool channelsLast, int steps) {
  const graph::Model model = graph::buildZooModel("small-cnn", {.spatial = {32}});
  torch::manual_seed(3);
  const torch::Tensor x = torch::randn({3 * 16, 3, 32, 32});
  const torch::Tensor y = torch::randint(10, {3 * 16}, torch::kInt64);
  const comm::Communicator self(comm::self::makeSelfTransport());
  torch::manual_seed(7);
  IrNet net(model, IrNetOptions{.channelsLast = channelsLast});
  net->to(device);
  DataParallelStep dp(self, net, GradientComm{}, {0.9, true, 1e-4});
  for (int s = 0; s < steps; ++s) dp.step(x.narrow(0, 16 * s, 16).to(device), y.narrow(0, 16 * s, 16).to(device), 0.05);
  dp.synchronize();
  std::vector<torch::Tensor> weights;
  for (const torch::Tensor& p : dp.parameters()) {
    EXPECT_EQ(p.device(), device);
    weights.push_back(p.detach().to(torch::kCPU).clone());
  }
  return weights;
}

double worstOf(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& reference) {
  EXPECT_EQ(got.size(), reference.size());
  double worst = 0;
  for (std::size_t i = 0; i < std::min(got.size(), reference.size()); ++i) {
    worst = std::max(worst, relativeError(got[i], reference[i]));
  }
  return worst;
}

// Over several steps, each tensor's difference over the distance it travelled from `start` (both
// at the tensor's own scale), at its largest: where training went, against how far it went.
double worstAgainstTravel(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& reference,
                          const std::vector<torch::Tensor>& start) {
  double worst = 0;
  for (std::size_t i = 0; i < std::min({got.size(), reference.size(), start.size()}); ++i) {
    const double travel = std::max(relativeError(start[i], reference[i]), 1e-12);
    worst = std::max(worst, relativeError(got[i], reference[i]) / travel);
  }
  return worst;
}

// The gradient engine's buffers on the GPU and SGD as multi-tensor kernels (one rank: one
// group, updated after backward, whatever the order asked) against the CPU: one step equal
// within fp32 rounding. Over three steps rounding differences flip near-ties of max pooling
// (which input a window's gradient goes to): two CPU layouts of the same run (NHWC against NCHW)
// end 3.0e-3 apart on one machine and 2.8e-6 on another, and the H100 3.0e-3 from NHWC, all in
// block1 and block2, a hundredth of the distance those weights travelled. So three steps are
// held to 5 % of the distance travelled: a wrong momentum, learning rate or lost update moves
// weights by a large part of it.
TEST(Gpu, TrainingStepsLeaveTheCpuWeights) {
  fp32Only();
  const double oneStep = worstOf(trainSmallCnn(cuda(), false, 1), trainSmallCnn(torch::kCPU, true, 1));
  const std::vector<torch::Tensor> start = trainSmallCnn(torch::kCPU, true, 0);
  const std::vector<torch::Tensor> cpu = trainSmallCnn(torch::kCPU, true, 3);
  const std::vector<torch::Tensor> gpu = trainSmallCnn(cuda(), false, 3);
  const std::vector<torch::Tensor> otherLayout = trainSmallCnn(torch::kCPU, false, 3);
  EXPECT_LT(oneStep, 5e-5);
  const double againstTravel = worstAgainstTravel(gpu, cpu, start);
  EXPECT_LT(againstTravel, 0.05);
  std::cout << "small-cnn: largest relative weight difference GPU against CPU " << oneStep << " after 1 step, "
            << worstOf(gpu, cpu) << " after 3 (" << againstTravel << " of the distance travelled); two CPU layouts after 3: "
            << worstOf(otherLayout, cpu) << " (" << worstAgainstTravel(otherLayout, cpu, start) << ")\n";
}

}  // namespace
}  // namespace paraxis::train
