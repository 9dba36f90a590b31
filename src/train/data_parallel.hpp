#pragma once
// One training step: forward and loss on the local batch (through a BatchExecutor: the plain
// net, or a distributed one), backward with the gradient engine reducing groups over every
// rank of `comm` as they become ready, then SGD. Every rank holds the same weights (same seed)
// and, after the step, the same weights again.
#include <torch/torch.h>

#include <memory>

#include "comm/communicator.hpp"
#include "core/gradient_comm.hpp"
#include "reduce/gradient_engine.hpp"
#include "train/executor.hpp"
#include "train/ir_module.hpp"
#include "train/sgd_step.hpp"

namespace paraxis::train {

struct StepTimes {  // seconds of the last step
  double forward = 0, backward = 0, exposedCommunication = 0, totalCommunication = 0, update = 0;
};

class DataParallelStep {
 public:
  // `executor` runs `net`'s batches (null: the plain net on the whole local batch).
  DataParallelStep(comm::Communicator comm, IrNet net, GradientComm gradientComm, SgdOptions sgd,
                   std::unique_ptr<BatchExecutor> executor = nullptr);
  DataParallelStep(const DataParallelStep&) = delete;  // the net's before-layer hook holds `this`
  DataParallelStep& operator=(const DataParallelStep&) = delete;
  DataParallelStep(DataParallelStep&&) = delete;
  DataParallelStep& operator=(DataParallelStep&&) = delete;
  ~DataParallelStep();

  // Returns this rank's loss (executor().replicaLoss turns it into the replica's). Gradients
  // are averaged over ranks before the update.
  double step(const torch::Tensor& inputs, const torch::Tensor& targets, double learningRate);

  IrNet& net() { return net_; }
  BatchExecutor& executor() { return *executor_; }
  // Every parameter, in the engine's order (layer by layer, forward); groupOf indexes it.
  const std::vector<torch::Tensor>& parameters() const { return parameters_; }
  reduce::GradientEngine& engine() { return *engine_; }
  std::vector<torch::Tensor>& momentumBuffers() { return momentum_; }
  const StepTimes& times() const { return times_; }
  // Group updates skipped for non-finite gradients (SgdOptions::skipNonFinite), since the start.
  std::int64_t skippedUpdates() const { return skipped_; }
  // Chunk-sparse communication carries its own momentum correction: SGD momentum is off
  // while it is active (dense warm-up keeps it).
  void setSparse(bool enabled);
  // With forward-priority order a step returns before every group is reduced: the next
  // forward completes each layer's update just before the layer runs. Call this before
  // reading the weights or optimizer state (evaluation, checkpoints, the end).
  void synchronize();

 private:
  comm::Communicator comm_;
  IrNet net_;
  torch::Device device_ = torch::kCPU;  // the net's: a GPU's phases end with a synchronisation
  std::unique_ptr<BatchExecutor> executor_;
  std::vector<torch::Tensor> parameters_;  // the engine's order: layer by layer, forward
  std::unique_ptr<reduce::GradientEngine> engine_;
  SgdOptions sgd_;
  bool sparse_ = false;
  std::vector<torch::Tensor> momentum_;
  StepTimes times_;
  void update(int group, double lr);
  GradientComm settingsFor(GradientComm settings) const;  // the engine's, for this rank count
  // A pass the executor schedules itself (pipeline micro-batches); false when it does not.
  bool scheduledPass(const torch::Tensor& inputs, const torch::Tensor& targets, double* loss);
  void completeGroup(int group);     // waits for and applies a pending group's update
  double zeroGradients();            // the engine's beginStep, timed: seconds
  std::vector<std::vector<int>> groupsOfLayer_;  // IR layer -> the engine groups of its parameters
  std::vector<std::uint8_t> pending_;            // per group: reduced in the background, not yet applied
  double pendingLr_ = 0;
  bool pendingMomentum_ = true;
  double waiting_ = 0;   // seconds waited for pending groups since the last step began
  double updating_ = 0;  // seconds of updates and of zeroing the gradients since the last step began
  std::int64_t skipped_ = 0;
};

}  // namespace paraxis::train
