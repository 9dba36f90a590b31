#include "train/pipeline_net.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>

#include "comm/collectives.hpp"
#include "comm/posted.hpp"
#include "core/error.hpp"
#include "parallel/spatial_split.hpp"
#include "plan/pipeline_schedule.hpp"
#include "reduce/gradient_engine.hpp"

namespace paraxis::train {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

bool isLoss(graph::LayerKind k) { return k == graph::LayerKind::kSoftmaxLoss || k == graph::LayerKind::kMseLoss; }

// Releases the engine's readiness however the step ends.
struct ReadinessHold {
  explicit ReadinessHold(reduce::GradientEngine& e) : engine(e) { engine.holdReadiness(true); }
  ~ReadinessHold() { engine.holdReadiness(false); }
  ReadinessHold(const ReadinessHold&) = delete;
  ReadinessHold& operator=(const ReadinessHold&) = delete;
  reduce::GradientEngine& engine;
};

}  // namespace

struct PipelineNet::InFlight {
  std::vector<torch::Tensor> leaves;  // the received tensors, whose gradients go back
  std::vector<torch::Tensor> roots;   // the sent outputs, whose gradients come back
  torch::Tensor loss;                 // the last stage's, weighted by the micro-batch's share
};

struct PipelineNet::Buffers {
  std::vector<std::vector<torch::Tensor>> activations, gradients;  // [micro][boundary tensor]
  std::vector<std::vector<comm::Posted>> activationsIn, gradientsIn;
  std::vector<torch::Tensor> sending;  // alive until their sends complete
  std::vector<comm::Posted> sends;

  // Lets the transport finish the sends it can (a send's buffer is then free to reuse).
  void sweepSends() {
    for (comm::Posted& p : sends) p.test();
  }
  // Seconds spent inside the transport on this step's messages so far: moving data.
  double transportSeconds() const {
    double total = 0;
    for (const auto* group : {&activationsIn, &gradientsIn}) {
      for (const std::vector<comm::Posted>& micro : *group) {
        for (const comm::Posted& p : micro) total += p.transportSeconds();
      }
    }
    for (const comm::Posted& p : sends) total += p.transportSeconds();
    return total;
  }
};

PipelineLinks pipelineLinks(const comm::Communicator& world, int stages, int inner) {
  const int rank = world.rank(), stage = (rank / inner) % stages;
  const int line = (rank / (inner * stages)) * inner + rank % inner;  // replica and place within the stage
  PipelineLinks links{world.split(line, stage), {}, {}, {}, {}};
  // Links (0,1), (2,3), ... then (1,2), (3,4), ...: one split per parity and direction.
  for (int parity : {0, 1}) {
    const int link = parity == 0 ? stage / 2 : (stage + 1) / 2;
    for (bool activations : {true, false}) {
      comm::Communicator c = world.split(line * stages + link, stage);
      if (c.size() != 2) continue;
      const bool lower = c.rank() == 0;
      if (activations) {
        (lower ? links.activationsOut : links.activationsIn) = c;
      } else {
        (lower ? links.gradientsIn : links.gradientsOut) = c;
      }
    }
  }
  return links;
}

PipelineNet::PipelineNet(IrNet net, const PipelineLinks& links, int microBatches, plan::PipelineSchedule schedule,
                         std::vector<int> stageOf, std::unique_ptr<SpatialNet> inner)
    : net_(std::move(net)), links_(links), micro_(microBatches), schedule_(schedule), stage_(links.stages.rank()),
      stageOf_(std::move(stageOf)), inner_(std::move(inner)) {
  const graph::Model& model = net_->model();
  const int stages = links.stages.size();
  if (stageOf_.empty()) stageOf_ = plan::modelStages(model, stages);
  if (std::string problem = plan::pipelineProblem(model, stages, stageOf_); !problem.empty()) throw ConfigError(problem);
  std::vector<int> lastConsumer(model.size(), -1);
  for (int c = 1; c < model.size(); ++c) {
    for (int j : model.layer(c).inputs) lastConsumer[j] = std::max(lastConsumer[j], stageOf_[c]);
  }
  for (int j = 0; j < model.size(); ++j) {
    if (stageOf_[j] < stage_ && lastConsumer[j] >= stage_) received_.push_back(j);
    if (stageOf_[j] <= stage_ && lastConsumer[j] > stage_) sent_.push_back(j);
  }
}

