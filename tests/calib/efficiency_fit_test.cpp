#include "calib/efficiency_fit.hpp"

#include <gtest/gtest.h>

#include <random>

#include "cost/compute.hpp"
#include "hw/presets.hpp"

namespace paraxis::calib {
namespace {

using cost::passSeconds;

// Timed calls made by the compute model itself from a known device: the fit gives it back.
TEST(EfficiencyFit, RecoversTheDeviceThatTimedTheCalls) {
  hw::Device truth;
  truth.memoryBandwidth = 8e9;
  truth.callOverhead = 2e-6;
  truth.efficiency = {{1e5, 0.5}, {1e9, 0.5}};  // flat: every matrix product at half the peak
  truth.prepare();
  const double peak = 100e9;
  std::vector<TimedCall> calls;
  for (double flops = 2e5; flops < 5e8; flops *= 3) {
    calls.push_back({flops, flops / 50, true, passSeconds(truth, peak, {flops, flops / 50})});  // compute-bound
    calls.push_back({flops / 100, flops, false, passSeconds(truth, peak, {flops / 100, flops})});  // element-wise
  }
  calls.push_back({1e6, 1e9, true, passSeconds(truth, peak, {1e6, 1e9})});  // a memory-bound product: not in the curve
  const DeviceFit fit = fitDevice(calls, peak, truth.callOverhead);
  EXPECT_NEAR(fit.memoryBandwidth / 8e9, 1, 1e-9);
  ASSERT_EQ(fit.efficiency.size(), 4U);  // decades 1e5 .. 1e8
  for (const hw::EfficiencyPoint& p : fit.efficiency) EXPECT_NEAR(p.efficiency, 0.5, 1e-9);
  EXPECT_EQ(fit.computeCalls, static_cast<int>((calls.size() - 1) / 2));  // the memory-bound one left out
}

// Backward passes and each kernel kind get curves of their own from their own calls.
TEST(EfficiencyFit, BackwardAndKernelCurvesFromTheirOwnCalls) {
  hw::Device truth;
  truth.memoryBandwidth = 1e15;
  truth.efficiency = {{1, 0.5}};
  truth.backwardEfficiency = {{1, 0.4}};
  const int conv3d = static_cast<int>(hw::Kernel::kConv3d);
  truth.kernels[conv3d] = {{{1, 0.2}}, {{1, 0.1}}};
  truth.prepare();
  const double peak = 100e9;
  std::vector<TimedCall> calls;
  for (double flops = 2e6; flops < 5e9; flops *= 3) {
    for (const int kernel : {static_cast<int>(hw::Kernel::kConv2d), conv3d}) {
      TimedCall c{flops, 1, true, passSeconds(truth, peak, {flops, 1}, false, kernel), kernel};
      c.backwardPasses = 2;
      c.backwardFlops = 2 * flops;
      c.backwardBytes = 2;
      c.backwardSeconds = 2 * passSeconds(truth, peak, {flops, 1}, true, kernel);
      calls.push_back(c);
    }
  }
  const DeviceFit fit = fitDevice(calls, peak, 0);
  for (const hw::EfficiencyPoint& p : fit.kernels[conv3d].forward) EXPECT_NEAR(p.efficiency, 0.2, 1e-9);
  for (const hw::EfficiencyPoint& p : fit.kernels[conv3d].backward) EXPECT_NEAR(p.efficiency, 0.1, 1e-9);
  const int conv2d = static_cast<int>(hw::Kernel::kConv2d);
  for (const hw::EfficiencyPoint& p : fit.kernels[conv2d].forward) EXPECT_NEAR(p.efficiency, 0.5, 1e-9);
  for (const hw::EfficiencyPoint& p : fit.kernels[conv2d].backward) EXPECT_NEAR(p.efficiency, 0.4, 1e-9);
  EXPECT_FALSE(fit.kernels[conv3d].backward.empty());
  EXPECT_TRUE(fit.kernels[static_cast<int>(hw::Kernel::kFullyConnected)].forward.empty());  // no calls
  EXPECT_EQ(fit.backwardCalls, static_cast<int>(calls.size()));
}

TEST(EfficiencyFit, CurveNeverFalls) {
  // A decade measured slower than the one below stays at the lower decade's efficiency.
  const std::vector<TimedCall> calls{{1e6, 1, true, 1e6 / (1e9 * 0.4)}, {1e7, 1, true, 1e7 / (1e9 * 0.3)},
                                     {1e8, 1, true, 1e8 / (1e9 * 0.8)}};
  const DeviceFit fit = fitDevice(calls, 1e9, 0);
  ASSERT_EQ(fit.efficiency.size(), 3U);
  EXPECT_NEAR(fit.efficiency[0].efficiency, 0.4, 1e-12);
  EXPECT_NEAR(fit.efficiency[1].efficiency, 0.4, 1e-12);
  EXPECT_NEAR(fit.efficiency[2].efficiency, 0.8, 1e-12);
  EXPECT_EQ(fit.memoryBandwidth, 0);  // no element-wise calls
}

}  // namespace
}  // namespace paraxis::calib
