// The topology model: which network level a group of ranks crosses, shared flows, and the
// allreduce it picks there.
#include "cost/topology.hpp"

#include <gtest/gtest.h>

#include "hw/presets.hpp"

namespace paraxis::cost {
namespace {

TEST(Topology, SlowestPairSharedFlowsAndOversubscription) {
  const hw::Cluster abci = hw::loadCluster("abci");
  const double ib = 1 / 12.5e9;
  // Inside one node: NVLink.
  GroupLink g = groupLink(abci, {4, 1}, Congestion::kExpected);
  EXPECT_EQ(g.level, 0);
  EXPECT_DOUBLE_EQ(g.link.beta, 1 / 50e9);
  EXPECT_DOUBLE_EQ(g.link.alpha, 20e-6);
  // Two nodes, consecutive ranks: one flow leaves each node.
  g = groupLink(abci, {8, 1}, Congestion::kExpected);
  EXPECT_EQ(g.level, 1);
  EXPECT_DOUBLE_EQ(g.link.beta, ib);
  // One rank per node: the node's 4 rings share its 2 links, two flows to a link.
  EXPECT_DOUBLE_EQ(groupLink(abci, {8, 4}, Congestion::kExpected).link.beta, 2 * ib);
  EXPECT_DOUBLE_EQ(groupLink(abci, {8, 2}, Congestion::kExpected).link.beta, ib);
  // Across racks: 3:1 oversubscription, doubled contention when congested, none when optimistic.
  EXPECT_DOUBLE_EQ(groupLink(abci, {100, 1}, Congestion::kExpected).link.beta, 3 * ib);
  EXPECT_DOUBLE_EQ(groupLink(abci, {100, 1}, Congestion::kCongested).link.beta, 6 * ib);
  EXPECT_DOUBLE_EQ(groupLink(abci, {100, 1}, Congestion::kOptimistic).link.beta, ib);
}

TEST(Topology, OneFlowPerLinkUntilTheLinksRunOut) {
  // An HGX H200 node has 8 NICs of 400 Gbit/s: eight rings leaving it run at one NIC each, and
  // a single ring is not eight times faster than any NIC.
  const hw::Cluster pod = hw::loadCluster("h200-pod");
  const double nic = 1 / 50e9;
  EXPECT_DOUBLE_EQ(pod.levels[1].injectionBandwidth(), 400e9);
  EXPECT_DOUBLE_EQ(groupLink(pod, {16, 1}, Congestion::kExpected).link.beta, nic);
  EXPECT_DOUBLE_EQ(groupLink(pod, {16, 8}, Congestion::kExpected).link.beta, nic);
  // A file without `links` keeps one link per unit: its flows share it.
  hw::Cluster one = pod;
  one.levels[1].links = 1;
  EXPECT_DOUBLE_EQ(groupLink(one, {16, 8}, Congestion::kExpected).link.beta, 8 * nic);
}

// A path's figures on every level predict its traffic as if the levels had them; other paths
// keep the levels' own.
TEST(Topology, APathSeesItsOwnLink) {
  const hw::Cluster abci = hw::loadCluster("abci");
  hw::Cluster pathed = abci, slower = abci;
  for (hw::NetworkLevel& level : slower.levels) {
    pathed.implementation.paths[static_cast<int>(hw::CommPath::kGradientAllreduce)].push_back(
        {level.name, 10 * level.alpha, 2 * level.beta});
    level.alpha *= 10;
    level.beta *= 2;
  }
  const Placement gradient{64, 1, hw::CommPath::kGradientAllreduce};
  const double expected = allreduceOn(slower, gradient, 100e6, Congestion::kExpected).seconds;
  EXPECT_DOUBLE_EQ(allreduceOn(pathed, gradient, 100e6, Congestion::kExpected).seconds, expected);
  EXPECT_GT(expected, 1.5 * allreduceOn(abci, gradient, 100e6, Congestion::kExpected).seconds);
  EXPECT_EQ(allgatherOn(pathed, {64, 1}, 100e6, Congestion::kExpected).seconds,
            allgatherOn(abci, {64, 1}, 100e6, Congestion::kExpected).seconds);
}

TEST(Topology, AllreduceNamesItsAlgorithm) {
  const hw::Cluster abci = hw::loadCluster("abci");
  const CollectiveEstimate big = allreduceOn(abci, {64, 1}, 100e6, Congestion::kExpected);
  EXPECT_GT(big.seconds, 0);
  EXPECT_FALSE(big.algorithm.empty());
  EXPECT_EQ(allreduceOn(abci, {1, 1}, 100e6, Congestion::kExpected).seconds, 0);
}

// A forced algorithm is priced alone where it is a candidate, and the fastest stands in where
// it is not (hierarchical over one node).
TEST(Topology, AForcedAllreduceIsPricedAlone) {
  const hw::Cluster abci = hw::loadCluster("abci");
  const PlacedAllreduce across(abci, {64, 1}, Congestion::kExpected);
  for (std::string_view name : {"ring", "recursive_doubling", "rabenseifner", "hierarchical"}) {
    const CollectiveEstimate forced = across(100e6, name);
    EXPECT_EQ(forced.algorithm, name);
    EXPECT_GE(forced.seconds, across(100e6).seconds);
  }
  const PlacedAllreduce inside(abci, {4, 1}, Congestion::kExpected);  // one node of 4 GPUs
  EXPECT_EQ(inside(100e6, "hierarchical").algorithm, inside(100e6).algorithm);
  EXPECT_EQ(inside(100e6, "hierarchical").seconds, inside(100e6).seconds);
}

}  // namespace
}  // namespace paraxis::cost
