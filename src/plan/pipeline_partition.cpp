#include "plan/pipeline_partition.hpp"

#include <algorithm>
#include <numeric>

namespace paraxis::plan {
namespace {

// Greedy: fill each stage up to `limit`; returns the stages needed.
int stagesNeeded(const std::vector<double>& t, double limit) {
  int stages = 1;
  double current = 0;
  for (double x : t) {
    if (current + x > limit && current > 0) {
      ++stages;
      current = 0;
    }
    current += x;
  }
  return stages;
}

}  // namespace

std::vector<int> partitionStages(const std::vector<double>& t, int stages) {
  const int n = static_cast<int>(t.size());
  std::vector<int> out(n, 0);
  if (stages <= 1 || n == 0) return out;
  double lo = *std::max_element(t.begin(), t.end());
  double hi = std::accumulate(t.begin(), t.end(), 0.0);
  for (int iteration = 0; iteration < 100 && hi - lo > 1e-12 * std::max(1.0, hi); ++iteration) {
    const double mid = 0.5 * (lo + hi);
    if (stagesNeeded(t, mid) <= stages) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  // Assign greedily under the bottleneck, then make sure every stage gets a layer.
  int stage = 0;
  double current = 0;
  for (int i = 0; i < n; ++i) {
    const int remainingLayers = n - i;
    const int remainingStages = stages - stage - 1;
    if (stage + 1 < stages && current > 0 && (current + t[i] > hi || remainingLayers <= remainingStages)) {
      ++stage;
      current = 0;
    }
    out[i] = stage;
    current += t[i];
  }
  return out;
}

}  // namespace paraxis::plan
