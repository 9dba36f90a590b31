#include "reduce/schedulers.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>

#include "comm/allreduce.hpp"
#include "core/error.hpp"
#include "core/thread_slice.hpp"
#include "core/trace.hpp"

namespace paraxis::reduce {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Waits for every group in order and runs the callbacks; the time in callbacks is not exposed.
ReductionTimes awaitInOrder(EngineCore& core, Clock::time_point start, const GroupCallback& onGroupDone) {
  ReductionTimes t;
  double callbacks = 0;
  for (int index = 0; index < static_cast<int>(core.groups.size()); ++index) {
    GradientGroup& g = core.groups[index];
    g.work.wait();
    t.total += g.work.seconds();
    if (onGroupDone) {
      const auto before = Clock::now();
      onGroupDone(index);
      callbacks += since(before);
    }
  }
  t.exposed = since(start) - callbacks;
  return t;
}

// Waits under `lock` until `ready`; past 1.75 deadlines throws a TimeoutError with `what`. The
// reduction's own deadline started earlier and, after a grace of up to half of it, names the
// rank that did not take part: waiting 1.75 deadlines lets that line arrive first and still
// ends the job within twice the deadline.
template <typename Ready>
void waitOrTimeout(EngineCore& core, std::unique_lock<std::mutex>& lock, Ready ready, const std::string& what) {
  const auto deadline = std::chrono::duration<double>(1.75 * core.deadlineSeconds());
  if (!core.changed.wait_for(lock, deadline, [&] { return ready() || core.failure != nullptr; })) {
    const comm::Communicator& comm = core.reduceComm();
    throw TimeoutError(fmt::format("{} within the {:g} s deadline (seen on rank {} of {})", what, core.deadlineSeconds(),
                                   comm.rank(), comm.size()));
  }
  core.rethrowFailure();
}

// Asks a scheduler's thread to stop (under the core's mutex, so that its waits see the flag)
// and joins it; nothing when it is not running.
void stopThread(EngineCore& core, bool& stopRequested, std::thread& thread) {
  if (!thread.joinable()) return;
  {
    std::lock_guard lock(core.mutex);
    stopRequested = true;
  }
  core.changed.notify_all();
  thread.join();
}

class FifoScheduler final : public Scheduler {
 public:
  using Scheduler::Scheduler;
  ~FifoScheduler() override { stop(); }

  void beginStep() override {
    stop();
    launched_.assign(core_.groups.size(), 0);
    nextLaunch_ = 0;
    if (negotiated() && core_.ranks() > 1) negotiator_ = std::thread(&FifoScheduler::negotiationLoop, this);
  }

  void groupComplete(int /*group*/) override {
    if (core_.settings().overlap && !negotiated()) launchCompleteInOrder();
  }

  ReductionTimes finish(const GroupCallback& onGroupDone) override {
    const auto start = Clock::now();
    {
      std::lock_guard lock(core_.mutex);
      core_.backwardDone = true;
      if (!negotiated()) {
        std::fill(core_.complete.begin(), core_.complete.end(), 1);
        launchCompleteInOrder();
      }
    }
    core_.changed.notify_all();
    if (negotiator_.joinable()) negotiator_.join();
    if (negotiated() && core_.ranks() == 1) {
      for (int g = 0; g < static_cast<int>(core_.groups.size()); ++g) launch(g);
    }
    {
      std::lock_guard lock(core_.mutex);
      core_.rethrowFailure();
    }
    return awaitInOrder(core_, start, onGroupDone);
  }

  void stop() override {
    if (!negotiator_.joinable()) return;
    {
      std::lock_guard lock(core_.mutex);
      core_.backwardDone = true;
    }
    negotiator_.join();
  }

 private:
  bool negotiated() const { return core_.settings().negotiation == Negotiation::kDecentralized; }

  // Caller holds the mutex. Groups go out in their fixed order, so every rank issues the same
  // sequence of collectives whatever order its gradients arrived in.
  void launchCompleteInOrder() {
    while (nextLaunch_ < static_cast<int>(core_.groups.size()) && core_.complete[nextLaunch_] != 0) {
      launch(nextLaunch_++);
    }
  }

  void launch(int group) {
    launched_[group] = 1;
    core_.groups[group].work = core_.reduceDense(group, 0, core_.groups[group].elements);
  }

  void negotiationLoop() {
    trace::nameThread("gradient negotiation");
    core::applyCommThreadSlice();
    try {
      std::vector<std::uint8_t> ready(core_.groups.size());
      while (true) {
        {
          std::lock_guard lock(core_.mutex);
          for (std::size_t g = 0; g < ready.size(); ++g) ready[g] = core_.complete[g] != 0 || core_.backwardDone;
        }
        const std::vector<std::uint8_t> agreed = core_.agreeReady(ready);
        bool all = true;
        {
          std::lock_guard lock(core_.mutex);
          for (std::size_t g = 0; g < ready.size(); ++g) {
            if (agreed[g] != 0 && launched_[g] == 0) launch(static_cast<int>(g));
            all = all && launched_[g] != 0;
          }
        }
        if (all) return;
        std::this_thread::sleep_for(std::chrono::duration<double>(core_.settings().cycleSeconds));
      }
    } catch (...) {
      core_.fail(std::current_exception());
    }
  }

