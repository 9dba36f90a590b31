#include "plan/gradient_schedule.hpp"

#include <algorithm>

namespace paraxis::plan {

std::vector<std::vector<int>> gradientGroupLayers(const graph::Model& model, const GradientComm& settings) {
  const std::vector<cost::LayerProfile> profiles = cost::profileLayers(model);
  std::vector<GradientSource> sources;
  std::vector<int> layers;
  for (int i = model.size() - 1; i >= 0; --i) {
    if (!carriesGradient(profiles[i])) continue;
    sources.push_back({0, profiles[i].params * 4});
    layers.push_back(i);
  }
  std::vector<std::vector<int>> groups = formGroups(sources, settings);
  for (std::vector<int>& group : groups) {
    for (int& entry : group) entry = layers[entry];
  }
  return groups;
}

std::vector<std::vector<int>> formGroups(const std::vector<GradientSource>& sources, const GradientComm& s) {
  std::vector<double> bytes;
  for (const auto& src : sources) bytes.push_back(src.bytes);
  return formGradientGroups(bytes, s);
}

GradientResult scheduleGradients(const std::vector<GradientSource>& sources, double backwardSeconds,
                                 const GradientComm& s, const std::function<double(double)>& reduce,
                                 double negotiationSeconds, const hw::Overlap& overlap) {
  ScheduleScratch scratch;
  return scheduleGradients(sources, backwardSeconds, s, reduce, negotiationSeconds, overlap, scratch);
}

namespace {

// When `work` seconds of reduction (at full speed) started at `start` finish, if it progresses
// at `hidden` of its speed until backward ends at `end` and at full speed after; adds the time
// it spent in flight during backward to `busy` and the work it did there to `done`.
double finishBeside(double start, double work, double end, double hidden, double& busy, double& done) {
  if (start >= end || work <= 0) return start + work;
  const double window = end - start;
  if (hidden * window >= work) {
    busy += work / hidden;
    done += work;
    return start + work / hidden;
  }
  busy += window;
  done += hidden * window;
  return end + work - hidden * window;
}

}  // namespace

GradientResult scheduleGradients(const std::vector<GradientSource>& sources, double backwardSeconds,
                                 const GradientComm& s, const std::function<double(double)>& reduce,
                                 double negotiationSeconds, const hw::Overlap& overlap, ScheduleScratch& scratch) {
  std::vector<double>& bytes = scratch.bytes;
  std::vector<int>& ends = scratch.ends;
  bytes.clear();
  for (const auto& src : sources) bytes.push_back(src.bytes);
  gradientGroupEnds(bytes, s, ends);
  GradientResult r;
  r.groups = static_cast<int>(ends.size());
  // Negotiation (or the cycle it waits for) is a latency floor in front of every group.
  const double perGroupLatency =
      s.negotiation == Negotiation::kNone ? 0.0 : std::max(negotiationSeconds, s.cycleSeconds);
  double networkFree = 0;
  double busy = 0;  // reductions in flight while backward computes
  double done = 0;  // their work done beside it (seconds at full speed)
  // lenet data=4 on 2 netns hosts x 2 ranks: a 1 MiB chunk started 8 ms after its gradient was
  // ready and moved at about half speed, where one 30 MiB call beside the same compute moved at
  // 61-84 %.
  const double besideBackward = progressBesideBackward(overlap, s);
  int begin = 0;
  std::vector<double>& groupSeconds = scratch.groupSeconds;
  groupSeconds.clear();
  for (int end : ends) {
    double groupBytes = 0;
    double ready = 0;
    for (int i = begin; i < end; ++i) {
      groupBytes += sources[i].bytes;
      ready = std::max(ready, sources[i].readySeconds);
    }
    begin = end;
    const double seconds = reduce(groupBytes);
    r.total += seconds + perGroupLatency;
    r.negotiation += perGroupLatency;
    const double start = (s.overlap ? std::max(ready, networkFree) : std::max(backwardSeconds, networkFree));
    networkFree = finishBeside(start, perGroupLatency + seconds, backwardSeconds, besideBackward, busy, done);
    groupSeconds.push_back(perGroupLatency + seconds);
  }
  // Compute slows by the cores and memory the reductions' work takes: `slowdown` was measured
  // beside one call progressing at `hidden`, so per second of work done beside it compute loses
  // (slowdown - 1) / hidden. Engine chunks waiting on each other's threads (the chunked rate)
  // do little work and take little: cosmoflow 64^3 on 2 ranks here, 12.5 MiB in flight all
  // of its 140-260 ms backward, computed 0-12 ms longer than unsplit, where charging the time
  // in flight gave 42-78 ms (2-rank matrix, 2026-12-04).
  r.computeStretch = overlap.hidden > 0 ? (overlap.slowdown - 1) * done / overlap.hidden : (overlap.slowdown - 1) * busy;
  r.exposed = std::max(0.0, networkFree - backwardSeconds);
  if (s.order == ReduceOrder::kForwardPriority && r.exposed > 0) {
    // The work left at the end of backward belongs to the groups that became ready last
    // (the first layers'). They go out in forward order; the forward reaches group g at
    // F_g, by when the reductions progressed hidden x F_g beside it, and waits for the rest
    // of C_g, the remaining work of g and the groups before it: max over g of C_g - hidden F_g.
    // With overlap.forward set, the reductions move at that rate while the forward computes
    // and while it waits alike; else at `hidden` beside its compute and at full speed while
    // it waits. Either way: max over g of (C_g - beside F_g) / whileWaiting.
    const double tail = r.exposed;
    const double beside = overlap.forward.value_or(overlap.hidden);
    const double whileWaiting = overlap.forward.value_or(1.0);
    double left = tail;
    double cumulative = 0;
    double wait = 0;
    for (int g = static_cast<int>(ends.size()) - 1; g >= 0 && left > 0; --g) {
      const double remaining = std::min(left, groupSeconds[g]);
      left -= remaining;
      cumulative += remaining;
      // Sources run in backward order: a group's last one is the forward's first.
      wait = std::max(wait, (cumulative - beside * sources[ends[g] - 1].forwardStart) / whileWaiting);
    }
    r.exposed = std::max(0.0, wait);
    // What the forward did not wait for ran beside its compute, and slowed it as beside
    // backward (resnet18@64 on 2 ranks here: its forward took 51.9 ms, 40.8 ms on one rank,
    // with calibrated slowdown 1.3): (slowdown - 1) / hidden per second of work done beside it,
    // capped by when the forward reaches its last layer with weights (backward's first source).
    if (overlap.hidden > 0 && beside > 0) {
      const double inFlight = std::min(sources.front().forwardStart, (tail - whileWaiting * r.exposed) / beside);
      r.forwardStretch = (overlap.slowdown - 1) * std::max(0.0, inFlight) * beside / overlap.hidden;
    }
  }
  return r;
}

}  // namespace paraxis::plan
