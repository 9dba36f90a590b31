#include "plan/gradient_schedule.hpp"

#include <algorithm>

namespace paraxis::plan {

std::vector<std::vector<int>> formGroups(const std::vector<GradientSource>& sources, const CommSettings& s) {
  std::vector<std::vector<int>> groups;
  const int n = static_cast<int>(sources.size());
  if (n == 0) return groups;
  if (s.grouping == Grouping::kPerLayer) {
    for (int i = 0; i < n; ++i) groups.push_back({i});
    return groups;
  }
  double total = 0;
  for (const auto& src : sources) total += src.bytes;
  std::vector<int> current;
  double bytes = 0;
  for (int i = 0; i < n; ++i) {
    current.push_back(i);
    bytes += sources[i].bytes;
    double threshold = s.fusionBytes;
    if (s.grouping == Grouping::kGroups) threshold = total / std::max(1, s.groups);
    if (s.grouping == Grouping::kFusion && groups.empty()) threshold = s.firstBucketBytes;
    const bool lastGroupSlot = s.grouping == Grouping::kGroups && static_cast<int>(groups.size()) + 1 >= s.groups;
    if (bytes >= threshold && !lastGroupSlot) {
      groups.push_back(current);
      current.clear();
      bytes = 0;
    }
  }
  if (!current.empty()) groups.push_back(current);
  return groups;
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
