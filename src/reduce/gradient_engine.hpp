#pragma once
// The gradient engine (GradientFlow; Laanait et al.): gradients live in group buffers, become
// ready during backward, and are reduced group by group while backward continues.
//
// Groups are formed once over the layers in backward order, by the rule the oracle uses
// (core/gradient_comm.hpp: fusion by bytes with a small first bucket, one per layer, or N
// equal groups); a layer's tensors always share a group. Readiness comes from post-hooks on
// each parameter's gradient accumulator, so a group is complete the moment its last gradient
// has been accumulated into its buffer: each parameter's .grad is a view into the buffer, so
// nothing is packed or unpacked.
//
// The engine is a core (buffers, readiness, the wire, failures; engine_core.hpp) plus one
// scheduler per order (schedulers.hpp): fifo, forward-priority, or in order through the
// chunk-sparse wire once its dense warm-up is over (overlapping backward like the others).
// The wire format (fp32, fp16, bf16, chunk-sparse) is a separate choice. Its collectives run
// on communicators of its own.
#include <torch/torch.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"
#include "core/gradient_comm.hpp"
#include "reduce/chunk_sparse.hpp"
#include "reduce/engine_core.hpp"
#include "reduce/schedulers.hpp"

namespace paraxis::reduce {

class GradientEngine {
 public:
  // Each layer's parameters, layers in forward order (a layer without parameters may be
  // empty); every rank passes the same list. Collective: duplicates `comm`.
  using Layers = std::vector<std::vector<torch::Tensor>>;
  // The group buffers live where the parameters do. MPI reads host memory: buffers on a GPU
  // are staged through pinned host copies around each reduction (none on one rank at fp32,
  // where no reduction runs). kAlways stages CPU buffers too, so that tests run that path
  // without a GPU.
  enum class Staging { kWhereNeeded, kAlways };
  GradientEngine(const comm::Communicator& comm, Layers layers, GradientComm settings, double sparseMomentum = 0.9,
                 Staging staging = Staging::kWhereNeeded);
  // Tensors that belong to no model layer: each its own layer.
  static Layers eachTensorALayer(const std::vector<torch::Tensor>& tensors);
  ~GradientEngine();  // removes the hooks and ends background threads
  // The hooks and threads hold `this`: the engine stays where it was built.
  GradientEngine(const GradientEngine&) = delete;
  GradientEngine& operator=(const GradientEngine&) = delete;
  GradientEngine(GradientEngine&&) = delete;
  GradientEngine& operator=(GradientEngine&&) = delete;

  void beginStep();  // zeroes the buffers and readiness; call before backward
  // After backward: launches what is left and waits for the groups in order; gradients are
  // averaged. `onGroupDone(g)` runs as soon as group g is reduced, while later groups are still
  // on the wire (the optimizer updates those parameters then). Rethrows a background failure.
  void finishStep(const GroupCallback& onGroupDone = {});
  // The chunk-sparse wire runs after its dense warm-up (off: dense, in the configured order).
  void setSparse(bool enabled) { sparseActive_ = enabled && sparse_ != nullptr; }

  // Forward-priority order: backward has finished; the groups complete in the background and
  // the caller awaits each before the next forward uses it (deadline: the communicator's).
  bool deferred() const { return active().deferred(); }
  void endBackward() { active().endBackward(); }
  void awaitGroup(int group) { active().awaitGroup(group); }

  int groupCount() const { return static_cast<int>(core_.groups.size()); }
  const std::vector<int>& groupOf(int group) const { return core_.groups.at(group).members; }  // parameter indices
  const std::vector<int>& groupLayers(int group) const { return core_.groups.at(group).layers; }
  // Residual state of chunk-sparse communication (for checkpoints): velocity and residual per group.
  std::vector<torch::Tensor> residualState() const { return sparse_ ? sparse_->state() : std::vector<torch::Tensor>{}; }
  double exposedSeconds() const { return times_.exposed; }  // of the last finishStep
  // The allreduce algorithm the dense wire runs for the largest group.
  std::string allreduceAlgorithm() const { return core_.largestGroupAlgorithm(); }
  // All group reductions of the last step (deferred: the last completed one).
  double totalSeconds() const { return deferred() ? active().backgroundSeconds() : times_.total; }

  // Micro-batches (pipelines): while held, gradients accumulate into the buffers without
  // counting as ready; release before the step's last backward pass, whose gradients complete
  // the groups.
  void holdReadiness(bool hold) { held_ = hold; }

  void markReady(int parameter);  // called by the hooks

 private:
  Scheduler& active() const { return sparseActive_ ? *sparseScheduler_ : *ordered_; }
  void formGroups(const Layers& layers, Staging staging);
  void addBuffer(GradientGroup& g, Staging staging);

  EngineCore core_;
  std::vector<torch::Tensor> parameters_;  // forward order
  std::vector<torch::Tensor> buffers_;     // per group, on the parameters' device
  std::vector<torch::Tensor> staging_;     // per group where staged: host copies the wire reads and writes
  std::vector<int> groupOfParameter_;
  std::unique_ptr<ChunkSparseWire> sparse_;
  std::unique_ptr<Scheduler> ordered_;
  std::unique_ptr<Scheduler> sparseScheduler_;
  std::vector<std::pair<std::shared_ptr<torch::autograd::Node>, std::uintptr_t>> hooks_;  // accumulator, key
  bool sparseActive_ = false;
  std::atomic<bool> held_{false};
  ReductionTimes times_;
};

}  // namespace paraxis::reduce
