#include "cost/topology.hpp"

#include <algorithm>

namespace paraxis::cost {

GroupLink groupLink(const hw::Cluster& cluster, const Placement& group, Congestion congestion) {
  GroupLink out;
  if (group.size <= 1) return out;
  const std::int64_t span = (group.size - 1) * group.stride;
  out.level = cluster.levelBetween(0, span);
  out.link.alpha = cluster.levels[out.level].alpha;
  out.link.gamma = reductionGamma(cluster.device);
  for (int l = 0; l <= out.level; ++l) {
    const hw::NetworkLevel& level = cluster.levels[l];
    const std::int64_t unitBelow = l == 0 ? 1 : cluster.levels[l - 1].ranks;
    double beta = level.beta * static_cast<double>(std::min(group.stride, unitBelow));
    if (congestion != Congestion::kOptimistic && l > 0) {
      beta *= level.oversubscription * level.contention;
      if (congestion == Congestion::kCongested) beta *= 2;
    }
    out.link.beta = std::max(out.link.beta, beta);
  }
  return out;
}

double reductionGamma(const hw::Device& device) { return 3.0 / device.memoryBandwidth; }

CollectiveEstimate allreduceOn(const hw::Cluster& c, const Placement& g, double m, Congestion k) {
  if (g.size <= 1 || m <= 0) return {0, "none"};
  return PlacedAllreduce(c, g, k)(m);
}

PlacedAllreduce::PlacedAllreduce(const hw::Cluster& c, const Placement& g, Congestion k) : size_(g.size) {
  if (g.size <= 1) return;
  flat_ = groupLink(c, g, k);
  // Two levels: the members inside one node, then one member per node across nodes.
  const std::int64_t perNode = std::max<std::int64_t>(1, std::min(g.size, c.devicesPerNode / g.stride));
  if (perNode > 1 && g.size % perNode == 0 && g.size / perNode > 1) {
    perNode_ = perNode;
    inside_ = groupLink(c, {perNode, g.stride}, k);
    across_ = groupLink(c, {g.size / perNode, g.stride * perNode}, k);
  }
}

CollectiveEstimate PlacedAllreduce::operator()(double m) const {
  if (size_ <= 1 || m <= 0) return {0, "none"};
  const AllreduceEstimate best = bestFlatAllreduce(static_cast<int>(size_), m, flat_.link);
  CollectiveEstimate out{best.seconds, std::string(choiceName(best.algorithm))};
  if (perNode_ > 1) {
    const double twoLevel = hierarchicalAllreduce(static_cast<int>(perNode_), static_cast<int>(size_ / perNode_), m,
                                                  inside_.link, across_.link);
    if (twoLevel < out.seconds) out = {twoLevel, "hierarchical"};
  }
  return out;
}

CollectiveEstimate allgatherOn(const hw::Cluster& c, const Placement& g, double m, Congestion k) {
  if (g.size <= 1 || m <= 0) return {0, "none"};
  return {ringAllgather(static_cast<int>(g.size), m, groupLink(c, g, k).link), "ring"};
}

CollectiveEstimate reduceScatterOn(const hw::Cluster& c, const Placement& g, double m, Congestion k) {
  if (g.size <= 1 || m <= 0) return {0, "none"};
  return {ringReduceScatter(static_cast<int>(g.size), m, groupLink(c, g, k).link), "ring"};
}

CollectiveEstimate alltoallOn(const hw::Cluster& c, const Placement& g, double m, Congestion k) {
  if (g.size <= 1 || m <= 0) return {0, "none"};
  return {pairwiseAlltoall(static_cast<int>(g.size), m, groupLink(c, g, k).link), "pairwise"};
}

CollectiveEstimate pointToPointOn(const hw::Cluster& c, std::int64_t stride, double m, Congestion k) {
  if (m <= 0) return {0, "none"};
  return {pointToPoint(m, groupLink(c, {2, stride}, k).link), "p2p"};
}

}  // namespace paraxis::cost
