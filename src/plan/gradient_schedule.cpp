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
  GradientResult r;
  const auto groups = formGroups(sources, s);
  r.groups = static_cast<int>(groups.size());
  // Negotiation (or the cycle it waits for) is a latency floor in front of every group.
  const double perGroupLatency =
      s.negotiation == Negotiation::kNone ? 0.0 : std::max(negotiationSeconds, s.cycleSeconds);
  double networkFree = 0;
  for (const auto& group : groups) {
    double bytes = 0;
    double ready = 0;
    for (int i : group) {
      bytes += sources[i].bytes;
      ready = std::max(ready, sources[i].readySeconds);
    }
    const double seconds = reduce(bytes);
    r.total += seconds + perGroupLatency;
    r.negotiation += perGroupLatency;
    const double start = (s.overlap ? std::max(ready, networkFree) : std::max(backwardSeconds, networkFree));
    networkFree = start + perGroupLatency + seconds;
  }
  r.exposed = std::max(0.0, networkFree - backwardSeconds);
  return r;
}

}  // namespace paraxis::plan