std::vector<std::int64_t> PipelineNet::shapeOf(int layer, std::int64_t samples) const {
  if (inner_) return inner_->localShape(layer, samples);
  const graph::TensorShape& s = net_->model().layer(layer).output;
  std::vector<std::int64_t> shape{samples, s.channels};
  shape.insert(shape.end(), s.spatial.begin(), s.spatial.end());
  return shape;
}

void PipelineNet::forwardLayers(std::vector<torch::Tensor>& outputs) {
  const graph::Model& model = net_->model();
  for (int i = 1; i < model.size(); ++i) {
    if (stageOf_[i] != stage_) continue;
    if (inner_) {
      inner_->runLayer(i, outputs);  // loss layers too: they take their input as the loss reads it
      continue;
    }
    if (isLoss(model.layer(i).kind)) continue;
    net_->beforeLayer(i);
    const auto start = Clock::now();
    outputs[i] = net_->applyLayer(i, outputs);
    net_->layerDone(i, outputs[i], start);
  }
}

torch::Tensor PipelineNet::await(comm::Posted& message, const torch::Tensor& buffer, Buffers& b) {
  b.sweepSends();
  waited_ += message.waitIdle();
  return buffer;
}

void PipelineNet::forwardPass(int micro, const torch::Tensor& batch, const torch::Tensor& target, Buffers& b,
                              InFlight& f) {
  const std::int64_t size = batch_ / micro_;
  std::vector<torch::Tensor> outputs(net_->model().size());
  if (inner_) inner_->startRun(size);
  if (stage_ == 0) {
    const torch::Tensor mine = batch.narrow(0, micro * size, size);
    outputs[0] = inner_ ? inner_->localInput(mine) : net_->laidOut(mine);
  }
  for (std::size_t k = 0; k < received_.size(); ++k) {
    f.leaves.push_back(await(b.activationsIn[micro][k], b.activations[micro][k], b).requires_grad_(true));
    outputs[received_[k]] = f.leaves.back().clone();  // the stage's layers may work in place
  }
  forwardLayers(outputs);
  if (last()) {
    f.loss = loss(outputs, target.narrow(0, micro * size, size)) *
             (static_cast<double>(size) / static_cast<double>(batch_));
    return;
  }
  for (int j : sent_) {
    f.roots.push_back(outputs[j]);
    const torch::Tensor& c = b.sending.emplace_back(onWire(outputs[j].detach()));
    b.sends.push_back(comm::postSend(*links_.activationsOut, c.data_ptr(), static_cast<std::size_t>(c.numel()),
                                  parallel::commTypeOf(c), 1));
  }
}

void PipelineNet::backwardPass(int micro, Buffers& b, InFlight& f) {
  if (inner_) inner_->countBackward();
  if (last()) {
    f.loss.backward();
  } else {
    std::vector<torch::Tensor> roots, grads;
    for (std::size_t k = 0; k < sent_.size(); ++k) {
      const torch::Tensor g = await(b.gradientsIn[micro][k], b.gradients[micro][k], b);
      if (!f.roots[k].requires_grad()) continue;
      roots.push_back(f.roots[k]);
      grads.push_back(g);
    }
    if (!roots.empty()) torch::autograd::backward(roots, grads);
  }
  net_->traceLayerBackward(Clock::now());  // each micro-batch's layers, as a data step's
  for (const torch::Tensor& leaf : f.leaves) {
    const torch::Tensor& c =
        b.sending.emplace_back(onWire(leaf.grad().defined() ? leaf.grad() : torch::zeros_like(leaf)));
    b.sends.push_back(comm::postSend(*links_.gradientsOut, c.data_ptr(), static_cast<std::size_t>(c.numel()),
                                  parallel::commTypeOf(c), 0));
  }
  f = {};
}

