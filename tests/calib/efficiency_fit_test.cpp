#include "calib/efficiency_fit.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "calib/cache_share.hpp"
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
      c.backwardData = {flops, 1};
      c.backwardWeight = {flops, 1};
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

// A GPU's smallest calls run far below a millionth of its peak (1 kFLOP in 20 us against the
// 330 TFLOP/s an H100's TF32 convolutions raised the peak to: 1.5e-7), which a cluster file
// refused before; a call slower than the lowest efficiency a file may hold is held at it.
TEST(EfficiencyFit, AGpusTinyCallsLeaveALoadableCurve) {
  const double peak = 330e12;
  const std::vector<TimedCall> calls{{30, 1, true, 1e-3}, {1e3, 1, true, 20e-6}, {3e9, 1, true, 3e9 / (peak * 0.5)}};
  const DeviceFit fit = fitDevice(calls, peak, 0, /*weightReorders=*/false);
  ASSERT_EQ(fit.efficiency.size(), 3U);
  EXPECT_DOUBLE_EQ(fit.efficiency[0].efficiency, hw::kLowestEfficiency);
  EXPECT_NEAR(fit.efficiency[1].efficiency, 1e3 / (peak * 20e-6), 1e-15);
  EXPECT_LT(fit.efficiency[1].efficiency, 1e-6);
  hw::Cluster cluster = hw::loadCluster("h100");
  cluster.device.efficiency = fit.efficiency;
  EXPECT_NO_THROW(cluster.validate("fitted.yaml"));
}

// A decade's efficiency is its work over its time, so the curve adds up to what its calls took
// (a median of 0.5, 0.5 and 0.1 would be 0.5; the time says 3 / (2 + 10) = 0.25); a call faster
// than the given peak raises the peak instead of being cut to it.
TEST(EfficiencyFit, DecadesAddUpAndAFasterCallRaisesThePeak) {
  const std::vector<TimedCall> calls{{2e6, 1, true, 2e6 / (1e9 * 0.5)}, {3e6, 1, true, 3e6 / (1e9 * 0.5)},
                                     {5e6, 1, true, 5e6 / (1e9 * 0.1)}, {1e7, 1, true, 1e7 / (1e9 * 2)}};
  const DeviceFit fit = fitDevice(calls, 1e9, 0);
  EXPECT_DOUBLE_EQ(fit.peak, 2e9);
  ASSERT_EQ(fit.efficiency.size(), 2U);
  EXPECT_NEAR(fit.efficiency[0].efficiency, 1e7 / (2e9 * (0.004 + 0.006 + 0.05)), 1e-12);
  EXPECT_NEAR(fit.efficiency[1].efficiency, 1, 1e-12);
}

// A device whose `kernel` runs at `efficiency` at every size, shaped by `shape`'s half-rate
// rows and depth, with memory fast enough that no call is memory-bound.
hw::Device computeBound(hw::Kernel kernel, double efficiency, hw::KernelCurves shape) {
  hw::Device d;
  d.memoryBandwidth = 1e15;
  d.efficiency = {{1, efficiency}};
  shape.forward = {{1, efficiency}};
  d.kernels[static_cast<int>(kernel)] = shape;
  d.prepare();
  return d;
}

hw::Device computeBoundConvolutions(double efficiency, hw::KernelCurves shape) {
  return computeBound(hw::Kernel::kConv2d, efficiency, shape);
}

