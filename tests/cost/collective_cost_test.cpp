// Each formula of COST-MODELS.md section 3 against values computed by hand.
#include "cost/collective_cost.hpp"

#include <gtest/gtest.h>

#include "cost/topology.hpp"
#include "hw/presets.hpp"

namespace paraxis::cost {
namespace {

const LinkParams kLink{1e-6, 1e-9, 1e-10};  // 1 us, 1 GB/s, 10 GB/s reduction

TEST(CollectiveCost, FormulasByHand) {
  const double m = 8e6;
  // 2(p-1)α + 2((p-1)/p)mβ + ((p-1)/p)mγ with p = 4: 6 us + 12 ms + 0.6 ms
  EXPECT_DOUBLE_EQ(ringAllreduce(4, m, kLink), 6e-6 + 12e-3 + 0.6e-3);
  // log2(4) (α + mβ + mγ) = 2 (1 us + 8 ms + 0.8 ms)
  EXPECT_DOUBLE_EQ(recursiveDoublingAllreduce(4, m, kLink), 2 * (1e-6 + 8e-3 + 0.8e-3));
  // 2 log2 p α + 2(3/4) m β + (3/4) m γ
  EXPECT_DOUBLE_EQ(rabenseifnerAllreduce(4, m, kLink), 4e-6 + 12e-3 + 0.6e-3);
  // p = 6 folds onto 4: + 2(α + mβ) + mγ
  EXPECT_DOUBLE_EQ(rabenseifnerAllreduce(6, m, kLink), 4e-6 + 12e-3 + 0.6e-3 + 2 * (1e-6 + 8e-3) + 0.8e-3);
  // 2⌈log2 p⌉(α + mβ) + ⌈log2 p⌉ mγ, p = 5: 3 steps
  EXPECT_DOUBLE_EQ(binomialAllreduce(5, m, kLink), 6 * (1e-6 + 8e-3) + 3 * 0.8e-3);
  EXPECT_DOUBLE_EQ(ringAllgather(4, m, kLink), 3e-6 + 6e-3);
  EXPECT_DOUBLE_EQ(ringReduceScatter(4, m, kLink), 3e-6 + 6e-3 + 0.6e-3);
  EXPECT_DOUBLE_EQ(binomialBroadcast(8, m, kLink), 3 * (1e-6 + 8e-3));
  EXPECT_DOUBLE_EQ(pairwiseAlltoall(4, m, kLink), 3 * (1e-6 + 2e-3));
  EXPECT_DOUBLE_EQ(pointToPoint(m, kLink), 1e-6 + 8e-3);
  const LinkParams inter{10e-6, 1e-8, 1e-10};
  // L = 2, N = 4: RS(2) + ring(4, m/2) across + AG(2)
  EXPECT_DOUBLE_EQ(hierarchicalAllreduce(2, 4, m, kLink, inter),
                   ringReduceScatter(2, m, kLink) + ringAllreduce(4, m / 2, inter) + ringAllgather(2, m, kLink));
  EXPECT_EQ(ringAllreduce(1, m, kLink), 0);
}

TEST(CollectiveCost, ChoiceFollowsMessageSize) {
  EXPECT_EQ(bestFlatAllreduce(64, 8, kLink).algorithm, AllreduceChoice::kRecursiveDoubling);
  EXPECT_NE(bestFlatAllreduce(64, 256e6, kLink).algorithm, AllreduceChoice::kRecursiveDoubling);
}

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
  // One rank per node: the node's 4 rings share its link.
  EXPECT_DOUBLE_EQ(groupLink(abci, {8, 4}, Congestion::kExpected).link.beta, 4 * ib);
  // Across racks: 3:1 oversubscription, doubled contention when congested, none when optimistic.
  EXPECT_DOUBLE_EQ(groupLink(abci, {100, 1}, Congestion::kExpected).link.beta, 3 * ib);
  EXPECT_DOUBLE_EQ(groupLink(abci, {100, 1}, Congestion::kCongested).link.beta, 6 * ib);
  EXPECT_DOUBLE_EQ(groupLink(abci, {100, 1}, Congestion::kOptimistic).link.beta, ib);
}

TEST(Topology, AllreduceNamesItsAlgorithm) {
  const hw::Cluster abci = hw::loadCluster("abci");
  const CollectiveEstimate big = allreduceOn(abci, {64, 1}, 100e6, Congestion::kExpected);
  EXPECT_GT(big.seconds, 0);
  EXPECT_FALSE(big.algorithm.empty());
  EXPECT_EQ(allreduceOn(abci, {1, 1}, 100e6, Congestion::kExpected).seconds, 0);
}

}  // namespace
}  // namespace paraxis::cost
