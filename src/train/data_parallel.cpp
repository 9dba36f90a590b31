#include "train/data_parallel.hpp"

#include <chrono>

namespace paraxis::train {
namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

DataParallelStep::DataParallelStep(comm::Communicator comm, IrNet net, reduce::EngineOptions engine, SgdOptions sgd)
    : comm_(std::move(comm)), net_(std::move(net)), sgd_(sgd) {
  parameters_ = net_->parameters();
  engine_ = std::make_unique<reduce::GradientEngine>(comm_, parameters_, engine);
  for (const auto& p : parameters_) momentum_.push_back(torch::zeros_like(p));
  sparse_ = engine.density < 1.0;
}

void DataParallelStep::setSparse(bool enabled) {
  engine_->setSparse(enabled);
  sparse_ = enabled;
}

double DataParallelStep::step(const torch::Tensor& inputs, const torch::Tensor& targets, double lr) {
  using Clock = std::chrono::steady_clock;
  engine_->beginStep();
  auto start = Clock::now();
  const std::vector<torch::Tensor> outputs = net_->run(inputs);
  const torch::Tensor loss = net_->loss(outputs, targets);
  times_.forward = since(start);
  start = Clock::now();
  loss.backward();
  times_.backward = since(start);
  // Each group's parameters are updated the moment its reduction lands, while the later
  // groups are still on the wire.
  const double momentum = sparse_ ? 0.0 : sgd_.momentum;
  double updating = 0;
  auto update = [&](int group) {
    const auto begin = Clock::now();
    torch::NoGradGuard noGrad;
    for (int i : engine_->groupOf(group)) {
      torch::Tensor& p = parameters_[i];
      torch::Tensor g = p.grad();
      if (sgd_.weightDecay != 0) g = g.add(p, sgd_.weightDecay);
      if (momentum != 0) {
        momentum_[i].mul_(momentum).add_(g);
        g = sgd_.nesterov ? g.add(momentum_[i], momentum) : momentum_[i];
      }
      p.sub_(g, lr);
    }
    updating += since(begin);
  };
  engine_->finishStep(update);
  times_.exposedCommunication = engine_->exposedSeconds();
  times_.totalCommunication = engine_->totalSeconds();
  times_.update = updating;
  return loss.item<double>();
}

}  // namespace paraxis::train
