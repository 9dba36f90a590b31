#pragma once
// The shared state behind a Communicator handle (internal to comm).
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/operation.hpp"
#include "comm/work.hpp"

namespace paraxis::comm::detail {

using OpFunction = std::function<void(OpContext&)>;

class CommState {
 public:
  CommState(std::shared_ptr<Transport> transport, CommunicatorOptions options);
  ~CommState();
  CommState(const CommState&) = delete;
  CommState& operator=(const CommState&) = delete;

  Transport& transport() { return *transport_; }
  const std::shared_ptr<Transport>& sharedTransport() const { return transport_; }
  const CommunicatorOptions& options() const { return options_; }

  // Runs the operation after everything queued before it; rethrows its error.
  void run(const CallInfo& info, OpFunction fn);
  // Queues the operation on the progress thread (inline when the transport is not
  // thread-safe) and returns its handle.
  Work submit(const CallInfo& info, OpFunction fn);

  std::byte* scratch(int slot, std::size_t bytes);

 private:
  struct Task {
    CallInfo info;
    std::uint64_t sequence;
    OpFunction fn;
    std::shared_ptr<WorkState> work;
  };

  std::uint64_t assignSequence(const CallInfo& info);
  void execute(const Task& task);
  void verify(OpContext& context);
  void workerLoop();

  std::shared_ptr<Transport> transport_;
  CommunicatorOptions options_;
  std::vector<std::vector<std::byte>> scratch_;

  std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  std::uint64_t nextSequence_ = 0;
  std::deque<Task> queue_;
  bool running_ = false;  // a task is executing (inline or on the worker)
  bool stopping_ = false;
  std::string broken_;    // why the communicator became unusable; empty while healthy
  std::thread worker_;
  // Shared with the worker: a task's closure may hold the last handle, so releasing it can run
  // ~CommState on the worker itself, which must then touch nothing of this object again.
  std::shared_ptr<std::atomic<bool>> alive_ = std::make_shared<std::atomic<bool>>(true);
};

}  // namespace paraxis::comm::detail
