// Each formula of COST-MODELS.md section 3 against values computed by hand.
#include "alphabeta/collective_cost.hpp"

#include <gtest/gtest.h>


namespace paraxis::alphabeta {
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

}  // namespace
}  // namespace paraxis::alphabeta