// Fully connected calls over few and many rows, of a small model whose weights stay in a rank's
// cache and of a large one whose do not: given what is left of the half-rate rows for resident
// weights (the stream's rates), the fit finds the rows and the curve.
TEST(EfficiencyFit, FindsTheRowsLeftWhereTheWeightsStayInTheCache) {
  hw::Device truth = computeBound(hw::Kernel::kFullyConnected, 0.8, {.halfRateRows = 64, .residentRowsShare = 0.5});
  truth.cacheShare = 32.0 * (1 << 20);
  const int fc = static_cast<int>(hw::Kernel::kFullyConnected);
  std::vector<TimedCall> calls;
  for (const double workingSet : {8.0 * (1 << 20), 256.0 * (1 << 20)}) {
    for (double flops = 2e6; flops < 5e9; flops *= 3) {
      for (double rows = 1; rows <= 4096; rows *= 4) {
        cost::PassWork work{flops, 1, rows};
        work.resident = truth.residentShare(workingSet);
        TimedCall c{flops, 1, true, passSeconds(truth, 1e11, work, false, fc), fc};
        c.rows = rows;
        c.workingSet = workingSet;
        calls.push_back(c);
      }
    }
  }
  setResidentShares(calls, truth.cacheShare);
  EXPECT_DOUBLE_EQ(calls.front().resident, 1);
  EXPECT_DOUBLE_EQ(calls.back().resident, 0.125);
  const DeviceFit fit = fitDevice(calls, 1e11, 0, true, 0.5);
  EXPECT_EQ(fit.kernels[fc].halfRateRows, 64);
  EXPECT_DOUBLE_EQ(fit.kernels[fc].residentRowsShare, 0.5);
  for (const hw::EfficiencyPoint& p : fit.kernels[fc].forward) EXPECT_NEAR(p.efficiency, 0.8, 1e-9);
  // Without the residence the same calls fit no half-rate rows exactly.
  setResidentShares(calls, 0);
  const DeviceFit blind = fitDevice(calls, 1e11, 0);
  EXPECT_DOUBLE_EQ(blind.kernels[fc].residentRowsShare, 1);
  bool exact = blind.kernels[fc].halfRateRows == 64;
  for (const hw::EfficiencyPoint& p : blind.kernels[fc].forward) exact = exact && std::abs(p.efficiency - 0.8) < 1e-9;
  EXPECT_FALSE(exact);
}

// SGD's stream over growing buffers, made by the residence model from a known share: the fit
// gives the share back; rates that do not fall with size show no cache.
TEST(CacheShare, FitsTheShareTheStreamsFellAt) {
  const double share = 40.0 * (1 << 20), inCache = 30e9, inMemory = 12e9;
  std::vector<StreamPoint> points;
  for (const double bytes : streamSweepBytes()) {
    const double resident = std::min(1.0, share / bytes);
    points.push_back({bytes, 1 / (resident / inCache + (1 - resident) / inMemory)});
  }
  const CacheFit fit = fitCacheShare(points);
  EXPECT_NEAR(fit.cacheShare / share, 1, 0.05);
  EXPECT_DOUBLE_EQ(fit.inCache, inCache);
  EXPECT_NEAR(fit.inMemory / inMemory, 1, 0.05);
  for (StreamPoint& p : points) p.rate = inMemory;
  EXPECT_EQ(fitCacheShare(points).cacheShare, 0);
  // A real sweep: every size timed, each rate positive and finite.
  const std::vector<StreamPoint> sweep = streamSweep();
  ASSERT_EQ(sweep.size(), streamSweepBytes().size());
  for (const StreamPoint& p : sweep) {
    EXPECT_GT(p.rate, 1e8) << p.bytes;
    EXPECT_TRUE(std::isfinite(p.rate)) << p.bytes;
  }
}

// Calls of one FLOP count over few and many rows: the fit finds the rows at half rate.
TEST(EfficiencyFit, FindsTheRowsAtWhichAKernelRunsAtHalfRate) {
  const hw::Device truth = computeBoundConvolutions(0.8, {.halfRateRows = 128});
  const int conv = static_cast<int>(hw::Kernel::kConv2d);
  std::vector<TimedCall> calls;
  for (double flops = 2e6; flops < 5e9; flops *= 3) {
    for (double rows = 8; rows <= 8192; rows *= 4) {
      TimedCall c{flops, 1, true, passSeconds(truth, 1e11, {flops, 1, rows}, false, conv), conv};
      c.rows = rows;
      calls.push_back(c);
    }
  }
  const DeviceFit fit = fitDevice(calls, 1e11, 0);
  EXPECT_EQ(fit.kernels[conv].halfRateRows, 128);
  for (const hw::EfficiencyPoint& p : fit.kernels[conv].forward) EXPECT_NEAR(p.efficiency, 0.8, 1e-9);
}

