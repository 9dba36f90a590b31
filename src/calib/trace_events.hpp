#pragma once
// A `train --trace` file (docs/trace.md) read into each rank's complete events: what
// `validate --trace` takes apart (calib/layer_trace.hpp, calib/gradient_trace.hpp).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace paraxis::calib {

struct TraceInterval {
  double begin = 0, end = 0;  // microseconds, as the trace writes them
  double seconds() const { return (end - begin) * 1e-6; }
};

struct TraceEvent {
  std::string category, name;
  int thread = 0;
  TraceInterval at;
};

// One rank's events in the file's order, and its measured steps (the main thread's `step`
// events outside the warm-up, in order; they do not overlap).
struct RankTrace {
  int mainThread = 0;  // the thread named "main"
  std::vector<TraceInterval> steps;
  std::vector<TraceEvent> events;
  bool onMain(const TraceEvent& e) const { return e.thread == mainThread; }
};

// Every rank's events, by the rank (the trace's pid).
using RankTraces = std::map<int, RankTrace>;

// Throws NotFoundError when the file cannot be read and ConfigError naming the file when it is
// not a Chrome trace, an event lacks its times, or no rank has a measured step.
RankTraces readRankTraces(const std::string& path);

// The intervals sorted and merged where they touch or overlap.
std::vector<TraceInterval> mergedIntervals(std::vector<TraceInterval> v);
// The index of the one of the ordered, non-overlapping `intervals` that holds `x` (the last
// that begins before it where two touch), or -1.
std::ptrdiff_t intervalHolding(const std::vector<TraceInterval>& intervals, const TraceInterval& x);
inline bool insideAny(const std::vector<TraceInterval>& intervals, const TraceInterval& x) {
  return intervalHolding(intervals, x) >= 0;
}
// The time of the ordered, disjoint `intervals` within `x`, in microseconds.
double timeInside(const std::vector<TraceInterval>& intervals, const TraceInterval& x);

}  // namespace paraxis::calib