  std::vector<std::uint8_t> launched_;  // guarded by core_.mutex while the negotiator runs
  int nextLaunch_ = 0;
  std::thread negotiator_;
};

class PriorityScheduler final : public Scheduler {
 public:
  using Scheduler::Scheduler;
  ~PriorityScheduler() override { stop(); }

  void beginStep() override {
    stop();  // the caller awaited every group of the last step
    stopRequested_ = false;
    thread_ = std::thread(&PriorityScheduler::loop, this);
  }
  void groupComplete(int /*group*/) override { core_.changed.notify_all(); }
  bool deferred() const override { return true; }
  double backgroundSeconds() const override { return lastTotal_.load(); }

  void endBackward() override {
    {
      std::lock_guard lock(core_.mutex);
      core_.backwardDone = true;
    }
    core_.changed.notify_all();
  }

  void awaitGroup(int group) override {
    std::unique_lock lock(core_.mutex);
    waitOrTimeout(core_, lock, [&] { return core_.reduced.at(group) != 0; },
                  fmt::format("gradient group {} of {} was not reduced", group, core_.groups.size()));
  }

  ReductionTimes finish(const GroupCallback& onGroupDone) override {
    const auto start = Clock::now();
    endBackward();
    double callbacks = 0;
    for (int index = static_cast<int>(core_.groups.size()) - 1; index >= 0; --index) {
      awaitGroup(index);
      if (onGroupDone) {
        const auto before = Clock::now();
        onGroupDone(index);
        callbacks += since(before);
      }
    }
    return {since(start) - callbacks, lastTotal_.load()};
  }

  void stop() override { stopThread(core_, stopRequested_, thread_); }

 private:
  struct Progress {
    std::vector<std::uint8_t> agreed;
    std::vector<std::int64_t> sent;  // elements
    bool allAgreed = false;
    int left = 0;
    double reducing = 0;  // seconds in this step's reductions
  };

  // The agreed group with elements left that the forward needs first (groups are numbered in
  // backward order: the highest index), or -1.
  int mostUrgent(const Progress& p) const {
    for (int g = static_cast<int>(p.agreed.size()) - 1; g >= 0; --g) {
      if (p.agreed[g] != 0 && p.sent[g] < core_.groups[g].elements) return g;
    }
    return -1;
  }

  bool readyHere(int g) const { return core_.backwardDone || (core_.settings().overlap && core_.complete[g] != 0); }

  // Agrees the ready set once more. With nothing agreed left to send, sleeps until this rank
  // has a group the others have not agreed yet, so it spends no CPU beside backward. Returns
  // false when asked to stop.
  bool negotiate(Progress& p) {
    const int count = static_cast<int>(p.agreed.size());
    const bool pending = mostUrgent(p) >= 0;
    std::vector<std::uint8_t> ready(count);
    {
      std::unique_lock lock(core_.mutex);
      auto news = [&] {
        for (int g = 0; g < count; ++g) {
          if (p.agreed[g] == 0 && readyHere(g)) return true;
        }
        return false;
      };
      const auto deadline = std::chrono::duration<double>(core_.deadlineSeconds());
      const auto idle = Clock::now();
      if (!pending && !core_.changed.wait_for(lock, deadline, [&] { return stopRequested_ || news(); })) {
        throw TimeoutError(fmt::format("gradient groups: backward produced no new group within the {:.0f} s deadline",
                                       core_.deadlineSeconds()));
      }
      if (!pending) trace::complete("engine", "await a ready group", idle, Clock::now());
      if (stopRequested_) return false;
      for (int g = 0; g < count; ++g) ready[g] = readyHere(g);
    }
    const std::vector<std::uint8_t> now = [&] {
      const trace::Span agreeing("engine", "agree on ready groups");
      return core_.agreeReady(ready);
    }();
    bool progress = false;
    p.allAgreed = true;
    for (int g = 0; g < count; ++g) {
      progress = progress || (now[g] != 0 && p.agreed[g] == 0);
      p.allAgreed = p.allAgreed && now[g] != 0;
    }
    p.agreed = now;
    // Another rank is behind: wait a cycle before asking again.
    if (!progress && !pending) {
      const trace::Span cycle("engine", "a rank is behind: wait a cycle");
      std::this_thread::sleep_for(std::chrono::duration<double>(core_.settings().cycleSeconds));
    }
    return true;
  }

