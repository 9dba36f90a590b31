#pragma once
// How gradients are grouped for reduction (COST-MODELS.md section 5): one rule shared by the
// oracle's schedule (plan) and the runtime's engine (reduce), so both form the same groups.
#include <string>
#include <vector>

namespace paraxis::cost {

enum class Grouping { kFusion, kPerLayer, kGroups };

struct GroupingRule {
  Grouping mode = Grouping::kFusion;
  double fusionBytes = 4.0 * (1 << 20);       // kFusion: close a bucket at this size
  double firstBucketBytes = 1.0 * (1 << 20);  // kFusion: the first bucket is small, to start early
  int groups = 4;                             // kGroups: this many groups of about equal bytes
};

// `bytes` lists the gradients in backward order; returns groups of indices into it.
std::vector<std::vector<int>> formGradientGroups(const std::vector<double>& bytes, const GroupingRule& rule);
// The same groups as the end (one past the last index) of each: groups are consecutive runs.
void gradientGroupEnds(const std::vector<double>& bytes, const GroupingRule& rule, std::vector<int>& ends);

std::string groupingName(Grouping g);
// "fusion", "per-layer" or "groups"; throws ConfigError naming `what` otherwise.
Grouping groupingFromName(const std::string& name, const std::string& what);

}  // namespace paraxis::cost
