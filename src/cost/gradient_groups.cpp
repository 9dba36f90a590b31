#include "cost/gradient_groups.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace paraxis::cost {

std::vector<std::vector<int>> formGradientGroups(const std::vector<double>& bytes, const GroupingRule& rule) {
  std::vector<std::vector<int>> groups;
  const double total = std::accumulate(bytes.begin(), bytes.end(), 0.0);
  std::vector<int> current;
  double size = 0;
  for (int i = 0; i < static_cast<int>(bytes.size()); ++i) {
    current.push_back(i);
    size += bytes[i];
    double threshold = rule.fusionBytes;
    if (rule.mode == Grouping::kFusion && groups.empty()) threshold = rule.firstBucketBytes;
    if (rule.mode == Grouping::kGroups) threshold = total / std::max(1, rule.groups);
    const bool lastSlot = rule.mode == Grouping::kGroups && static_cast<int>(groups.size()) + 1 >= rule.groups;
    if (rule.mode == Grouping::kPerLayer || (size >= threshold && !lastSlot)) {
      groups.push_back(current);
      current.clear();
      size = 0;
    }
  }
  if (!current.empty()) groups.push_back(current);
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
