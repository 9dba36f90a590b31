#pragma once
// How one rank runs a batch through the model: the plain net (every rank a whole replica, data
// parallelism) or a distributed executor (spatial_net.hpp). The training step and evaluation
// see only this, so every strategy shares the loop, the gradient engine and the report.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "parallel/comm_time.hpp"
#include "train/ir_module.hpp"

namespace paraxis::reduce {
class GradientEngine;
}

namespace paraxis::train {

class BatchExecutor {
 public:
  virtual ~BatchExecutor() = default;
  // Every layer's output on this rank for the batch of its data replica (all its samples).
  virtual std::vector<torch::Tensor> run(const torch::Tensor& batch) = 0;
  // This rank's loss: its gradients, averaged over every rank that holds the weights, are the
  // gradients of the mean loss over the global batch.
  virtual torch::Tensor loss(const std::vector<torch::Tensor>& outputs, const torch::Tensor& target) = 0;
  // The part of the main loss's input this rank holds, and the matching part of the target.
  virtual torch::Tensor prediction(const std::vector<torch::Tensor>& outputs) = 0;
  virtual torch::Tensor targetPart(const torch::Tensor& target) = 0;
  // The replica's mean loss from this rank's loss() value (a collective where ranks share a replica).
  virtual double replicaLoss(double local) = 0;
  // This rank's share of its replica's samples, for weighting evaluation sums.
  virtual double share() const = 0;
  // The distributed layers' communication in the last run() and the backward pass after it.
  struct LayerComm {
    parallel::CommTimes forward, backward;
    double pipelineTransfers = 0;  // pipelines: activations and gradients on the wire
    double bubble = 0;             // pipelines: this stage idle, waiting for its neighbours
  };
  virtual LayerComm layerComm() const { return {}; }
  // How the model is laid out over the ranks, for progress output (empty: a whole replica).
  virtual std::string describe() const { return {}; }
  // The whole model's parameters, as a one-rank run holds them (a collective where ranks hold
  // slices of them).
  virtual std::vector<torch::Tensor> wholeParameters() = 0;
  // The layers whose weights this rank holds and updates (a pipeline stage's); all by default.
  virtual bool holdsLayer(int /*layer*/) const { return true; }
  // Executors that schedule micro-batches themselves (pipelines) run a step's forward and
  // backward passes in forwardBackward (holding the engine's readiness until the last
  // backward) and return this rank's loss and its forward and backward compute seconds; for
  // the others the step runs forward, loss and backward itself.
  struct Pass {
    double loss = 0, forwardSeconds = 0, backwardSeconds = 0;
  };
  virtual bool schedulesMicroBatches() const { return false; }
  virtual Pass forwardBackward(const torch::Tensor& /*batch*/, const torch::Tensor& /*target*/,
                               reduce::GradientEngine& /*engine*/) {
    return {};
  }
};

class PlainExecutor final : public BatchExecutor {
 public:
  explicit PlainExecutor(IrNet net) : net_(std::move(net)) {}
  std::vector<torch::Tensor> run(const torch::Tensor& batch) override { return net_->run(batch); }
  torch::Tensor loss(const std::vector<torch::Tensor>& outputs, const torch::Tensor& target) override {
    return net_->loss(outputs, target);
  }
  torch::Tensor prediction(const std::vector<torch::Tensor>& outputs) override { return net_->prediction(outputs); }
  torch::Tensor targetPart(const torch::Tensor& target) override { return target; }
  double replicaLoss(double local) override { return local; }
  double share() const override { return 1.0; }
  std::vector<torch::Tensor> wholeParameters() override { return net_->parameters(); }

 private:
  IrNet net_;
};

}  // namespace paraxis::train