BatchExecutor::Pass PipelineNet::forwardBackward(const torch::Tensor& batch, const torch::Tensor& target,
                                                 reduce::GradientEngine& engine) {
  batch_ = batch.size(0);
  if (batch_ % micro_ != 0) {
    throw ConfigError(fmt::format("a replica batch of {} does not divide into {} micro-batches", batch_, micro_));
  }
  const std::vector<plan::PipelineStep> steps = pipelineSteps(schedule_, links_.stages.size(), stage_, micro_);
  const torch::TensorOptions options = torch::TensorOptions().dtype(net_->parameters().front().scalar_type());
  Buffers b;
  b.activations.resize(micro_);
  b.activationsIn.resize(micro_);
  b.gradients.resize(micro_);
  b.gradientsIn.resize(micro_);
  // Every receive of the step posted now, in the order the neighbour sends.
  for (int k = 0; k < micro_; ++k) {
    for (int j : received_) {
      const torch::Tensor& t = b.activations[k].emplace_back(wireBuffer(shapeOf(j, batch_ / micro_), options));
      b.activationsIn[k].push_back(comm::postRecv(*links_.activationsIn, t.data_ptr(), static_cast<std::size_t>(t.numel()),
                                                parallel::commTypeOf(t), 0));
    }
  }
  for (const plan::PipelineStep& s : steps) {
    if (s.forward) continue;
    for (int j : sent_) {
      const torch::Tensor& t = b.gradients[s.micro].emplace_back(wireBuffer(shapeOf(j, batch_ / micro_), options));
      b.gradientsIn[s.micro].push_back(comm::postRecv(*links_.gradientsIn, t.data_ptr(), static_cast<std::size_t>(t.numel()),
                                                    parallel::commTypeOf(t), 1));
    }
  }
  std::vector<InFlight> flights(micro_);
  Pass pass;
  waited_ = 0;
  if (inner_) inner_->resetCommTimes();
  {
    ReadinessHold hold(engine);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const plan::PipelineStep& s = steps[i];
      if (i + 1 == steps.size()) engine.holdReadiness(false);  // the last backward completes the gradients
      const auto start = Clock::now();
      const double notComputing = waited_ + b.transportSeconds();
      if (s.forward) {
        forwardPass(s.micro, batch, target, b, flights[s.micro]);
      } else {
        if (last()) pass.loss += flights[s.micro].loss.item<double>();
        backwardPass(s.micro, b, flights[s.micro]);
      }
      (s.forward ? pass.forwardSeconds : pass.backwardSeconds) +=
          since(start) - (waited_ + b.transportSeconds() - notComputing);
    }
  }
  comm_ = {};
  b.sweepSends();
  for (comm::Posted& w : b.sends) waited_ += w.waitIdle();
  comm_.pipelineTransfers = b.transportSeconds();
  comm_.bubble = waited_;
  return pass;
}

