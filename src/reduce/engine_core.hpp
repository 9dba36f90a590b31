#pragma once
// What the gradient engine's schedulers share (torch-free): the groups and their flat fp32
// buffers, which groups backward has completed, which are reduced, the failure of a
// background thread, and the collectives on the engine's own communicators. The engine
// (gradient_engine.hpp) owns it; a scheduler decides only when and in what order groups go.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/options.hpp"
#include "comm/work.hpp"
#include "core/gradient_comm.hpp"

namespace paraxis::comm {
class Hierarchy;
}

namespace paraxis::reduce {

struct GradientGroup {
  std::vector<int> members;  // parameter indices, forward order
  std::vector<int> layers;   // the layers whose gradients the group holds, backward order
  float* data = nullptr;     // host memory the wire reads and writes: the flat buffer itself, or its staging copy
  std::int64_t elements = 0;
  // Set where the buffer lives on a device: copies elements [offset, offset + count) to `data`
  // (toHost) or back. The reduction runs it on the communication thread around the wire.
  std::function<void(std::int64_t offset, std::int64_t count, bool toHost)> stage;
  int pending = 0;           // members whose gradient has not arrived this step
  comm::Work work;
};

class EngineCore {
 public:
  // Duplicates `comm` twice (collective): one communicator for the groups' reductions, one for
  // negotiation rounds, so background collectives never interleave with the caller's.
  EngineCore(const comm::Communicator& comm, GradientComm settings);
  ~EngineCore();
  EngineCore(const EngineCore&) = delete;
  EngineCore& operator=(const EngineCore&) = delete;

  const GradientComm& settings() const { return settings_; }
  int ranks() const { return reduce_.size(); }
  double deadlineSeconds() const { return reduce_.options().deadlineSeconds; }
  const comm::Communicator& reduceComm() const { return reduce_; }

  // Non-blocking averaging allreduce of `count` elements of group g from `offset`, in the
  // configured dense wire format (fp32, fp16 or bf16 on the wire, 1/P prescale) and with the
  // configured algorithm (hierarchical: over the hosts the ranks are on). A staged group's
  // elements go through host memory. Nothing runs where the reduction moves no data.
  comm::Work reduceDense(int group, std::int64_t offset, std::int64_t count);
  // Whether a dense reduction changes a buffer: more than one rank, or a narrow wire's rounding.
  // The average of one rank in fp32 is the buffer itself: no call, no copy off a device.
  bool reductionMovesData() const;
  // The algorithm reduceDense runs for the largest group ("none" on one rank): what a train
  // report names, to hold against the oracle's pick.
  std::string largestGroupAlgorithm() const;
  // One negotiation round: a bitwise AND over ranks of the groups each has ready.
  std::vector<std::uint8_t> agreeReady(const std::vector<std::uint8_t>& readyHere);

  // Guarded by mutex: the step's state, written by the backward hooks and background threads.
  std::mutex mutex;
  std::condition_variable changed;  // a group completed or was reduced, backward ended, a failure
  std::vector<GradientGroup> groups;
  std::vector<std::uint8_t> complete;  // per group: every member's gradient has arrived
  std::vector<std::uint8_t> reduced;   // per group: reduced (deferred schedulers)
  bool backwardDone = false;
  bool stopping = false;
  std::exception_ptr failure;  // of a background thread; the caller rethrows it

  void resetStep();  // caller holds mutex; the owner zeroes the buffers
  // A background thread failed: keep the first failure, wake everyone. Takes mutex.
  void fail(std::exception_ptr error);
  // Caller holds the lock: rethrows a background thread's failure.
  void rethrowFailure() const;

 private:
  GradientComm settings_;
  comm::Communicator reduce_;
  comm::AllreduceOptions denseOptions() const;

  comm::Communicator negotiation_;
  std::unique_ptr<comm::Hierarchy> hosts_;  // for the hierarchical algorithm
};

}  // namespace paraxis::reduce