// Batches over many rows at one half rate, single samples at another (LibTorch's one-sample
// convolution kernel): the fit finds both.
TEST(EfficiencyFit, FindsTheOneSampleHalfRateRowsApart) {
  const int conv = static_cast<int>(hw::Kernel::kConv2d);
  const hw::Device truth = computeBoundConvolutions(0.5, {.halfRateRows = 64, .oneSampleHalfRateRows = 8});
  std::vector<TimedCall> calls;
  for (const double samples : {1.0, 4.0, 32.0}) {
    for (double positions = 4; positions <= 1024; positions *= 4) {
      const double flops = 1e6 * samples * positions;
      const double rows = samples * positions;
      const bool native = samples == 1;  // as LibTorch runs small one-sample convolutions
      TimedCall c{flops, 1, true, passSeconds(truth, 1e11, {flops, 1, rows, samples, 0, native}, false, conv), conv};
      c.rows = rows;
      c.samples = samples;
      c.native = native;
      calls.push_back(c);
    }
  }
  const DeviceFit fit = fitDevice(calls, 1e11, 0);
  EXPECT_EQ(fit.kernels[conv].halfRateRows, 64);
  EXPECT_EQ(fit.kernels[conv].oneSampleHalfRateRows, 8);
  for (TimedCall& c : calls) c.native = false;  // none native: no one-sample figure to fit
  EXPECT_EQ(fitDevice(calls, 1e11, 0).kernels[conv].oneSampleHalfRateRows, -1);
}

// Batched matrix products at one rate, one-sample ones (LibTorch's matrix-vector product) at
// another over the same FLOPs: the fit gives the native calls' forward a curve of its own, where
// one curve for both priced the batches at a blend of the two. Too few native calls keep one
// curve, and so do convolutions (their native call runs the batch's product over its column
// buffer: native_column_traffic and the one-sample rows describe it).
TEST(EfficiencyFit, NativeMatrixVectorProductsGetACurveOfTheirOwn) {
  auto callsOf = [](hw::Kernel kind) {
    const int kernel = static_cast<int>(kind);
    hw::Device truth = computeBound(kind, 0.8, {});
    truth.kernels[kernel].native = {{1, 0.3}};
    truth.prepare();
    std::vector<TimedCall> calls;
    for (double flops = 2e6; flops < 5e8; flops *= 3) {
      for (const double samples : {1.0, 4.0}) {
        const bool native = samples == 1;
        TimedCall c{flops, 1, true,
                    passSeconds(truth, 1e11, {flops, 1, 0, samples, 0, native}, false, kernel), kernel};
        c.samples = samples;
        c.native = native;
        calls.push_back(c);
      }
    }
    return calls;
  };
  const int fc = static_cast<int>(hw::Kernel::kFullyConnected);
  const std::vector<TimedCall> calls = callsOf(hw::Kernel::kFullyConnected);
  const hw::KernelCurves& k = fitDevice(calls, 1e11, 0).kernels[fc];
  ASSERT_FALSE(k.forward.empty());
  ASSERT_FALSE(k.native.empty());
  for (const hw::EfficiencyPoint& p : k.forward) EXPECT_NEAR(p.efficiency, 0.8, 1e-9);
  for (const hw::EfficiencyPoint& p : k.native) EXPECT_NEAR(p.efficiency, 0.3, 1e-9);
  std::vector<TimedCall> fewNative;
  int natives = 0;
  for (const TimedCall& c : calls) {
    if (!c.native || ++natives < 3) fewNative.push_back(c);
  }
  ASSERT_LT(std::count_if(fewNative.begin(), fewNative.end(), [](const TimedCall& c) { return c.native; }),
            3);
  EXPECT_TRUE(fitDevice(fewNative, 1e11, 0).kernels[fc].native.empty());
  const int conv = static_cast<int>(hw::Kernel::kConv2d);
  EXPECT_TRUE(fitDevice(callsOf(hw::Kernel::kConv2d), 1e11, 0).kernels[conv].native.empty());
}

