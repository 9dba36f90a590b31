// calib::skewFromSittings: the spans pooled, the figures each the median of the sittings' own.
#include <gtest/gtest.h>

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
