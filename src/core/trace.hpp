#pragma once
// A timeline of one process in Chrome's trace-event format (opens in Perfetto and
// chrome://tracing): complete events ("ph": "X") with a category, a name, the thread that ran
// them and optional byte counts. Off until enable(); while off, recording costs one relaxed
// atomic load. Threads register under a name (nameThread); events of any thread are kept in
// one list behind a mutex (a training step records tens to a few hundred).
//
// The categories `train --trace` writes are the measured breakdown's names (docs/trace.md):
// an event of one category may hold events of others (forward holds the updates and gradient
// waits it ran, and halo exchanges), and a category's time is its events' time less what they
// hold of the other categories, which is how train computes the breakdown.
#include <chrono>
#include <cstdint>
#include <string>

namespace paraxis::trace {

using Clock = std::chrono::steady_clock;

void enable();
bool enabled();
// Names the calling thread in the timeline ("main", "comm progress", ...). `shareRow`: threads
// that run one after another under one name (a scheduler's thread per step) share one row.
void nameThread(const std::string& name, bool shareRow = false);

// One finished interval of the calling thread. `bytes` < 0: none to show.
void complete(const char* category, std::string name, Clock::time_point start, Clock::time_point end,
              std::int64_t bytes = -1);

// An interval on a row of its own named `row` (not a thread: intervals computed after the
// fact, such as each layer's share of one autograd call); rows with one name are one row.
void completeOnRow(const std::string& row, const char* category, std::string name, Clock::time_point start,
                   Clock::time_point end, std::int64_t bytes = -1);

// While one lives, the calling thread records nothing: work that is not the job's (the speed
// probe times a model of its own, whose layers would mix with the job's) stays out of its timeline.
class Quiet {
 public:
  Quiet();
  ~Quiet();
  Quiet(const Quiet&) = delete;
  Quiet& operator=(const Quiet&) = delete;
};

// Records [construction, destruction) of the calling thread, when enabled at construction.
class Span {
 public:
  Span(const char* category, std::string name, std::int64_t bytes = -1);
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  const char* category_;
  std::string name_;
  std::int64_t bytes_;
  Clock::time_point start_;
  bool on_;
};

// This process's events as the members of a Chrome trace's "traceEvents" array (no brackets),
// with `pid` and the process and thread names as metadata events; times in microseconds from
// enable().
std::string eventsJson(int pid, const std::string& processName);

}  // namespace paraxis::trace