// Calls that sum few or many terms per output (a first convolution's 3 input
// channels x 9 taps, a deep layer's 256 x 9): the fit finds the depth at which the kernel runs
// at half its curve's rate, and the curve above it.
TEST(EfficiencyFit, FindsTheDepthAtWhichAKernelRunsAtHalfRate) {
  const int conv = static_cast<int>(hw::Kernel::kConv2d);
  const hw::Device truth = computeBoundConvolutions(0.6, {.halfRateDepth = 64});
  std::vector<TimedCall> calls;
  for (double flops = 2e6; flops < 5e9; flops *= 3) {
    for (double depth = 9; depth <= 2304; depth *= 4) {
      cost::PassWork work{flops, 1};
      work.depth = depth;
      TimedCall c{flops, 1, true, passSeconds(truth, 1e11, work, false, conv), conv};
      c.depth = depth;
      calls.push_back(c);
    }
  }
  const DeviceFit fit = fitDevice(calls, 1e11, 0);
  EXPECT_EQ(fit.kernels[conv].halfRateDepth, 64);
  EXPECT_EQ(fit.kernels[conv].halfRateRows, 0);
  for (const hw::EfficiencyPoint& p : fit.kernels[conv].forward) EXPECT_NEAR(p.efficiency, 0.6, 1e-9);
}

// Convolutions timed forward and backward, a first layer's weight pass alone and a deeper one's
// data and weight passes, on a device whose weight pass over narrow filters (fewer than 128
// weights each) runs at 40 % of the rate: the fit finds the narrow filters and their share, and
// from the same calls on a device without them adds none.
TEST(EfficiencyFit, FindsTheNarrowFiltersOfASlowWeightPass) {
  const int conv = static_cast<int>(hw::Kernel::kConv2d);
  auto timedOn = [&](const hw::Device& d) {
    std::vector<TimedCall> calls;
    for (double flops = 2e6; flops < 5e9; flops *= 3) {
      for (const double depth : {27.0, 108.0, 432.0, 1728.0}) {
        cost::PassWork forward{flops, 1};
        forward.depth = depth;
        cost::PassWork weight = forward;
        weight.weightGradient = true;
        TimedCall c{flops, 1, true, passSeconds(d, 1e11, forward, false, conv), conv};
        c.depth = depth;
        c.backwardWeight = weight;
        c.backwardSeconds = passSeconds(d, 1e11, weight, true, conv);
        if (depth > 200) {  // past the first layer: a data pass too
          c.backwardData = forward;
          c.backwardSeconds += passSeconds(d, 1e11, forward, true, conv);
        }
        calls.push_back(c);
      }
    }
    return calls;
  };
  const hw::Device truth =
      computeBoundConvolutions(0.6, {.halfRateDepth = 64, .narrowWeightDepth = 128, .narrowWeightShare = 0.4});
  const hw::KernelCurves fitted = fitDevice(timedOn(truth), 1e11, 0).kernels[conv];
  EXPECT_EQ(fitted.halfRateDepth, 64);
  EXPECT_DOUBLE_EQ(fitted.weightShare(false, 27), 0.4);
  EXPECT_DOUBLE_EQ(fitted.weightShare(false, 108), 0.4);
  // Half the filters: half the product (0.4 of the time) beside the whole layout (1.5): 1/(1 + 3).
  EXPECT_DOUBLE_EQ(fitted.weightShare(false, 108, 0.5), 0.25);
  EXPECT_DOUBLE_EQ(fitted.weightShare(false, 432), 1);
  const hw::Device plain = computeBoundConvolutions(0.6, {.halfRateDepth = 64});
  EXPECT_FALSE(fitDevice(timedOn(plain), 1e11, 0).kernels[conv].weightPassDiffers());
}

