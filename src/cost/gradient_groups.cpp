#include "cost/gradient_groups.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace paraxis::cost {

void gradientGroupEnds(const std::vector<double>& bytes, const GroupingRule& rule, std::vector<int>& ends) {
  ends.clear();
  const double total = std::accumulate(bytes.begin(), bytes.end(), 0.0);
  double size = 0;
  const int n = static_cast<int>(bytes.size());
  for (int i = 0; i < n; ++i) {
    size += bytes[i];
    double threshold = rule.fusionBytes;
    if (rule.mode == Grouping::kFusion && ends.empty()) threshold = rule.firstBucketBytes;
    if (rule.mode == Grouping::kGroups) threshold = total / std::max(1, rule.groups);
    const bool lastSlot = rule.mode == Grouping::kGroups && static_cast<int>(ends.size()) + 1 >= rule.groups;
    if (rule.mode == Grouping::kPerLayer || (size >= threshold && !lastSlot)) {
      ends.push_back(i + 1);
      size = 0;
    }
  }
  if (n > 0 && (ends.empty() || ends.back() != n)) ends.push_back(n);
}

std::vector<std::vector<int>> formGradientGroups(const std::vector<double>& bytes, const GroupingRule& rule) {
  std::vector<int> ends;
  gradientGroupEnds(bytes, rule, ends);
  std::vector<std::vector<int>> groups;
  int begin = 0;
  for (int end : ends) {
    std::vector<int>& group = groups.emplace_back();
    for (int i = begin; i < end; ++i) group.push_back(i);
    begin = end;
  }
  return groups;
}

std::string groupingName(Grouping g) {
  switch (g) {
    case Grouping::kFusion: return "fusion";
    case Grouping::kPerLayer: return "per-layer";
    case Grouping::kGroups: return "groups";
  }
  return "?";
}

Grouping groupingFromName(const std::string& name, const std::string& what) {
  for (Grouping g : {Grouping::kFusion, Grouping::kPerLayer, Grouping::kGroups}) {
    if (name == groupingName(g)) return g;
  }
  throw ConfigError(fmt::format("{}: expected fusion, per-layer or groups, found '{}'", what, name));
}

}  // namespace paraxis::cost