  // While backward runs, one chunk at a time, so a group that becomes ready can overtake; once
  // every group is agreed the order is final and the rest goes out in one call.
  void sendNext(Progress& p, int pick) {
    const std::int64_t elements = core_.groups[pick].elements;
    const auto chunk = std::max<std::int64_t>(1, static_cast<std::int64_t>(core_.settings().chunkBytes / sizeof(float)));
    const std::int64_t n = p.allAgreed ? elements - p.sent[pick] : std::min(chunk, elements - p.sent[pick]);
    const auto start = Clock::now();
    {
      const trace::Span reducing("engine", trace::enabled() ? fmt::format("reduce group {}", pick) : "",
                                 n * static_cast<std::int64_t>(sizeof(float)));
      core_.reduceDense(pick, p.sent[pick], n).wait();
    }
    p.reducing += since(start);
    p.sent[pick] += n;
    if (p.sent[pick] < elements) return;
    --p.left;
    if (p.left == 0) lastTotal_ = p.reducing;
    {
      std::lock_guard lock(core_.mutex);
      core_.reduced[pick] = 1;
    }
    core_.changed.notify_all();
  }

  void loop() {
    trace::nameThread("gradient reduction (priority)", true);
    core::applyCommThreadSlice();
    const int count = static_cast<int>(core_.groups.size());
    Progress p{std::vector<std::uint8_t>(count, 0), std::vector<std::int64_t>(count, 0), false, count};
    try {
      while (p.left > 0) {
        if (!p.allAgreed && !negotiate(p)) return;
        const int pick = mostUrgent(p);
        if (pick >= 0) sendNext(p, pick);
      }
    } catch (...) {
      core_.fail(std::current_exception());
    }
  }

  std::thread thread_;
  bool stopRequested_ = false;  // guarded by core_.mutex
  std::atomic<double> lastTotal_ = 0;  // the last completed step's reductions
};

class InOrderScheduler final : public Scheduler {
 public:
  InOrderScheduler(EngineCore& core, GroupCallback reduceGroup) : Scheduler(core), reduceGroup_(std::move(reduceGroup)) {}
  ~InOrderScheduler() override { stop(); }

  void beginStep() override {
    stop();
    stopRequested_ = false;
    reducing_ = 0;
    worker_ = std::thread(&InOrderScheduler::loop, this);
  }
  void groupComplete(int /*group*/) override { core_.changed.notify_all(); }

  ReductionTimes finish(const GroupCallback& onGroupDone) override {
    const auto start = Clock::now();
    {
      std::lock_guard lock(core_.mutex);
      core_.backwardDone = true;
    }
    core_.changed.notify_all();
    double callbacks = 0;
    for (int index = 0; index < static_cast<int>(core_.groups.size()); ++index) {
      {
        std::unique_lock lock(core_.mutex);
        waitOrTimeout(core_, lock, [&] { return core_.reduced[index] != 0; },
                      fmt::format("gradient group {} of {} was not reduced", index, core_.groups.size()));
      }
      if (onGroupDone) {
        const auto before = Clock::now();
        onGroupDone(index);
        callbacks += since(before);
      }
    }
    stop();
    return {since(start) - callbacks, reducing_};
  }

  void stop() override { stopThread(core_, stopRequested_, worker_); }

 private:
  // Caller holds the mutex.
  bool startable(int group) const {
    return stopRequested_ || core_.backwardDone || (core_.settings().overlap && core_.complete[group] != 0);
  }

  void loop() {
    trace::nameThread("gradient reduction (after backward)", true);
    core::applyCommThreadSlice();
    try {
      for (int index = 0; index < static_cast<int>(core_.groups.size()); ++index) {
        {
          std::unique_lock lock(core_.mutex);
          waitOrTimeout(core_, lock, [&] { return startable(index); }, "gradient groups: backward produced no new group");
          if (stopRequested_) return;
        }
        const auto start = Clock::now();
        reduceGroup_(index);
        reducing_ += since(start);  // read by finish() after it sees `reduced` under the mutex
        {
          std::lock_guard lock(core_.mutex);
          core_.reduced[index] = 1;
        }
        core_.changed.notify_all();
      }
    } catch (...) {
      core_.fail(std::current_exception());
    }
  }

  GroupCallback reduceGroup_;
  std::thread worker_;
  bool stopRequested_ = false;  // guarded by core_.mutex
  double reducing_ = 0;         // this step's reductions, seconds
};

}  // namespace

std::unique_ptr<Scheduler> makeOrderedScheduler(EngineCore& core) {
  if (core.settings().order == ReduceOrder::kForwardPriority) return std::make_unique<PriorityScheduler>(core);
  return std::make_unique<FifoScheduler>(core);
}

std::unique_ptr<Scheduler> makeInOrderScheduler(EngineCore& core, GroupCallback reduceGroup) {
  return std::make_unique<InOrderScheduler>(core, std::move(reduceGroup));
}

}  // namespace paraxis::reduce