// Convolutions of every shape timed at stride 1 and 2 on a device whose strided calls run at half
// the rate: the fit finds the share, and from unstrided calls alone (or on a device without the
// effect) keeps none.
TEST(EfficiencyFit, FindsTheShareAStridedConvolutionReaches) {
  const int conv = static_cast<int>(hw::Kernel::kConv2d);
  auto timedOn = [&](const hw::Device& d, bool anyStrided) {
    std::vector<TimedCall> calls;
    for (double flops = 2e6; flops < 5e9; flops *= 3) {
      for (const double depth : {108.0, 432.0, 1728.0}) {
        for (const bool strided : {false, true}) {
          if (strided && !anyStrided) continue;
          cost::PassWork forward{flops, 1};
          forward.depth = depth;
          forward.strided = strided;
          TimedCall c{flops, 1, true, passSeconds(d, 1e11, forward, false, conv), conv};
          c.depth = depth;
          c.strided = strided;
          c.backwardData = forward;
          c.backwardSeconds = passSeconds(d, 1e11, forward, true, conv);
          calls.push_back(c);
        }
      }
    }
    return calls;
  };
  const hw::Device truth = computeBoundConvolutions(0.6, {.halfRateDepth = 64, .stridedShare = 0.5});
  const hw::KernelCurves fitted = fitDevice(timedOn(truth, true), 1e11, 0).kernels[conv];
  EXPECT_DOUBLE_EQ(fitted.stridedShare, 0.5);
  EXPECT_EQ(fitted.halfRateDepth, 64);
  EXPECT_EQ(fitDevice(timedOn(truth, false), 1e11, 0).kernels[conv].stridedShare, 1);
  const hw::Device plain = computeBoundConvolutions(0.6, {.halfRateDepth = 64});
  EXPECT_EQ(fitDevice(timedOn(plain, true), 1e11, 0).kernels[conv].stridedShare, 1);
}

// Each memory kind's fraction of the element-wise calls' bandwidth, forward and backward apart.
// Dropout's passes (a random draw per element) are a kind of their own: however slow, they do
// not set the element-wise calls' bandwidth curve that every small memory-bound pass is priced on.
TEST(EfficiencyFit, MemoryKindsReachTheirFractionOfTheElementwiseBandwidth) {
  hw::Device truth;
  truth.memoryBandwidth = 10e9;
  const int pool = static_cast<int>(hw::MemoryKind::kPool3d);
  const int norm = static_cast<int>(hw::MemoryKind::kNormalization);
  const int random = static_cast<int>(hw::MemoryKind::kRandom);
  truth.memoryEfficiency[pool][0] = 0.05;
  truth.memoryEfficiency[pool][1] = 0.4;
  truth.memoryEfficiency[norm][0] = 0.25;
  truth.memoryEfficiency[random][0] = 0.05;
  truth.prepare();
  std::vector<TimedCall> calls;
  for (double bytes = 1e3; bytes < 1e8; bytes *= 4) {
    for (const int kind : {-1, pool, norm, random}) {
      TimedCall c{1, bytes, false, passSeconds(truth, 1e12, {1, bytes}, false, -1, kind), -1, kind};
      c.backwardData = {1, bytes};
      c.backwardSeconds = passSeconds(truth, 1e12, {1, bytes}, true, -1, kind);
      calls.push_back(c);
    }
  }
  const DeviceFit fit = fitDevice(calls, 1e12, 0);
  EXPECT_NEAR(fit.memoryBandwidth / 10e9, 1, 1e-9);  // from the element-wise calls alone
  ASSERT_FALSE(fit.bandwidthCurve.empty());
  for (const hw::EfficiencyPoint& p : fit.bandwidthCurve)
    EXPECT_NEAR(p.efficiency / 10e9, 1, 1e-9) << p.flops;
  EXPECT_NEAR(fit.memoryEfficiency[random][0], 0.05, 1e-9);
  EXPECT_NEAR(fit.memoryEfficiency[pool][0], 0.05, 1e-9);
  EXPECT_NEAR(fit.memoryEfficiency[pool][1], 0.4, 1e-9);
  EXPECT_NEAR(fit.memoryEfficiency[norm][0], 0.25, 1e-9);
  EXPECT_NEAR(fit.memoryEfficiency[norm][1], 1, 1e-9);
  EXPECT_NEAR(fit.memoryEfficiency[static_cast<int>(hw::MemoryKind::kElementwise)][0], 1, 1e-9);
}

