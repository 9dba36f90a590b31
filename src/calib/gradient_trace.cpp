#include "calib/gradient_trace.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "calib/trace_events.hpp"

namespace paraxis::calib {
namespace {

// One measured step's events of one rank.
struct StepEvents {
  std::optional<TraceInterval> forward, backward;  // the main thread's
  std::vector<TraceInterval> waits, updates;        // the main thread's gradient waits and updates
  std::vector<TraceInterval> reductions;            // the engine's reduction calls, any thread
};

bool isReduction(const TraceEvent& e) { return e.category == "engine" && e.name.starts_with("reduce group"); }

// The rank's events by the measured step that holds them (the step's index in `steps`).
std::map<std::size_t, StepEvents> byStep(const RankTrace& r) {
  std::map<std::size_t, StepEvents> out;
  for (const TraceEvent& e : r.events) {
    // By where it begins: the engine's calls may run on past their step's end.
    const std::ptrdiff_t step = intervalHolding(r.steps, {e.at.begin, e.at.begin});
    if (step < 0) continue;  // outside every measured step
    StepEvents& s = out[static_cast<std::size_t>(step)];
    const bool main = r.onMain(e);
    if (main && e.category == "forward") s.forward = e.at;
    if (main && e.category == "backward") s.backward = e.at;
    if (main && e.category == "gradient_exposed") s.waits.push_back(e.at);
    if (main && e.category == "update") s.updates.push_back(e.at);
    if (isReduction(e)) s.reductions.push_back(e.at);
  }
  return out;
}

struct Sums {
  int steps = 0, inFlight = 0;
  double forwardFirst = 0, forwardLater = 0, afterBackward = 0, inFlightAfter = 0;
};

void addStep(StepEvents s, Sums& sums) {
  if (!s.backward || (s.waits.empty() && s.reductions.empty())) return;
  ++sums.steps;
  const std::vector<TraceInterval> updates = mergedIntervals(std::move(s.updates));
  std::sort(s.waits.begin(), s.waits.end(), [](const TraceInterval& a, const TraceInterval& b) { return a.begin < b.begin; });
  bool first = true;
  for (const TraceInterval& w : s.waits) {
    const double seconds = w.seconds() - timeInside(updates, w) * 1e-6;
    const bool inForward = s.forward && w.begin >= s.forward->begin && w.end <= s.forward->end;
    if (!inForward) {
      sums.afterBackward += seconds;
    } else {
      (first ? sums.forwardFirst : sums.forwardLater) += seconds;
      first = false;
    }
  }
  const double end = s.backward->end;
  for (const TraceInterval& r : s.reductions) {
    if (r.begin < end && r.end > end) {
      ++sums.inFlight;
      sums.inFlightAfter += (r.end - end) * 1e-6;
      break;
    }
  }
}

}  // namespace

ExposedGradient readExposedGradient(const std::string& path) {
  return exposedGradient(readRankTraces(path));
}

ExposedGradient exposedGradient(const RankTraces& ranks) {
  Sums sums;
  for (const auto& [pid, trace] : ranks) {
    for (auto& [index, step] : byStep(trace)) addStep(std::move(step), sums);
  }
  ExposedGradient out;
  out.steps = sums.steps;
  if (sums.steps == 0) return out;
  const double n = sums.steps;
  out.forwardFirst = sums.forwardFirst / n;
  out.forwardLater = sums.forwardLater / n;
  out.afterBackward = sums.afterBackward / n;
  out.inFlightShare = sums.inFlight / n;
  out.inFlightAfter = sums.inFlight > 0 ? sums.inFlightAfter / sums.inFlight : 0;
  return out;
}

}  // namespace paraxis::calib