std::vector<torch::Tensor> PipelineNet::run(const torch::Tensor& batch) {
  const graph::Model& model = net_->model();
  const std::int64_t n = batch.size(0);
  const torch::TensorOptions options = batch.options().dtype(net_->parameters().front().scalar_type());
  std::vector<torch::Tensor> outputs(model.size());
  if (inner_) inner_->startRun(n);
  if (stage_ == 0) outputs[0] = inner_ ? inner_->localInput(batch) : net_->laidOut(batch);
  for (int j : received_) {
    outputs[j] = wireBuffer(shapeOf(j, n), options);
    comm::recv(*links_.activationsIn, outputs[j].data_ptr(), static_cast<std::size_t>(outputs[j].numel()),
               parallel::commTypeOf(outputs[j]), 0);
  }
  forwardLayers(outputs);
  for (int j : sent_) {
    const torch::Tensor c = onWire(outputs[j]);
    comm::send(*links_.activationsOut, c.data_ptr(), static_cast<std::size_t>(c.numel()), parallel::commTypeOf(c), 1);
  }
  // The main loss's input (with inner axes: the loss layer's slot, which holds it as the loss
  // reads it), from the last stage to the same place in every stage.
  int slot = model.size() - 1;
  for (int i = 0; i < model.size(); ++i) {
    if (isLoss(model.layer(i).kind)) slot = inner_ ? i : model.layer(i).inputs.front();
  }
  torch::Tensor prediction = last() ? onWire(outputs[slot]) : wireBuffer(shapeOf(slot, n), options);
  comm::broadcast(links_.stages, prediction.data_ptr(), static_cast<std::size_t>(prediction.numel()),
                  parallel::commTypeOf(prediction), {.root = links_.stages.size() - 1});
  outputs[slot] = prediction;
  return outputs;
}

torch::Tensor PipelineNet::loss(const std::vector<torch::Tensor>& outputs, const torch::Tensor& target) {
  return inner_ ? inner_->loss(outputs, target) : net_->loss(outputs, target);
}

torch::Tensor PipelineNet::prediction(const std::vector<torch::Tensor>& outputs) {
  return inner_ ? inner_->prediction(outputs) : net_->prediction(outputs);
}

torch::Tensor PipelineNet::targetPart(const torch::Tensor& target) {
  return inner_ ? inner_->targetPart(target) : target;
}

double PipelineNet::replicaLoss(double local) {
  comm::broadcast(links_.stages, &local, 1, comm::DataType::kF64, {.root = links_.stages.size() - 1});
  return inner_ ? inner_->replicaLoss(local) : local;
}

double PipelineNet::share() const { return (inner_ ? inner_->share() : 1.0) / links_.stages.size(); }

std::vector<torch::Tensor> PipelineNet::wholeParameters() {
  std::vector<torch::Tensor> whole;  // every layer's, as this rank's stage holds them (stale elsewhere)
  if (inner_) {
    whole = inner_->wholeParameters();  // collective over the stage's inner groups
  } else {
    for (const torch::Tensor& p : net_->parameters()) whole.push_back(p.detach());
  }
  std::vector<torch::Tensor> out;
  std::size_t k = 0;
  for (int i = 0; i < net_->model().size(); ++i) {
    for (std::size_t n = net_->layerParameters(i).size(); n > 0; --n, ++k) {
      torch::Tensor t = whole.at(k).clone().contiguous();
      comm::broadcast(links_.stages, t.data_ptr(), static_cast<std::size_t>(t.numel()), parallel::commTypeOf(t),
                      {.root = stageOf_[i]});
      out.push_back(t);
    }
  }
  return out;
}

BatchExecutor::LayerComm PipelineNet::layerComm() const {
  LayerComm c = comm_;
  if (inner_) {
    const LayerComm layers = inner_->layerComm();
    c.forward = layers.forward;
    c.backward = layers.backward;
  }
  return c;
}

std::string PipelineNet::describe() const {
  const graph::Model& model = net_->model();
  std::vector<std::string> ranges;
  for (int s = 0; s < links_.stages.size(); ++s) {
    int first = -1, lastLayer = -1;
    for (int i = 0; i < model.size(); ++i) {
      if (stageOf_[i] != s) continue;
      if (first < 0) first = i;
      lastLayer = i;
    }
    ranges.push_back(fmt::format("'{}'..'{}'", model.layer(first).name, model.layer(lastLayer).name));
  }
  const std::string stages = fmt::format("{} stages ({}), {} micro-batches, {}", ranges.size(), fmt::join(ranges, " | "),
                                         micro_, plan::scheduleName(schedule_));
  return inner_ ? fmt::format("{}; within each stage: {}", stages, inner_->describe()) : stages;
}

}  // namespace paraxis::train