// Where the memory's curve runs small calls faster, a kind whose time grows with its bytes alone
// (a pooling loop: hw::MemoryEfficiency::flat) is fitted flat, one that rides the curve is not.
TEST(EfficiencyFit, AKindBoundByItsOwnLoopRunsAtAFlatRate) {
  hw::Device truth;
  truth.memoryBandwidth = 10e9;
  truth.bandwidthCurve = {{1e5, 40e9}, {1e6, 30e9}, {1e7, 20e9}, {1e8, 10e9}};
  const int pool = static_cast<int>(hw::MemoryKind::kPool3d);
  const int norm = static_cast<int>(hw::MemoryKind::kNormalization);
  truth.memoryEfficiency[pool][0] = 0.05;
  truth.memoryEfficiency.flat[pool][0] = true;
  truth.memoryEfficiency[norm][0] = 0.25;
  truth.prepare();
  std::vector<TimedCall> calls;
  for (const double bytes : {1e5, 1e6, 1e7, 1e8}) {  // one per decade: the curve's own points
    for (const int kind : {-1, pool, norm}) {
      calls.push_back({1, bytes, false, passSeconds(truth, 1e12, {1, bytes}, false, -1, kind), -1, kind});
    }
  }
  const DeviceFit fit = fitDevice(calls, 1e12, 0);
  EXPECT_TRUE(fit.memoryEfficiency.flat[pool][0]);
  EXPECT_FALSE(fit.memoryEfficiency.flat[norm][0]);
  EXPECT_FALSE(fit.memoryEfficiency.flat[static_cast<int>(hw::MemoryKind::kElementwise)][0]);
  // The pool's calls all at the same ratio to their time, what the flat rate adds up to.
  hw::Device fitted;
  fitted.memoryBandwidth = fit.memoryBandwidth;
  fitted.bandwidthCurve = fit.bandwidthCurve;
  fitted.memoryEfficiency = fit.memoryEfficiency;
  fitted.prepare();
  for (const TimedCall& c : calls) {
    if (c.memoryKind != pool) continue;
    EXPECT_NEAR(passSeconds(fitted, 1e12, {1, c.bytes}, false, -1, pool) / c.seconds, 1, 1e-9) << c.bytes;
  }
}

// One call far slower than its kind's others (a large fresh gradient's pages faulting in) is
// not the kind's rate: summed in, this one (the largest, 50x its rate) would put the
// element-wise backward below 0.02 of the curve instead of 0.6.
TEST(EfficiencyFit, AnOutlyingCallDoesNotSetItsKindsRate) {
  hw::Device truth;
  truth.memoryBandwidth = 10e9;
  const int elementwise = static_cast<int>(hw::MemoryKind::kElementwise);
  truth.memoryEfficiency[elementwise][1] = 0.6;
  truth.prepare();
  std::vector<TimedCall> calls;
  for (double bytes = 1e5; bytes <= 3e8; bytes *= 4) {
    TimedCall c{1, bytes, false, passSeconds(truth, 1e12, {1, bytes}, false, -1, elementwise), -1, elementwise};
    c.backwardData = {1, bytes};
    c.backwardSeconds = passSeconds(truth, 1e12, {1, bytes}, true, -1, elementwise);
    calls.push_back(c);
  }
  calls.back().backwardSeconds *= 50;
  const DeviceFit fit = fitDevice(calls, 1e12, 0);
  EXPECT_NEAR(fit.memoryEfficiency[elementwise][1], 0.6, 1e-9);
  EXPECT_NEAR(fit.memoryEfficiency[elementwise][0], 1, 1e-9);
}

// Element-wise calls of 10 kB to 100 MB timed on `truth`: what the fit reads the bandwidth from.
std::vector<TimedCall> streamingCalls(const hw::Device& truth, double peak) {
  std::vector<TimedCall> calls;
  for (double bytes = 1e4; bytes < 1e9; bytes *= 10) {
    calls.push_back({1, bytes, false, passSeconds(truth, peak, {1, bytes}), -1, -1});
  }
  return calls;
}

// A convolution's call of `flops` per pass over `samples` with `weights` bytes of weights, timed
// forward and backward on `truth`; native over one sample (with `columnBytes` of columns then).
TimedCall convolutionCall(const hw::Device& truth, double peak, int conv, double flops, double samples, double weights,
                          double columnBytes = 0) {
  TimedCall c{flops, 1e3, true, 0, conv};
  c.samples = samples;
  c.native = samples == 1;
  c.columnBytes = c.native ? columnBytes : 0;
  c.accumulatedWeights = weights;
  c.seconds = passSeconds(truth, peak, c.forwardPass(truth), false, conv);
  c.backwardData = {flops, 1e3, 0, samples, 0, c.native};
  c.backwardWeight = {flops, 1e3 + weights, 0, samples, 0, c.native};
  c.backwardSeconds = c.backwardSecondsOn(truth, peak);
  return c;
}

