#pragma once
// Where a group of ranks sits on the machine, and what the network looks like to it.
//
// A group is `size` ranks spaced `stride` apart (rank r0, r0+stride, ...); every group of the
// job runs at once (all data-parallel rings of a hybrid, say). A ring over the group costs
// its slowest pair: α of the outermost level it spans, and the largest β among the levels it
// crosses, where each level's β (of one link) is multiplied by the flows that share one link
// out of a unit: min(stride, ranks of the unit below) flows over the unit's `links` (four
// data-parallel rings leave a 4-GPU node with two NICs two to a NIC; eight leave an H200 node
// with eight NICs one to each), and by the level's oversubscription and its contention
// (COST-MODELS.md section 3).
#include <cstdint>
#include <string>
#include <string_view>

#include "cost/collective_cost.hpp"
#include "hw/cluster.hpp"

namespace paraxis::cost {

struct Placement {
  std::int64_t size = 1;
  std::int64_t stride = 1;
  // Which software path carries the traffic: its measured alpha and beta, where the cluster's
  // implementation has them, replace the levels' (hw::Cluster::alphaOn).
  hw::CommPath path = hw::CommPath::kCollectives;
};

// optimistic: no oversubscription, no contention; expected: the cluster as described;
// congested: contention doubled on every level beyond the node.
enum class Congestion { kOptimistic, kExpected, kCongested };

struct GroupLink {
  LinkParams link;
  int level = 0;  // outermost level the group spans
};

GroupLink groupLink(const hw::Cluster& cluster, const Placement& group, Congestion congestion);
// The flows that share one link at the outermost level the group spans (at least 1): how many
// of the job's groups like this one groupLink charges to each link there.
double linkSharing(const hw::Cluster& cluster, const Placement& group);

// Per byte reduced on the device: two operands read, one result written.
double reductionGamma(const hw::Device& device);

struct CollectiveEstimate {
  double seconds = 0;
  std::string_view algorithm;  // a static name: no allocation in the oracle's inner loop
};

// Collectives over a placed group; m as in collective_cost.hpp. allreduce picks the
// fastest of ring, recursive doubling, Rabenseifner and (when the group spans nodes with
// several members on each) hierarchical, and names it.
CollectiveEstimate allreduceOn(const hw::Cluster& c, const Placement& g, double m, Congestion k);

// allreduceOn for many message sizes over one group: the group is placed once (the oracle
// costs every gradient group of an iteration over the same ranks).
class PlacedAllreduce {
 public:
  PlacedAllreduce(const hw::Cluster& c, const Placement& g, Congestion k);
  CollectiveEstimate operator()(double m) const;
  // Only the algorithm named `only` ("ring", "recursive_doubling", "rabenseifner",
  // "hierarchical"), where it is a candidate for this group (hierarchical needs several
  // members on each of several nodes); the fastest otherwise.
  CollectiveEstimate operator()(double m, std::string_view only) const;

 private:
  // Every candidate's time is affine in m (α terms, then β and γ per byte): kept as
  // a + b·m, so that a call is a handful of multiply-adds (the oracle calls it per group).
  struct Candidate {
    double a = 0, b = 0;
    std::string_view name;
  };
  std::int64_t size_;
  Candidate candidates_[4];
  int count_ = 0;
};
// A group placed once, for the ring collectives an evaluation runs on it layer after layer
// (the link is found once, not per layer). allgather and reduceScatter as allgatherOn and
// reduceScatterOn; pointToPoint is one message between two members.
class PlacedGroup {
 public:
  PlacedGroup() = default;
  PlacedGroup(const hw::Cluster& c, const Placement& g, Congestion k);
  double allgather(double m) const;
  double reduceScatter(double m) const;
  double pointToPoint(double m) const;

 private:
  std::int64_t size_ = 1;
  GroupLink link_;
};

CollectiveEstimate allgatherOn(const hw::Cluster& c, const Placement& g, double m, Congestion k);
CollectiveEstimate reduceScatterOn(const hw::Cluster& c, const Placement& g, double m, Congestion k);
CollectiveEstimate alltoallOn(const hw::Cluster& c, const Placement& g, double m, Congestion k);
// One message between neighbours `stride` apart, on the point-to-point path.
CollectiveEstimate pointToPointOn(const hw::Cluster& c, std::int64_t stride, double m, Congestion k);

}  // namespace paraxis::cost
