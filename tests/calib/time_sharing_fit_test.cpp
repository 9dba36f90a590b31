#include "calib/time_sharing_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace paraxis::calib {
namespace {

// The spans and stretches calibrate --quick timed on the netns hosts (4 ranks on this project's
// 2-core VM, 2026-12-07 sitting n54): lenet, small-cnn, resnet18@64, cosmoflow@64 at their batches.
const std::vector<SharedSpan> kNetns = {{0.0132, 1.893}, {0.0028, 1.521}, {0.0017, 1.301}, {0.0177, 1.929},
                                        {0.0036, 1.454}, {0.0017, 1.307}, {0.1731, 1.989}, {0.0439, 1.893},
                                        {0.0199, 1.961}, {0.5174, 1.981}, {0.2445, 1.987}};

TEST(TimeSharingFit, RecoversTheCurveItWasDrawnFrom) {
  const hw::TimeSharing truth{.shared = 1.8, .slice = 3e-3};
  std::vector<SharedSpan> spans;
  for (double span : {5e-4, 1e-3, 2e-3, 4e-3, 8e-3, 2e-2, 1e-1}) spans.push_back({span, truth.factor(span)});
  const hw::TimeSharing fitted = fitTimeSharing(spans);
  EXPECT_NEAR(fitted.shared, 1.8, 0.02);
  EXPECT_NEAR(fitted.slice, 3e-3, 3e-3 * 0.07);  // the search's step: 10^(1/20)
}

TEST(TimeSharingFit, TheNetnsHostsShareTwoRanksACoreOverAFewMilliseconds) {
  const hw::TimeSharing t = fitTimeSharing(kNetns);
  EXPECT_NEAR(t.shared, 1.96, 0.02);
  EXPECT_GT(t.slice, 3e-3);
  EXPECT_LT(t.slice, 6e-3);
  for (const SharedSpan& s : kNetns) EXPECT_NEAR(t.factor(s.cpuSeconds), s.wallPerCpu, 0.1) << s.cpuSeconds;
}

// A core per rank (2 ranks on this VM: 1.00-1.04 everywhere), one span, or none: no curve.
TEST(TimeSharingFit, NoCurveWhereEveryRankHadACore) {
  EXPECT_TRUE(fitTimeSharing({{0.002, 1.001}, {0.02, 1.008}, {0.3, 1.04}}).isIdentity());
  EXPECT_TRUE(fitTimeSharing({{0.02, 1.9}}).isIdentity());
  EXPECT_TRUE(fitTimeSharing({}).isIdentity());
  EXPECT_TRUE(fitTimeSharing({{0.002, 1}, {0.02, 1}}).isIdentity());
}

}  // namespace
}  // namespace paraxis::calib