// Convolutions whose weight-gradient pass streams their weights 3 times a pass and twice per
// sample: the fit finds that traffic, and the backward curve from the compute-bound passes alone, where with
// no traffic the memory-bound passes would drag it down.
TEST(EfficiencyFit, WeightGradientTrafficFromTheConvolutionsBackward) {
  hw::Device truth;
  truth.memoryBandwidth = 10e9;
  truth.efficiency = {{1, 0.5}};
  truth.backwardEfficiency = {{1, 0.25}};
  truth.weightGradientTraffic = {3, 2};
  truth.prepare();
  const double peak = 100e9;
  const int conv = static_cast<int>(hw::Kernel::kConv2d);
  std::vector<TimedCall> calls = streamingCalls(truth, peak);
  for (const double weights : {1e5, 1e7}) {  // small weights stay compute-bound, large ones stream
    for (const double samples : {1.0, 4.0, 32.0}) {
      // 0.4 ms a sample backward; 1e7 weights stream 2 ms
      calls.push_back(convolutionCall(truth, peak, conv, 1e7 * samples, samples, weights));
    }
  }
  const DeviceFit fit = fitDevice(calls, peak, 0);
  EXPECT_EQ(fit.weightGradientTraffic.perPass, 3);
  EXPECT_EQ(fit.weightGradientTraffic.perSample, 2);
  ASSERT_FALSE(fit.backwardEfficiency.empty());
  for (const hw::EfficiencyPoint& p : fit.backwardEfficiency) EXPECT_NEAR(p.efficiency, 0.25, 1e-9);
  // 1e7 bytes of weights over 32 samples: 3 + 2 x 32 times, 670 MB.
  EXPECT_NEAR(calls.back().weightPass(truth.weightGradientTraffic).bytes, 1e3 + 67e7, 1e-3);
}

// A weight pass that moves its weights more often than any count the fit tries leaves the count
// at the largest: the device names it, as calibrate and bench compute report it, where a count
// inside the range is a figure and goes unnamed.
TEST(EfficiencyFit, ACountAtTheLargestTheFitTriesIsNamed) {
  auto fitted = [](double perPass) {
    hw::Device truth;
    truth.memoryBandwidth = 10e9;
    truth.efficiency = {{1, 0.5}};
    truth.backwardEfficiency = {{1, 0.25}};
    truth.weightGradientTraffic = {perPass, 2};
    truth.prepare();
    const double peak = 100e9;
    std::vector<TimedCall> calls = streamingCalls(truth, peak);
    for (const double weights : {1e5, 1e7}) {
      for (const double samples : {1.0, 4.0, 32.0}) {
        calls.push_back(convolutionCall(truth, peak, static_cast<int>(hw::Kernel::kConv2d), 1e7 * samples, samples, weights));
      }
    }
    const DeviceFit fit = fitDevice(calls, peak, 0);
    hw::Device device;
    device.weightGradientTraffic = fit.weightGradientTraffic;
    device.forwardWeightTraffic = fit.forwardWeightTraffic;
    device.nativeColumnTraffic = fit.nativeColumnTraffic;
    return device;
  };
  const hw::Device inside = fitted(3);
  EXPECT_EQ(inside.weightGradientTraffic.perPass, 3);
  EXPECT_TRUE(trafficCountsAtTheirLimit(inside).empty());
  const hw::Device beyond = fitted(40);
  EXPECT_EQ(beyond.weightGradientTraffic.perPass, kLargestPerPassCount);
  EXPECT_EQ(trafficCountsAtTheirLimit(beyond), std::vector<std::string>{"weight_gradient_traffic.per_pass"});
}

