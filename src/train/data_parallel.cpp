#include "train/data_parallel.hpp"

#include <chrono>

#include "core/check.hpp"
#include "core/trace.hpp"
#include "train/device.hpp"

namespace paraxis::train {
namespace {

using Clock = std::chrono::steady_clock;

// Seconds since `start`; the interval goes into the trace (when on) under `category`, the
// breakdown's name for it, so that the trace's times are the breakdown's own.
double traced(const char* category, Clock::time_point start) {
  const auto end = Clock::now();
  trace::complete(category, category, start, end);
  return std::chrono::duration<double>(end - start).count();
}

}  // namespace

DataParallelStep::DataParallelStep(comm::Communicator comm, IrNet net, GradientComm gradientComm, SgdOptions sgd,
                                   std::unique_ptr<BatchExecutor> executor)
    : comm_(std::move(comm)), net_(std::move(net)),
      executor_(executor ? std::move(executor) : std::make_unique<PlainExecutor>(net_)), sgd_(sgd) {
  reduce::GradientEngine::Layers layers;
  bool all = true;
  for (int layer = 0; layer < net_->model().size(); ++layer) {
    const bool held = executor_->holdsLayer(layer);
    all = all && held;
    layers.push_back(held ? net_->layerParameters(layer) : std::vector<torch::Tensor>{});
    parameters_.insert(parameters_.end(), layers.back().begin(), layers.back().end());
  }
  check(!all || parameters_.size() == net_->parameters().size(), "every parameter belongs to one IR layer");
  if (!net_->parameters().empty()) device_ = net_->parameters().front().device();
  engine_ = std::make_unique<reduce::GradientEngine>(comm_, std::move(layers), settingsFor(gradientComm), sgd.momentum);
  for (const auto& p : parameters_) momentum_.push_back(torch::zeros_like(p));
  sparse_ = gradientComm.sparse();
  // Which groups each layer's weights sit in, for the forward that completes them.
  groupsOfLayer_.resize(net_->model().size());
  for (int g = 0; g < engine_->groupCount(); ++g) {
    for (int layer : engine_->groupLayers(g)) groupsOfLayer_[layer].push_back(g);
  }
  pending_.assign(engine_->groupCount(), 0);
  net_->setBeforeLayer([this](int layer) {
    for (int g : groupsOfLayer_[layer]) {
      if (pending_[g] != 0) completeGroup(g);
    }
  });
}

DataParallelStep::~DataParallelStep() { net_->setBeforeLayer({}); }

// One rank alone has nothing to reduce or overlap: one group, updated right after backward, so
// that a GPU's SGD runs as one set of multi-tensor kernels instead of one per group inside the
// next forward (ResNet-50 at batch 64 on an H200: 1.1 ms an update in 4 groups).
GradientComm DataParallelStep::settingsFor(GradientComm settings) const {
  if (comm_.size() > 1 || settings.sparse()) return settings;
  settings.grouping = Grouping::kGroups;
  settings.groups = 1;
  settings.order = ReduceOrder::kFifo;
  settings.negotiation = Negotiation::kNone;
  return settings;
}

void DataParallelStep::setSparse(bool enabled) {
  synchronize();
  engine_->setSparse(enabled);
  sparse_ = enabled;
}

void DataParallelStep::update(int group, double lr) {
  synchronizeDevice(device_);  // the forward's kernels so far are the forward's
  const auto begin = Clock::now();
  torch::NoGradGuard noGrad;
  SgdOptions step = sgd_;
  if (!pendingMomentum_) step.momentum = 0;  // the chunk-sparse wire's residuals carry the momentum
  if (sgd_.skipNonFinite) {
    for (int i : engine_->groupOf(group)) {
      if (!torch::isfinite(parameters_[i].grad()).all().item<bool>()) {
        ++skipped_;
        updating_ += traced("update", begin);
        return;
      }
    }
  }
  std::vector<torch::Tensor> params, grads, moments;
  for (int i : engine_->groupOf(group)) {
    params.push_back(parameters_[i]);
    grads.push_back(parameters_[i].grad());
    moments.push_back(momentum_[i]);
  }
  sgdStepGroup(params, grads, moments, step, lr);
  synchronizeDevice(device_);
  updating_ += traced("update", begin);
}

void DataParallelStep::completeGroup(int group) {
  const auto begin = Clock::now();
  engine_->awaitGroup(group);
  waiting_ += traced("gradient_exposed", begin);
  pending_[group] = 0;
  update(group, pendingLr_);
}

void DataParallelStep::synchronize() {
  // Forward order (the highest group first), as the next forward would.
  for (int g = static_cast<int>(pending_.size()) - 1; g >= 0; --g) {
    if (pending_[g] != 0) completeGroup(g);
  }
}

// The engine zeroes every gradient buffer before backward accumulates into it: counted in
// `update`, where the oracle prices it too, else the step holds time no term of the breakdown
// does (2.1-2.8 ms of a ResNet-18 64² step, 46.8 MB of gradients on 2 ranks; 0.11-0.17 ms of
// LeNet's and small-cnn's: 1.4-3.2 % of each step).
double DataParallelStep::zeroGradients() {
  const auto begin = Clock::now();
  engine_->beginStep();
  synchronizeDevice(device_);
  const auto end = Clock::now();
  trace::complete("update", "zero gradients", begin, end);
  return std::chrono::duration<double>(end - begin).count();
}

double DataParallelStep::step(const torch::Tensor& inputs, const torch::Tensor& targets, double lr) {
  waiting_ = 0;
  updating_ = 0;
  auto start = Clock::now();
  double value = 0;
  const bool pipelined = scheduledPass(inputs, targets, &value);
  if (!pipelined) {
    // The previous step's pending groups complete as the layers that use them come up.
    const std::vector<torch::Tensor> outputs = executor_->run(inputs);
    const torch::Tensor loss = executor_->loss(outputs, targets);
    synchronize();  // groups of weights the forward did not reach
    synchronizeDevice(device_);  // a GPU's clock: the kernels run, not their launch
    times_.forward = traced("forward", start) - waiting_ - updating_;
    updating_ += zeroGradients();
    start = Clock::now();
    loss.backward();
    synchronizeDevice(device_);
    const auto finished = Clock::now();
    trace::complete("backward", "backward", start, finished);
    times_.backward = std::chrono::duration<double>(finished - start).count();
    net_->traceLayerBackward(finished);
    value = loss.item<double>();
  }
  const double carriedWaiting = waiting_;
  const double carriedUpdating = updating_;
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
    const auto finishing = Clock::now();
    engine_->finishStep([&](int group) { update(group, lr); });
    traced("gradient_exposed", finishing);  // holds the updates, which the breakdown counts apart
    times_.exposedCommunication = engine_->exposedSeconds();
    times_.totalCommunication = engine_->totalSeconds();
    times_.update = carriedUpdating + updating_;  // the zeroing before backward, then the groups'
  }
  return value;
}

bool DataParallelStep::scheduledPass(const torch::Tensor& inputs, const torch::Tensor& targets, double* loss) {
  if (!executor_->schedulesMicroBatches()) return false;
  // Every pending update lands before the buffers are zeroed: a pipeline's backward passes
  // start while its forwards are still running.
  synchronize();
  updating_ += zeroGradients();
  const auto start = Clock::now();
  const BatchExecutor::Pass pass = executor_->forwardBackward(inputs, targets, *engine_);
  traced("pipeline_pass", start);  // forwards and backwards of the micro-batches, interleaved
  *loss = pass.loss;
  times_.forward = pass.forwardSeconds;
  times_.backward = pass.backwardSeconds;
  return true;
}

}  // namespace paraxis::train
