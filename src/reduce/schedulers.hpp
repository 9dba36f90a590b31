#pragma once
// The orders in which the gradient engine reduces its groups, one scheduler each (torch-free):
//
//   FifoScheduler         groups in their fixed backward order, launched the moment they and
//                         every group before them are complete (with overlap), or after
//                         backward; with decentralized negotiation a cycle thread ANDs a bit
//                         vector of complete groups across ranks and launches what all agree.
//   PriorityScheduler     forward-priority order (P3, ByteScheduler): one thread agrees the
//                         ready set and reduces the agreed group the next forward needs first,
//                         chunk by chunk, so a more urgent group overtakes; the step returns at
//                         the end of backward and the next forward awaits each group.
//   InOrderScheduler      every group through a caller-given reduction (the chunk-sparse
//                         wire: a group's selection needs only its own gradient), one at a
//                         time in the fixed backward order on a worker thread, each as soon as
//                         it is complete (with overlap) or after backward (without).
//
// Every choice depends only on agreed state, so all ranks issue the same collectives in the
// same order. A failure on a background thread is kept in the core and rethrown to the caller.
#include <functional>
#include <memory>
#include <thread>

#include "reduce/engine_core.hpp"

namespace paraxis::reduce {

using GroupCallback = std::function<void(int)>;

struct ReductionTimes {
  double exposed = 0;  // the caller waited for communication after backward
  double total = 0;    // all group reductions of the step
};

class Scheduler {
 public:
  explicit Scheduler(EngineCore& core) : core_(core) {}
  virtual ~Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  virtual void beginStep() {}               // buffers are zeroed; backward has not started
  virtual void groupComplete(int /*group*/) {}  // under core.mutex: its last gradient arrived
  // After backward: reduces what is left and waits for every group, running onGroupDone(g)
  // as group g lands (its parameters can be updated while later groups are on the wire).
  virtual ReductionTimes finish(const GroupCallback& onGroupDone) = 0;
  // Deferred schedulers return from endBackward at once; the groups complete in the background.
  virtual bool deferred() const { return false; }
  virtual void endBackward() {}
  virtual void awaitGroup(int /*group*/) {}
  virtual double backgroundSeconds() const { return 0; }  // deferred: the last step's reductions
  virtual void stop() {}  // ends and joins background threads

 protected:
  EngineCore& core_;
};

std::unique_ptr<Scheduler> makeOrderedScheduler(EngineCore& core);  // fifo or forward-priority, from the settings
std::unique_ptr<Scheduler> makeInOrderScheduler(EngineCore& core, GroupCallback reduceGroup);

}  // namespace paraxis::reduce
