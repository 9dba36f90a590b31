#pragma once
// Balanced stage partitioning for pipeline parallelism: contiguous runs of layers (in
// topological order) whose largest total time is as small as possible.
#include <vector>

namespace paraxis::plan {

// Returns, for each layer, its stage in [0, stages). Exact for contiguous partitions:
// a binary search on the bottleneck with a greedy feasibility check.
std::vector<int> partitionStages(const std::vector<double>& layerSeconds, int stages);

}  // namespace paraxis::plan
