#include "plan/gradient_schedule.hpp"

#include <algorithm>

namespace paraxis::plan {
std::vector<std::vector<int>> formGroups(const std::vector<GradientSource>& sources, const CommSettings& s) {
  std::vector<double> bytes;
  for (const auto& src : sources) bytes.push_back(src.bytes);
  return cost::formGradientGroups(bytes, {s.grouping, s.fusionBytes, s.firstBucketBytes, s.groups});
}

GradientResult scheduleGradients(const std::vector<GradientSource>& sources, double backwardSeconds,
                                 const CommSettings& s, const std::function<double(double)>& reduce,
                                 double negotiationSeconds) {
  // Reused between calls: the oracle evaluates thousands of configurations.
  thread_local std::vector<double> bytes;
  thread_local std::vector<int> ends;
  bytes.clear();
  for (const auto& src : sources) bytes.push_back(src.bytes);
  cost::gradientGroupEnds(bytes, {s.grouping, s.fusionBytes, s.firstBucketBytes, s.groups}, ends);
  GradientResult r;
  r.groups = static_cast<int>(ends.size());
  // Negotiation (or the cycle it waits for) is a latency floor in front of every group.
  const double perGroupLatency =
      s.negotiation == Negotiation::kNone ? 0.0 : std::max(negotiationSeconds, s.cycleSeconds);
  double networkFree = 0;
  int begin = 0;
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
    networkFree = start + perGroupLatency + seconds;
  }
  r.exposed = std::max(0.0, networkFree - backwardSeconds);
  return r;
}

}  // namespace paraxis::plan
