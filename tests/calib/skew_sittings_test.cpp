// calib::skewFromSittings: the spans pooled, the slopes each the median of the sittings' own, the
// waits the median of their blocks.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "calib/torch/overlap_bench.hpp"

namespace paraxis::calib {
namespace {

// A sitting whose short and long spans (10 and 40 ms) wait `shortWait` and `longWait`, and whose
// layer-sized spans (2 ms) wait `layerWait` alone and `besideWait` beside the engine's calls, and
// whose short and long spans beside them (11 and 42 ms) wait `shortBeside` and `longBeside`.
SkewSitting sitting(double latency, double shortWait, double longWait, double layerWait, double besideWait,
                    double shortBeside = 0, double longBeside = 0) {
  SkewSitting s;
  s.latency = latency;
  s.shortCompute = 10e-3;
  s.shortWait = shortWait;
  s.longCompute = 40e-3;
  s.longWait = longWait;
  s.layerCompute = s.besideCompute = 2e-3;
  s.layerWait = layerWait;
  s.besideWait = besideWait;
  s.shortBesideCompute = 11e-3;
  s.shortBesideWait = shortBeside;
  s.longBesideCompute = 42e-3;
  s.longBesideWait = longBeside;
  return s;
}

TEST(SkewSittings, OneSittingGivesItsOwnFigures) {
  const SkewMeasurement m = skewFromSittings({sitting(10e-6, 0.5e-3, 2e-3, 0.2e-3, 0.4e-3)});
  EXPECT_NEAR(m.skew, 0.05, 1e-12);                          // (2 - 0.5) ms over 30 ms
  EXPECT_NEAR(m.syncWait, 0.2e-3 - 10e-6 - 0.1e-3, 1e-12);   // less the latency and 5 % of 2 ms
  EXPECT_NEAR(m.syncWaitBeside, 0.4e-3 - 10e-6 - 0.1e-3, 1e-12);
  ASSERT_EQ(m.sittingSkew.size(), 1u);
  EXPECT_DOUBLE_EQ(m.sittingSkew[0], m.skew);
}

TEST(SkewSittings, FiguresAreTheSittingsMediansAndEachSubtractsItsOwnLatency) {
  // The second sitting ran in a slow spell: a 0.4 ms latency, its waits as long. Taken from the
  // pool its latency would leave the beside wait at 0. The third stalled beside the engine.
  const SkewSitting quiet = sitting(10e-6, 0.5e-3, 2e-3, 0.1e-3, 0.4e-3);
  const SkewSitting slow = sitting(400e-6, 0.5e-3, 5e-3, 0.5e-3, 0.4e-3);
  const SkewSitting stalled = sitting(10e-6, 0.6e-3, 2.2e-3, 0.15e-3, 1.6e-3);
  const SkewMeasurement m = skewFromSittings({quiet, slow, stalled});
  const SkewMeasurement a = skewFromSittings({quiet}), b = skewFromSittings({slow}), c = skewFromSittings({stalled});
  EXPECT_NEAR(m.skew, c.skew, 1e-12);  // 5.0 %, 15 % and 5.33 %: the middle one
  EXPECT_GT(c.syncWait, 0);
  EXPECT_EQ(m.syncWait, a.syncWait);   // 0, 0 and 33 us
  EXPECT_NEAR(m.syncWaitBeside, a.syncWaitBeside, 1e-12);  // not the stall's 1.5 ms
  EXPECT_GT(m.syncWaitBeside, 0.1e-3);
  EXPECT_EQ(b.syncWaitBeside, b.syncWait);  // beside is never below the quiet spans' wait
  EXPECT_NEAR(m.spans.longWait, 3.0667e-3, 1e-7);   // the spans pooled
  EXPECT_NEAR(m.spans.latency, 140e-6, 1e-12);
  EXPECT_EQ(m.sittingSyncWaitBeside, (std::vector<double>{a.syncWaitBeside, b.syncWaitBeside, c.syncWaitBeside}));
}

// A sitting whose beside blocks wait `blocks` (ms), its mean theirs, and whose layer-sized spans
// wait 0.2 ms alone; 10 us latency and a 5 % drift: 110 us of each wait is not the stall's.
SkewSitting blocked(std::vector<double> blocks) {
  for (double& b : blocks) b *= 1e-3;
  SkewSitting s = sitting(10e-6, 0.5e-3, 2e-3, 0.2e-3, std::accumulate(blocks.begin(), blocks.end(), 0.0) / 8);
  s.besideWaitBlocks = blocks;
  s.layerWaitBlocks = std::vector<double>(kSkewBlocks, 0.2e-3);
  return s;
}

// The waits are the median of every sitting's blocks: a stall that holds most of one sitting and
// part of another sets the median of the sittings' means, not that of their blocks.
TEST(SkewSittings, WaitsAreTheMedianOfEverySittingsBlocks) {
  const SkewSitting most = blocked({0.2, 0.2, 1, 1, 1, 1, 1, 1});
  const SkewSitting part = blocked({0.2, 0.2, 0.2, 0.2, 0.2, 1.5, 1.5, 1.5});
  const SkewSitting quiet = blocked({0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2});
  const SkewMeasurement m = skewFromSittings({most, part, quiet});
  EXPECT_NEAR(m.syncWaitBeside, 0.2e-3 - 110e-6, 1e-12);  // 15 of the 24 blocks wait 0.2 ms
  EXPECT_NEAR(m.sittingSyncWaitBeside[0], 1e-3 - 110e-6, 1e-12);  // its own: the stall
  EXPECT_NEAR(m.sittingSyncWaitBeside[1], 0.2e-3 - 110e-6, 1e-12);
  EXPECT_NEAR(m.syncWait, 0.2e-3 - 110e-6, 1e-12);
  EXPECT_NEAR(m.spans.besideWait, (0.8e-3 + 0.6875e-3 + 0.2e-3) / 3, 1e-12);  // the spans still pooled
  // Without their blocks each sitting is one block of its mean: the stall's 0.6875 ms is the middle.
  std::vector<SkewSitting> means{most, part, quiet};
  for (SkewSitting& s : means) s.besideWaitBlocks.clear();
  EXPECT_NEAR(skewFromSittings(means).syncWaitBeside, 0.6875e-3 - 110e-6, 1e-12);
}

// Beside the engine's calls the ranks drift at their own slope, the sittings' median; a slope
// below 0 (the long spans waited less) reads 0.
TEST(SkewSittings, TheDriftBesideTheEnginesCallsIsItsOwnSlope) {
  const SkewMeasurement one = skewFromSittings({sitting(10e-6, 0.5e-3, 2e-3, 0.2e-3, 0.4e-3, 0.3e-3, 1.85e-3)});
  EXPECT_NEAR(one.skewBeside, 0.05, 1e-12);  // (1.85 - 0.3) ms over 31 ms
  EXPECT_NEAR(one.skew, 0.05, 1e-12);
  const SkewMeasurement three = skewFromSittings({sitting(10e-6, 0.5e-3, 2e-3, 0.2e-3, 0.4e-3, 0.3e-3, 1.85e-3),
                                                  sitting(10e-6, 0.5e-3, 2e-3, 0.2e-3, 0.4e-3, 1e-3, 0.9e-3),
                                                  sitting(10e-6, 0.5e-3, 2e-3, 0.2e-3, 0.4e-3, 0.2e-3, 3.3e-3)});
  EXPECT_EQ(three.sittingSkewBeside[1], 0);
  EXPECT_NEAR(three.sittingSkewBeside[2], 0.1, 1e-12);
  EXPECT_NEAR(three.skewBeside, 0.05, 1e-12);  // 5 %, 0 and 10 %: the middle one
}

TEST(SkewSittings, NoSittingIsAnError) { EXPECT_THROW(skewFromSittings({}), std::logic_error); }

}  // namespace
}  // namespace paraxis::calib
