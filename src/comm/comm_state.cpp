#include "comm/comm_state.hpp"

#include <fmt/format.h>

#include <chrono>
#include <map>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "core/error.hpp"
#include "core/thread_slice.hpp"
#include "core/trace.hpp"
#include "core/units.hpp"

namespace paraxis::comm::detail {
namespace {

std::string describe(const Fingerprint& f) {
  const std::string algorithm = f.algorithm != 0 ? fmt::format(" by {}", algorithmCodeName(f.algorithm)) : "";
  return fmt::format("{} {} x{}{} (call #{}{})", operationName(static_cast<Operation>(f.operation)),
                     typeName(static_cast<DataType>(f.type)), f.count, algorithm, f.sequence,
                     f.operation == static_cast<std::int32_t>(Operation::kBroadcast)
                         ? fmt::format(", root {}", f.root)
                         : "");
}

}  // namespace

CommState::CommState(std::shared_ptr<Transport> transport, CommunicatorOptions options)
    : transport_(std::move(transport)), options_(options) {}

CommState::~CommState() {
  std::deque<Task> orphans;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    if (worker_.joinable() && worker_.get_id() == std::this_thread::get_id()) orphans.swap(queue_);
  }
  changed_.notify_all();
  if (!worker_.joinable()) return;
  if (worker_.get_id() != std::this_thread::get_id()) {
    worker_.join();  // the worker drains the queue first
    return;
  }
  // The worker released the closure that held the last handle: it is running this
  // destructor. It returns without touching the object again; what was still queued fails.
  alive_->store(false);
  worker_.detach();
  for (Task& task : orphans) {
    task.fn = nullptr;
    task.work->finish(std::make_exception_ptr(
        CommError(fmt::format("{} never ran: its communicator was destroyed", operationName(task.info.op)))));
  }
}

std::uint64_t CommState::assignSequence(const CallInfo& info) {
  if (!isCollective(info.op)) return 0;  // point-to-point calls involve two ranks only
  std::lock_guard lock(mutex_);
  return nextSequence_++;
}

void CommState::run(const CallInfo& info, OpFunction fn) {
  const Task task{info, assignSequence(info), std::move(fn), nullptr};
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.empty() && !running_; });
    running_ = true;
  }
  auto release = [&] {
    {
      std::lock_guard lock(mutex_);
      running_ = false;
    }
    changed_.notify_all();
  };
  try {
    execute(task);
  } catch (...) {
    release();
    throw;
  }
  release();
}

Work CommState::submit(const CallInfo& info, OpFunction fn) {
  auto work = std::make_shared<WorkState>();
  if (!transport_->threadSafe()) {
    try {
      run(info, std::move(fn));
      work->finish(nullptr);
    } catch (...) {
      work->finish(std::current_exception());
    }
    return Work(work);
  }
  {
    std::lock_guard lock(mutex_);
    Task task{info, 0, std::move(fn), work};
    task.info.background = true;
    if (isCollective(info.op)) task.sequence = nextSequence_++;
    queue_.push_back(std::move(task));
    if (!worker_.joinable()) worker_ = std::thread(&CommState::workerLoop, this);
  }
  changed_.notify_all();
  return Work(work);
}

void CommState::workerLoop() {
  const std::shared_ptr<std::atomic<bool>> alive = alive_;
  trace::nameThread("comm progress");
#if defined(__linux__)
  // The thread polls politely between sleeps of 20 us (operation.cpp) so as to leave the cores
  // to the compute it overlaps; Linux lets such a sleep run 50 us over (the default timer
  // slack), and a ring's every step paid it: a 1.19 MB gradient allreduce took 0.70-0.78 ms in
  // small-cnn data=2 training against 0.24 in a tight loop. With a 1 us slack, alternated runs
  // (8 each, 2 ranks here, medians): the step's communication 2.2 against 3.2 ms without overlap
  // (the step 14.7 against 16.0 ms), 2.3 against 2.7 ms with it (the step 15.4 against 16.2).
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
#endif
  core::applyCommThreadSlice();
  while (true) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return (!queue_.empty() && !running_) || (stopping_ && queue_.empty()); });
    if (queue_.empty()) return;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    std::exception_ptr failure;
    const auto started = std::chrono::steady_clock::now();
    try {
      execute(task);
    } catch (...) {
      failure = std::current_exception();
    }
    const double ran = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    lock.lock();
    running_ = false;
    lock.unlock();
    changed_.notify_all();
    // Release what the closure holds before waking the caller. If it held the last handle,
    // this runs ~CommState here, and `this` is gone afterwards.
    task.fn = nullptr;
    task.work->finish(failure, ran);
    if (!alive->load()) return;
  }
}

void CommState::execute(const Task& task) {
  {
    std::lock_guard lock(mutex_);
    if (!broken_.empty()) {
      throw CommError(fmt::format("{} refused: the communicator is unusable after an earlier failure ({})",
                                  operationName(task.info.op), broken_));
    }
  }
  OpContext context(*this, task.info, task.sequence);
  const trace::Span span("comm", trace::enabled() ? fmt::format("{} {}", operationName(task.info.op), task.info.algorithm) : "",
                         static_cast<std::int64_t>(task.info.bytes));
  try {
    if (options_.verify && isCollective(task.info.op) && transport_->size() > 1) verify(context);
    task.fn(context);
  } catch (const CommError& e) {
    std::lock_guard lock(mutex_);
    broken_ = e.what();
    throw;
  }
}

void CommState::verify(OpContext& context) {
  const CallInfo& info = context.info();
  const Fingerprint mine{context.sequence(), static_cast<std::int32_t>(info.op),
                         static_cast<std::int32_t>(info.type), info.count, info.root,
                         algorithmCode(info.algorithm)};
  std::vector<Fingerprint> all;
  Request request = transport_->iallgatherFingerprints(mine, all);
  context.wait(request);
  std::map<std::string, std::vector<int>> groups;  // description -> ranks
  for (int r = 0; r < static_cast<int>(all.size()); ++r) groups[describe(all[r])].push_back(r);
  if (groups.size() == 1) return;
  std::string detail;
  for (const auto& [what, ranks] : groups) {
    detail += fmt::format("{}rank{} {} called {}", detail.empty() ? "" : "; ", ranks.size() > 1 ? "s" : "",
                          fmt::join(ranks, ","), what);
  }
  throw CommError(fmt::format("{} #{}: ranks disagree on the collective call: {} (seen on rank {} of {})",
                              operationName(info.op), context.sequence(), detail, transport_->rank(),
                              transport_->size()));
}

std::byte* CommState::scratch(int slot, std::size_t bytes) {
  if (static_cast<int>(scratch_.size()) <= slot) scratch_.resize(slot + 1);
  auto& buffer = scratch_[slot];
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

}  // namespace paraxis::comm::detail
