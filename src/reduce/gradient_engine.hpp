#pragma once
// The gradient engine (GradientFlow; Laanait et al.): gradients live in group buffers, become
// ready during backward, and are reduced group by group while backward continues.
//
// Groups are formed once over the parameters in backward order (fusion by bytes with a small
// first bucket, one per layer, or N equal groups) and launched in that fixed order on every
// rank. Readiness comes from post-hooks on each parameter's gradient accumulator, so a group
// starts the moment its last gradient has been accumulated into its buffer — each
// parameter's .grad is a view into the buffer, so nothing is packed or unpacked.
//
// With decentralized negotiation a cycle thread ANDs a bit vector of locally complete groups
// across ranks (one small allreduce per cycle, no coordinator) and launches the groups that
// every rank has finished. Wire compression (fp16 with a 1/P prescale) is the
// communicator's. Chunk-sparse communication (density < 1) reduces per-chunk norms so all
// ranks pick the same chunks, sends only those densely, and keeps the rest in a residual
// with momentum correction; it runs when backward has finished.
//
// Forward-priority order (P3, ByteScheduler): a scheduler thread agrees the ready set with
// the same bit-vector allreduce, then reduces the agreed group that comes first in the
// forward pass, chunk by chunk while backward runs, renegotiating between chunks so a more
// urgent group overtakes the queue. The
// choice depends only on agreed state, so every rank runs the same sequence. After backward the caller does not wait
// for all groups: the next forward waits for each layer's group just before the layer runs,
// so the reduction of the last layers overlaps the forward of the first.
#include <torch/torch.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/work.hpp"
#include "cost/gradient_groups.hpp"

namespace paraxis::reduce {

using cost::Grouping;  // the oracle forms groups by the same rule

struct EngineOptions {
  Grouping grouping = Grouping::kFusion;
  std::size_t fusionBytes = 4u << 20;  // small groups overlap backward better than one big one
  std::size_t firstBucketBytes = 1u << 20;
  int groups = 4;
  bool overlap = true;             // launch groups during backward
  bool negotiate = false;          // decentralized negotiation (bit-vector allreduce per cycle)
  double cycleSeconds = 0.5e-3;
  bool fp16 = false;               // fp16 on the wire, 1/P prescale
  double density = 1.0;            // chunk-sparse when < 1
  std::int64_t chunkElements = 256;
  double sparseMomentum = 0.9;     // momentum correction of the residual
  bool priority = false;           // forward-priority order (dense only)
  std::size_t chunkBytes = 1u << 20;  // priority, during backward: the unit a newly ready group can overtake
};

class GradientEngine {
 public:
  // `parameters` in registration (forward) order; every rank passes the same list.
  GradientEngine(comm::Communicator comm, std::vector<torch::Tensor> parameters, EngineOptions options);
  ~GradientEngine();
  GradientEngine(const GradientEngine&) = delete;
  GradientEngine& operator=(const GradientEngine&) = delete;

  void beginStep();   // zeroes the buffers and readiness; call before backward
  // After backward: launches what is left and waits for the groups in order; gradients are
  // averaged. `onGroupDone(g)` runs as soon as group g is reduced, while later groups are still
  // on the wire (the optimizer updates those parameters then).
  void finishStep(const std::function<void(int)>& onGroupDone = {});
  void setSparse(bool enabled) { sparseActive_ = enabled && options_.density < 1.0; }  // dense warm-up off/on

  // Forward-priority order: backward has finished; the groups complete in the background.
  bool deferred() const { return options_.priority && !sparseActive_; }
  void endBackward();
  // Blocks until group g of the step is reduced (deadline: the communicator's). Rethrows a
  // failure of the scheduler.
  void awaitGroup(int group);

  int groupCount() const { return static_cast<int>(groups_.size()); }
  const std::vector<int>& groupOf(int group) const { return groups_.at(group).members; }
  // Residual state of chunk-sparse communication (for checkpoints): velocity and residual per group.
  std::vector<torch::Tensor> residualState() const;
  double exposedSeconds() const { return exposedSeconds_; }  // of the last finishStep
  double totalSeconds() const { return totalSeconds_.load(); }  // all group reductions of the last step

  void markReady(int parameter);  // called by the hooks

 private:
  struct Group {
    std::vector<int> members;
    torch::Tensor buffer;  // flat fp32, the members' gradients
    int pending = 0;
    bool launched = false;
    comm::Work work;
    torch::Tensor velocity;  // chunk-sparse momentum correction
    torch::Tensor residual;
  };

  void formGroups();
  void launchReadyInOrder();  // without negotiation
  void launch(int group);
  std::vector<std::uint8_t> agreeReady(const std::vector<std::uint8_t>& readyHere);  // one AND round
  void negotiationLoop();
  void scheduleLoop();  // forward-priority order
  void sparseReduce(Group& g);

  comm::Communicator comm_;
  comm::Communicator negotiation_;
  std::vector<torch::Tensor> parameters_;
  EngineOptions options_;
  std::vector<Group> groups_;
  std::vector<int> groupOfParameter_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;  // keep hooks alive
  std::mutex mutex_;
  int nextLaunch_ = 0;
  std::vector<std::uint8_t> complete_;  // per group, guarded by mutex_
  bool backwardDone_ = false;
  std::thread negotiator_;
  std::thread scheduler_;
  std::condition_variable reducedChanged_;
  std::vector<std::uint8_t> reduced_;  // per group (priority order), guarded by mutex_; the
                                       // condition also wakes the scheduler on new readiness
  std::exception_ptr failure_;         // the scheduler's, guarded by mutex_
  bool stopping_ = false;
  bool sparseActive_ = false;
  double exposedSeconds_ = 0;
  std::atomic<double> totalSeconds_ = 0;  // the scheduler thread writes it
};

}  // namespace paraxis::reduce
