#include "cost/topology.hpp"

#include <algorithm>

namespace paraxis::cost {

namespace {

// Flows of this job that share one link of level l out of a unit (the file's comment), at least 1.
double flowsPerLink(const hw::Cluster& cluster, const Placement& group, int l) {
  const std::int64_t unitBelow = l == 0 ? 1 : cluster.levels[l - 1].ranks;
  const double flows = static_cast<double>(std::min(group.stride, unitBelow));
  return std::max(1.0, flows / static_cast<double>(cluster.levels[l].links));
}

}  // namespace

double linkSharing(const hw::Cluster& cluster, const Placement& group) {
  if (group.size <= 1) return 1;
  return flowsPerLink(cluster, group, cluster.levelBetween(0, (group.size - 1) * group.stride));
}

GroupLink groupLink(const hw::Cluster& cluster, const Placement& group, Congestion congestion) {
  GroupLink out;
  if (group.size <= 1) return out;
  const std::int64_t span = (group.size - 1) * group.stride;
  out.level = cluster.levelBetween(0, span);
  out.link.alpha = cluster.alphaOn(group.path, out.level);
  out.link.gamma = reductionGamma(cluster.device);
  for (int l = 0; l <= out.level; ++l) {
    const hw::NetworkLevel& level = cluster.levels[l];
    double beta = cluster.betaOn(group.path, l) * flowsPerLink(cluster, group, l);
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
  const int p = static_cast<int>(g.size);
  auto add = [this](auto&& seconds, std::string_view name) {
    const double a = seconds(0.0);
    candidates_[count_++] = {a, seconds(1.0) - a, name};
  };
  // In the order bestFlatAllreduce breaks ties: ring, recursive doubling, Rabenseifner.
  const LinkParams flat = groupLink(c, g, k).link;
  add([&](double m) { return ringAllreduce(p, m, flat); }, choiceName(AllreduceChoice::kRing));
  add([&](double m) { return recursiveDoublingAllreduce(p, m, flat); }, choiceName(AllreduceChoice::kRecursiveDoubling));
  add([&](double m) { return rabenseifnerAllreduce(p, m, flat); }, choiceName(AllreduceChoice::kRabenseifner));
  // Two levels: the members inside one node, then one member per node across nodes.
  const std::int64_t perNode = std::max<std::int64_t>(1, std::min(g.size, c.devicesPerNode / g.stride));
  if (perNode > 1 && g.size % perNode == 0 && g.size / perNode > 1) {
    const LinkParams inside = groupLink(c, {perNode, g.stride, g.path}, k).link;
    const LinkParams across = groupLink(c, {g.size / perNode, g.stride * perNode, g.path}, k).link;
    const int local = static_cast<int>(perNode), nodes = static_cast<int>(g.size / perNode);
    add([&](double m) { return hierarchicalAllreduce(local, nodes, m, inside, across); }, "hierarchical");
  }
}

CollectiveEstimate PlacedAllreduce::operator()(double m) const {
  if (size_ <= 1 || m <= 0) return {0, "none"};
  CollectiveEstimate out{candidates_[0].a + candidates_[0].b * m, candidates_[0].name};
  for (int i = 1; i < count_; ++i) {
    const double seconds = candidates_[i].a + candidates_[i].b * m;
    if (seconds < out.seconds) out = {seconds, candidates_[i].name};
  }
  return out;
}

CollectiveEstimate PlacedAllreduce::operator()(double m, std::string_view only) const {
  if (size_ <= 1 || m <= 0) return {0, "none"};
  for (int i = 0; i < count_; ++i) {
    if (candidates_[i].name == only) return {candidates_[i].a + candidates_[i].b * m, candidates_[i].name};
  }
  return (*this)(m);
}

PlacedGroup::PlacedGroup(const hw::Cluster& c, const Placement& g, Congestion k) : size_(g.size) {
  if (g.size > 1) link_ = groupLink(c, g, k);
}

double PlacedGroup::allgather(double m) const {
  return size_ <= 1 || m <= 0 ? 0 : ringAllgather(static_cast<int>(size_), m, link_.link);
}

double PlacedGroup::reduceScatter(double m) const {
  return size_ <= 1 || m <= 0 ? 0 : ringReduceScatter(static_cast<int>(size_), m, link_.link);
}

double PlacedGroup::pointToPoint(double m) const { return size_ <= 1 || m <= 0 ? 0 : cost::pointToPoint(m, link_.link); }

CollectiveEstimate allgatherOn(const hw::Cluster& c, const Placement& g, double m, Congestion k) {
  if (g.size <= 1 || m <= 0) return {0, "none"};
  return {PlacedGroup(c, g, k).allgather(m), "ring"};
}

CollectiveEstimate reduceScatterOn(const hw::Cluster& c, const Placement& g, double m, Congestion k) {
  if (g.size <= 1 || m <= 0) return {0, "none"};
  return {PlacedGroup(c, g, k).reduceScatter(m), "ring"};
}

CollectiveEstimate alltoallOn(const hw::Cluster& c, const Placement& g, double m, Congestion k) {
  if (g.size <= 1 || m <= 0) return {0, "none"};
  return {pairwiseAlltoall(static_cast<int>(g.size), m, groupLink(c, g, k).link), "pairwise"};
}

CollectiveEstimate pointToPointOn(const hw::Cluster& c, std::int64_t stride, double m, Congestion k) {
  if (m <= 0) return {0, "none"};
  return {PlacedGroup(c, {2, stride, hw::CommPath::kPointToPoint}, k).pointToPoint(m), "p2p"};
}

}  // namespace paraxis::cost