// A batch's convolution forward reorders its weights before its arithmetic, and one sample's
// weight pass moves them its own number of times: the fit finds both, and the curves of the
// arithmetic alone.
TEST(EfficiencyFit, ForwardReorderingAndOneSampleWeightTraffic) {
  hw::Device truth;
  truth.memoryBandwidth = 10e9;
  truth.efficiency = {{1, 0.5}};
  truth.backwardEfficiency = {{1, 0.25}};
  truth.weightGradientTraffic = {3, 1, 2};
  truth.forwardWeightTraffic = 4;
  truth.prepare();
  const double peak = 100e9;
  const int conv = static_cast<int>(hw::Kernel::kConv2d);
  std::vector<TimedCall> calls = streamingCalls(truth, peak);
  for (const double weights : {1e5, 1e6, 1e7}) {
    for (const double samples : {1.0, 2.0, 4.0, 8.0, 32.0}) {
      calls.push_back(convolutionCall(truth, peak, conv, 1e7 * samples, samples, weights));
    }
  }
  const DeviceFit fit = fitDevice(calls, peak, 0);
  EXPECT_EQ(fit.forwardWeightTraffic, 4);
  EXPECT_EQ(fit.weightGradientTraffic.perPass, 3);
  EXPECT_EQ(fit.weightGradientTraffic.perSample, 1);
  EXPECT_EQ(fit.weightGradientTraffic.oneSample, 2);
  for (const hw::EfficiencyPoint& p : fit.efficiency) EXPECT_NEAR(p.efficiency, 0.5, 1e-9);
  // The 1e7 bytes of weights reordered 4x at 10 GB/s: 4 ms on top of 1e7 x 32 FLOPs at half of 100 GFLOP/s.
  EXPECT_NEAR(calls.back().seconds - 3.2e8 / 50e9, 4e-3, 1e-12);

  // A GPU's fit (bench compute --device cuda) leaves oneDNN's traffic out: the weights move
  // once, and every curve stays a loadable fraction of a finite peak.
  const DeviceFit gpu = fitDevice(calls, peak, 0, /*weightReorders=*/false);
  EXPECT_EQ(gpu.forwardWeightTraffic, 0);
  EXPECT_TRUE(gpu.weightGradientTraffic.once());
  EXPECT_TRUE(std::isfinite(gpu.peak));
  ASSERT_FALSE(gpu.efficiency.empty());
  for (const hw::EfficiencyPoint& p : gpu.efficiency) {
    EXPECT_GE(p.efficiency, hw::kLowestEfficiency);
    EXPECT_LE(p.efficiency, 1);
  }
}

// A native convolution (LibTorch's own kernel) moves its column buffer in each pass: three
// one-sample calls of the same FLOPs whose buffers differ tenfold tell that traffic from the
// arithmetic, and the fit finds its count.
TEST(EfficiencyFit, NativeColumnTraffic) {
  hw::Device truth;
  truth.memoryBandwidth = 10e9;
  truth.efficiency = {{1, 0.5}};
  truth.weightGradientTraffic = {3, 1, 2};
  truth.forwardWeightTraffic = 2;
  truth.nativeColumnTraffic = 6;
  truth.prepare();
  const double peak = 100e9;
  const int conv = static_cast<int>(hw::Kernel::kConv3d);
  std::vector<TimedCall> calls = streamingCalls(truth, peak);
  for (const double weights : {1e5, 1e6, 1e7}) {
    for (const double samples : {1.0, 2.0, 4.0, 8.0, 32.0}) {
      calls.push_back(convolutionCall(truth, peak, conv, 1e8 * samples, samples, weights, weights * 10));
    }
  }
  const DeviceFit fit = fitDevice(calls, peak, 0);
  EXPECT_EQ(fit.nativeColumnTraffic, 6);
  EXPECT_EQ(fit.forwardWeightTraffic, 2);
  for (const hw::EfficiencyPoint& p : fit.efficiency) EXPECT_NEAR(p.efficiency, 0.5, 1e-6);
  for (TimedCall& c : calls) c.native = false;  // no native call: nothing to fit
  EXPECT_EQ(fitDevice(calls, peak, 0).nativeColumnTraffic, 0);
}

}  // namespace
}  // namespace paraxis::calib
