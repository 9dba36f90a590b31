#pragma once
// An IR model run as a pipeline on the ranks of one data replica (GPipe; PipeDream-flush
// 1F1B): each rank is a stage holding a contiguous run of layers (plan::modelStages: the
// oracle's balanced partition), the replica's batch is cut into micro-batches, and each stage
// runs its instruction stream (plan::pipelineSteps) of forward and backward passes. The
// tensors that cross a stage boundary (the last layer's output, and any skip connection over
// it) travel by non-blocking point-to-point (comm::Posted: posted and completed by the stage's
// own thread) on one communicator per link and direction: receives are posted for the whole
// step up front, sends go out as soon as a pass ends, and the stage computes while they travel.
//
// Gradients of a stage's weights accumulate over the micro-batches; the gradient engine
// (reducing over the ranks that hold the same stage: the data replicas) counts them ready only
// in the stage's last backward pass. The last stage computes the loss of each micro-batch,
// weighted by its share of the replica's batch, so the accumulated gradients are the replica
// batch's mean loss's.
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/posted.hpp"
#include "plan/strategy.hpp"
#include "train/executor.hpp"
#include "train/ir_module.hpp"
#include "train/spatial_net.hpp"

namespace paraxis::train {

// A stage's communicators: its replica's stages (rank = stage) and, per neighbour, one
// two-rank communicator for activations and one for gradients (the lower stage is rank 0).
struct PipelineLinks {
  comm::Communicator stages;
  std::optional<comm::Communicator> activationsIn, gradientsOut;  // with the previous stage
  std::optional<comm::Communicator> activationsOut, gradientsIn;  // with the next stage
};

// Collective over `world`, laid out data x pipeline x `inner` ranks a stage (rank = (replica x
// stages + stage) x inner + place): links join the ranks of one place in neighbouring stages.
PipelineLinks pipelineLinks(const comm::Communicator& world, int stages, int inner = 1);

class PipelineNet final : public BatchExecutor {
 public:
  // `stageOf`: each layer's stage, the same on every rank (empty: plan::modelStages by FLOPs).
  // `inner`: the spatial, filter or channel axes within a stage (a SpatialNet over the stage's
  // ranks of this place's replica and the same net; null: a stage is one rank), which runs the
  // stage's layers; tensors cross a boundary as the inner axes hold them, place to place.
  // Throws ConfigError (plan::pipelineProblem's line) for a model the stages cannot run.
  // `links` must outlive the net.
  PipelineNet(IrNet net, const PipelineLinks& links, int microBatches, plan::PipelineSchedule schedule,
              std::vector<int> stageOf = {}, std::unique_ptr<SpatialNet> inner = nullptr);

  // Evaluation: the whole batch through the stages; every stage returns the last stage's
  // prediction (so loss, prediction and accuracy agree on every rank).
  std::vector<torch::Tensor> run(const torch::Tensor& batch) override;
  torch::Tensor loss(const std::vector<torch::Tensor>& outputs, const torch::Tensor& target) override;
  torch::Tensor prediction(const std::vector<torch::Tensor>& outputs) override;
  torch::Tensor targetPart(const torch::Tensor& target) override;
  double replicaLoss(double local) override;
  double share() const override;
  std::vector<torch::Tensor> wholeParameters() override;
  bool holdsLayer(int layer) const override { return stageOf_.at(layer) == stage_; }
  bool schedulesMicroBatches() const override { return true; }
  Pass forwardBackward(const torch::Tensor& batch, const torch::Tensor& target, reduce::GradientEngine& engine) override;
  LayerComm layerComm() const override;
  std::string describe() const override;

  int stage() const { return stage_; }
  const std::vector<int>& stageOf() const { return stageOf_; }

 private:
  struct InFlight;  // one micro-batch between its forward and its backward on this stage
  struct Buffers;   // the step's posted receives and pending sends
  bool last() const { return stage_ == links_.stages.size() - 1; }
  std::vector<std::int64_t> shapeOf(int layer, std::int64_t samples) const;
  // Tensors cross stages in the layers' layout (IrNet::layoutOf), so that a stage fed NCHW does
  // not run NHWC's layers on the slow mixed-layout paths: sent contiguous so, received into it.
  torch::Tensor onWire(const torch::Tensor& t) const { return t.contiguous(net_->layoutOf(t.dim())); }
  torch::Tensor wireBuffer(const std::vector<std::int64_t>& shape, const torch::TensorOptions& options) const {
    return torch::empty(shape, options.memory_format(net_->layoutOf(static_cast<std::int64_t>(shape.size()))));
  }
  // The stage's layers on `outputs` (the micro-batch's input or the received tensors set).
  void forwardLayers(std::vector<torch::Tensor>& outputs);
  void forwardPass(int micro, const torch::Tensor& batch, const torch::Tensor& target, Buffers& b, InFlight& f);
  void backwardPass(int micro, Buffers& b, InFlight& f);
  torch::Tensor await(comm::Posted& message, const torch::Tensor& buffer, Buffers& b);

  IrNet net_;
  const PipelineLinks& links_;
  int micro_;
  plan::PipelineSchedule schedule_;
  int stage_;
  std::vector<int> stageOf_;
  std::vector<int> received_;  // layers whose outputs arrive from the previous stage (ascending)
  std::vector<int> sent_;      // layers whose outputs go to the next stage (ascending)
  std::int64_t batch_ = 0;     // the replica batch of this step
  double waited_ = 0;          // seconds the compute waited on receives in this step
  LayerComm comm_;
  std::unique_ptr<SpatialNet> inner_;
};

}  // namespace paraxis::train
