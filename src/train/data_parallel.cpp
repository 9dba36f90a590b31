#include "train/data_parallel.hpp"

#include <chrono>
#include <unordered_map>

namespace paraxis::train {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

DataParallelStep::DataParallelStep(comm::Communicator comm, IrNet net, reduce::EngineOptions engine, SgdOptions sgd)
    : comm_(std::move(comm)), net_(std::move(net)), sgd_(sgd) {
  parameters_ = net_->parameters();
  engine_ = std::make_unique<reduce::GradientEngine>(comm_, parameters_, engine);
  for (const auto& p : parameters_) momentum_.push_back(torch::zeros_like(p));
  sparse_ = engine.density < 1.0;
  // Which groups each layer's weights sit in, for the forward that completes them.
  std::unordered_map<const void*, int> index;
  for (int i = 0; i < static_cast<int>(parameters_.size()); ++i) index[parameters_[i].unsafeGetTensorImpl()] = i;
  std::vector<int> groupOf(parameters_.size(), -1);
  for (int g = 0; g < engine_->groupCount(); ++g) {
    for (int i : engine_->groupOf(g)) groupOf[i] = g;
  }
  groupsOfLayer_.resize(net_->model().size());
  for (int layer = 0; layer < net_->model().size(); ++layer) {
    for (const torch::Tensor& p : net_->layerParameters(layer)) {
      const int g = groupOf.at(index.at(p.unsafeGetTensorImpl()));
      std::vector<int>& groups = groupsOfLayer_[layer];
      if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    }
  }
  pending_.assign(engine_->groupCount(), 0);
  net_->setBeforeLayer([this](int layer) {
    for (int g : groupsOfLayer_[layer]) {
      if (pending_[g] != 0) completeGroup(g);
    }
  });
}

void DataParallelStep::setSparse(bool enabled) {
  synchronize();
  engine_->setSparse(enabled);
  sparse_ = enabled;
}

void DataParallelStep::update(int group, double lr) {
  const auto begin = Clock::now();
  torch::NoGradGuard noGrad;
  const double momentum = pendingMomentum_ ? sgd_.momentum : 0.0;
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
  updating_ += since(begin);
}

void DataParallelStep::completeGroup(int group) {
  const auto begin = Clock::now();
  engine_->awaitGroup(group);
  waiting_ += since(begin);
  pending_[group] = 0;
  update(group, pendingLr_);
}

void DataParallelStep::synchronize() {
  // Forward order (the highest group first), as the next forward would.
  for (int g = static_cast<int>(pending_.size()) - 1; g >= 0; --g) {
    if (pending_[g] != 0) completeGroup(g);
  }
}

double DataParallelStep::step(const torch::Tensor& inputs, const torch::Tensor& targets, double lr) {
  waiting_ = 0;
  updating_ = 0;
  auto start = Clock::now();
  // The previous step's pending groups complete as the layers that use them come up.
  const std::vector<torch::Tensor> outputs = net_->run(inputs);
  const torch::Tensor loss = net_->loss(outputs, targets);
  synchronize();  // groups of weights the forward did not reach
  times_.forward = since(start) - waiting_ - updating_;
  const double carriedWaiting = waiting_;
  const double carriedUpdating = updating_;
  engine_->beginStep();
  start = Clock::now();
  loss.backward();
  times_.backward = since(start);
  pendingLr_ = lr;
  pendingMomentum_ = !sparse_;
  if (engine_->deferred()) {
    engine_->endBackward();
    std::fill(pending_.begin(), pending_.end(), 1);
    // What this step waited for belongs to the previous step's reduction; the figures per
    // step stay comparable because every step carries one such tail.
    times_.exposedCommunication = carriedWaiting;
    times_.totalCommunication = engine_->totalSeconds();
    times_.update = carriedUpdating;
  } else {
    // Each group's parameters are updated the moment its reduction lands, while the later
    // groups are still on the wire.
    updating_ = 0;
    engine_->finishStep([&](int group) { update(group, lr); });
    times_.exposedCommunication = engine_->exposedSeconds();
    times_.totalCommunication = engine_->totalSeconds();
    times_.update = updating_;
  }
  return loss.item<double>();
}

}  // namespace paraxis::train
