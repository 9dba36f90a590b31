#include "calib/efficiency_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace paraxis::calib {
namespace {

// The counts a traffic fit tries: how many times a quantity moves through memory.
constexpr double kTrafficCounts[] = {0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, kLargestTrafficCount};

// The candidate whose `error` is least (the first of equals).
template <typename Candidates, typename Error>
double leastError(const Candidates& candidates, const Error& error) {
  double best = -1, bestCandidate = 0;
  for (const double candidate : candidates) {
    if (const double e = error(candidate); best < 0 || e < best) best = e, bestCandidate = candidate;
  }
  return bestCandidate;
}

double squaredLogError(double predicted, double measured) { return std::pow(std::log(predicted / measured), 2); }

int decadeOf(double flops) { return static_cast<int>(std::floor(std::log10(flops))); }

struct Work {
  double amount = 0, seconds = 0;  // FLOPs or bytes, and the seconds they took
};

// Per decade of FLOPs the decade's work over its time (its calls' efficiency weighted by their
// time, so the curve adds up to what the calls took: a median under-predicted a model whose
// slow calls shared a decade with fast ones by a third), made non-decreasing, and never below
// what a cluster file may hold (a fit writes only what loads).
std::vector<hw::EfficiencyPoint> curveOf(const std::map<int, Work>& byDecade, double peak) {
  std::vector<hw::EfficiencyPoint> curve;
  double floor = hw::kLowestEfficiency;
  for (const auto& [decade, work] : byDecade) {
    floor = std::max(floor, std::min(1.0, work.amount / (peak * work.seconds)));
    curve.push_back({std::pow(10.0, decade + 0.5), floor});
  }
  return curve;
}

// A matrix call's busy seconds per pass when its FLOPs, not its bytes, set its time (0 when
// the bytes alone at `bandwidth` take as long).
double computeBusy(double flops, double bytes, double seconds, double bandwidth) {
  if (!(flops > 0 && seconds > 0) || (bandwidth > 0 && bytes / bandwidth >= seconds)) return 0;
  return seconds;
}

// A kernel with fewer compute-bound calls keeps the device's curves.
constexpr int kFewestCalls = 3;

struct Curves {
  std::vector<hw::EfficiencyPoint> forward, backward;
  int forwardCalls = 0, backwardCalls = 0;
};

// The part of a call's backward its FLOPs set: their FLOPs, busy seconds and passes (seconds 0:
// none). A weight pass whose bytes at `bandwidth`, the weights moved as `traffic` says, take
// longer than its share of the time is memory-bound: their seconds come off, its FLOPs out.
struct ComputeBound {
  double flops = 0, seconds = 0;
  int passes = 0;
  double weightFlops = 0;  // the weight pass's share of `flops`
  // The FLOPs at the rate the curve gives: each pass's over its shape's share of it (`rows`).
  double atCurveRate(const TimedCall& c, const hw::KernelCurves& rows) const {
    return (flops - weightFlops) / rows.shapeShare(c.rows, c.native, c.depth, false, c.resident, c.strided) +
           (weightFlops > 0
                ? weightFlops / rows.shapeShare(c.rows, c.native, c.depth, true, c.resident, c.strided)
                : 0);
  }
};

ComputeBound backwardBusy(const TimedCall& c, double callOverhead, double bandwidth,
                          const hw::WeightGradientTraffic& traffic) {
  ComputeBound b{c.backwardFlops(), c.backwardSeconds - c.backwardPasses() * callOverhead, c.backwardPasses(),
                 c.backwardWeight.flops};
  if (b.passes == 0) return {};
  double bytes = c.backwardBytes();
  if (!traffic.once() && c.accumulatedWeights > 0 && bandwidth > 0 && c.backwardWeight.flops > 0) {
    const double streaming = c.weightPass(traffic).bytes / bandwidth;
    if (streaming > b.seconds * c.backwardWeight.flops / b.flops) {
      b = {c.backwardData.flops, b.seconds - streaming, b.passes - 1, 0};
      bytes = c.backwardData.bytes;
      if (b.passes == 0) return {};
    }
  }
  b.seconds = computeBusy(b.flops, bytes, b.seconds, bandwidth);
  return b;
}

// Which calls a curve is fitted to: all, or the batched or the native ones alone
// (hw::KernelCurves::native).
enum class Regime { kAll, kBatched, kNative };

bool inRegime(const TimedCall& c, Regime regime) {
  return regime == Regime::kAll || c.native == (regime == Regime::kNative);
}

// Both curves from the compute-bound matrix calls of `kernel` (-1: every kernel) in `regime`,
// each call's work counted as if it had rows enough (its FLOPs over its rows' share at `rows`'
// half rate).
Curves fitCurves(const std::vector<TimedCall>& calls, double peak, double callOverhead, double bandwidth,
                 int kernel, const hw::WeightGradientTraffic& traffic, const hw::KernelCurves& rows = {},
                 Regime regime = Regime::kAll) {
  std::map<int, Work> forward, backward;
  Curves out;
  for (const TimedCall& c : calls) {
    if (!c.matrix || (kernel >= 0 && c.kernel != kernel) || !inRegime(c, regime)) continue;
    const double share = rows.shapeShare(c.rows, c.native, c.depth, false, c.resident, c.strided);
    if (const double busy = computeBusy(c.flops, c.bytes, c.seconds - callOverhead, bandwidth); busy > 0) {
      Work& w = forward[decadeOf(c.flops)];
      w.amount += c.flops / share;
      w.seconds += busy;
      ++out.forwardCalls;
    }
    if (const ComputeBound b = backwardBusy(c, callOverhead, bandwidth, traffic); b.seconds > 0) {
      Work& w = backward[decadeOf(b.flops / b.passes)];
      w.amount += b.atCurveRate(c, rows);
      w.seconds += b.seconds;
      ++out.backwardCalls;
    }
  }
  out.forward = curveOf(forward, peak);
  out.backward = curveOf(backward, peak);
  return out;
}

// Squared log error of a kernel's curves and half rates (`curves`) on its compute-bound calls.
double kernelError(const std::vector<TimedCall>& calls, double peak, double callOverhead, double bandwidth,
                   int kernel, const hw::WeightGradientTraffic& traffic, const hw::KernelCurves& curves) {
  hw::Device d;
  d.efficiency = curves.forward;
  d.kernels[kernel] = curves;
  d.prepare();
  double error = 0;
  // A pass of `flops` (the curve's key) whose FLOPs at the curve's rate are `atCurveRate`.
  auto add = [&](double flops, double atCurveRate, double busy, bool backward, bool native) {
    error += squaredLogError(atCurveRate / (peak * d.efficiencyOf(kernel, backward, std::log(flops), native)),
                             busy);
  };
  for (const TimedCall& c : calls) {
    if (!c.matrix || c.kernel != kernel) continue;
    if (const double busy = computeBusy(c.flops, c.bytes, c.seconds - callOverhead, bandwidth); busy > 0) {
      add(c.flops, c.flops / curves.shapeShare(c.rows, c.native, c.depth, false, c.resident, c.strided), busy,
          false, c.native);
    }
    if (const ComputeBound b = backwardBusy(c, callOverhead, bandwidth, traffic); b.seconds > 0) {
      add(b.flops / b.passes, b.atCurveRate(c, curves) / b.passes, b.seconds / b.passes, true, c.native);
    }
  }
  return error;
}

// Whether `kernel` runs another kernel natively and has compute-bound native calls and batched
// ones enough for curves of each regime (hw::KernelCurves::native); else one curve describes
// both. A fully connected layer over one sample runs a matrix-vector product, another kernel
// than the batch's matrix product; a native convolution runs the same product over its column
// buffer, whose traffic (native_column_traffic) and rows (one_sample_half_rate_rows) describe it:
// a curve of its own there, fitted from the few native calls, took the refitted matrix from 97.2
// to 99.2 % summed over nine sittings (CosmoFlow's pipeline at one sample -10 % in m109, from
// conv3d's three native calls), the matrix-vector products' alone to 95.0 %.
bool fitsNativeCurves(const std::vector<TimedCall>& calls, double callOverhead, double bandwidth,
                      int kernel) {
  if (kernel != static_cast<int>(hw::Kernel::kFullyConnected)) return false;
  int counts[2] = {0, 0};
  for (const TimedCall& c : calls) {
    if (c.matrix && c.kernel == kernel &&
        computeBusy(c.flops, c.bytes, c.seconds - callOverhead, bandwidth) > 0) {
      ++counts[c.native ? 1 : 0];
    }
  }
  return counts[0] >= kFewestCalls && counts[1] >= kFewestCalls;
}

// The candidate half-rate rows: none, or 1 to 16384 by factors of 2.
std::vector<double> halfRateCandidates() {
  std::vector<double> rows{0};
  for (double r = 1; r <= 16384; r *= 2) rows.push_back(r);
  return rows;
}

// The candidate half-rate depths: none, or 4 to 1024 terms by factors of 2 (a 3x3
// convolution over 64 channels sums 576).
std::vector<double> halfRateDepthCandidates() {
  std::vector<double> depths{0};
  for (double d = 4; d <= 1024; d *= 2) depths.push_back(d);
  return depths;
}

// What a kernel's calls fit to: its inputs, and the best shape found so far with its error.
struct KernelSearch {
  const std::vector<TimedCall>& calls;
  double peak, callOverhead, bandwidth;
  int kernel;
  const hw::WeightGradientTraffic& traffic;
  hw::KernelCurves& out;
  bool nativeCurves;  // fitsNativeCurves
  double best = -1;

  // Fits the curves at `shape`'s half rates (the batched and the native calls' apart where
  // `nativeCurves`) and keeps them if they fit better; false when the kernel has too few
  // compute-bound calls for curves of its own.
  bool tryShape(const hw::KernelCurves& shape) {
    auto curvesOf = [&](Regime regime) {
      return fitCurves(calls, peak, callOverhead, bandwidth, kernel, traffic, shape, regime);
    };
    const Curves mine = curvesOf(nativeCurves ? Regime::kBatched : Regime::kAll);
    if (mine.forwardCalls < kFewestCalls) return false;
    hw::KernelCurves candidate = shape;
    candidate.forward = mine.forward;
    candidate.backward =
        mine.backwardCalls >= kFewestCalls ? mine.backward : std::vector<hw::EfficiencyPoint>{};
    if (nativeCurves) candidate.native = curvesOf(Regime::kNative).forward;
    const double error = kernelError(calls, peak, callOverhead, bandwidth, kernel, traffic, candidate);
    if (best >= 0 && error >= best) return true;
    best = error;
    out = std::move(candidate);
    return true;
  }

  // Every half-rate rows (for batches and one sample) and depth, the other figures
  // (the weight pass's narrow filters, the rows left for resident weights) as `held` says.
  bool tryRowsAndDepths(const hw::KernelCurves& held, const std::vector<double>& oneSampleCandidates) {
    const std::vector<double> candidates = halfRateCandidates();
    for (const double depth : halfRateDepthCandidates()) {
      for (const double half : candidates) {
        for (const double oneSampleHalf : oneSampleCandidates) {
          if (!tryShape({.halfRateRows = half,
                         .oneSampleHalfRateRows = oneSampleHalf,
                         .residentRowsShare = held.residentRowsShare,
                         .halfRateDepth = depth,
                         .narrowWeightDepth = held.narrowWeightDepth,
                         .narrowWeightShare = held.narrowWeightShare,
                         .stridedShare = held.stridedShare})) {
            return false;
          }
        }
      }
    }
    return true;
  }
};

// The candidate narrow filters for a weight pass: fewer than 16 to 1024 weights by factors of
// 2, at 1/1.25 to 1/4 of the rate.
constexpr double kNarrowWeightDepths[] = {16, 32, 64, 128, 256, 512, 1024};
constexpr double kNarrowWeightShares[] = {0.8, 0.67, 0.5, 0.4, 0.33, 0.25};
// The squared log error a figure beyond the rows and depths (the narrow filters, the strided
// share) must bring the kernel's below, as a share of it without: it earns its place only by
// a clear gain, not by fitting noise.
constexpr double kClearGain = 0.9;

// Puts `held` back where the search since it did not gain clearly on `heldError`.
void keepOnlyAClearGain(KernelSearch& search, const hw::KernelCurves& held, double heldError) {
  if (search.best <= kClearGain * heldError) return;
  search.out = held;
  search.best = heldError;
}

// The candidate shares of the rate a strided call reaches: 1/1.25 to 1/2.5.
constexpr double kStridedShares[] = {0.8, 0.67, 0.5, 0.4};

// The share of the rate the kernel's strided oneDNN calls reach, searched with the rest held
// and then the rows and depths again beside it (the strided calls' slowness had pulled them),
// kept only by a clear gain.
void fitStridedShare(KernelSearch& search, const std::vector<double>& oneSampleCandidates) {
  const bool anyStrided = std::any_of(search.calls.begin(), search.calls.end(), [&](const TimedCall& c) {
    return c.matrix && c.kernel == search.kernel && c.strided && !c.native;
  });
  if (!anyStrided) return;
  const hw::KernelCurves held = search.out;
  const double heldError = search.best;
  for (const double share : kStridedShares) {
    hw::KernelCurves shape = held;
    shape.stridedShare = share;
    search.tryShape(shape);
  }
  if (search.out.stridedShare == 1) return;
  const hw::KernelCurves strided = search.out;
  search.tryRowsAndDepths(strided, oneSampleCandidates);
  keepOnlyAClearGain(search, held, heldError);
}

// A kernel's own curves, the rows at which it runs at half their rate, for batches and, where it
// has one-sample calls, for those, the reduction depth at which it does, the narrow filters
// on which its weight pass runs slower and the share of the rate its strided calls reach: the
// candidates whose curves fit its calls best. The
// narrow filters are searched with the depth and the rows held, then the rest again with them
// held (a whole grid per narrow candidate would take 40 times as long).
void fitKernel(const std::vector<TimedCall>& calls, double peak, double callOverhead, double bandwidth, int kernel,
               const hw::WeightGradientTraffic& traffic, double residentRowsShare, hw::KernelCurves& out) {
  const bool anyOneSample = std::any_of(calls.begin(), calls.end(), [&](const TimedCall& c) {
    return c.matrix && c.kernel == kernel && c.native;
  });
  const std::vector<double> oneSampleCandidates = anyOneSample ? halfRateCandidates() : std::vector<double>{-1};
  const bool nativeCurves = fitsNativeCurves(calls, callOverhead, bandwidth, kernel);
  KernelSearch search{calls, peak, callOverhead, bandwidth, kernel, traffic, out, nativeCurves};
  hw::KernelCurves streamed;
  streamed.residentRowsShare = residentRowsShare;
  // The narrow filters are oneDNN's convolution kernels' (a matrix product runs BLAS's).
  if (!search.tryRowsAndDepths(streamed, oneSampleCandidates) || !cost::accumulatesBySample(kernel)) return;
  const hw::KernelCurves held = out;
  const double heldError = search.best;
  // With the rows held, the depth again beside them: a slow weight pass the narrow filters
  // explain had pulled the depth's half rate up.
  for (const double halfRateDepth : halfRateDepthCandidates()) {
    for (const double depth : kNarrowWeightDepths) {
      for (const double share : kNarrowWeightShares) {
        hw::KernelCurves shape = held;
        shape.halfRateDepth = halfRateDepth;
        shape.narrowWeightDepth = depth;
        shape.narrowWeightShare = share;
        search.tryShape(shape);
      }
    }
  }
  if (const hw::KernelCurves narrow = out; narrow.weightPassDiffers()) {
    search.tryRowsAndDepths(narrow, oneSampleCandidates);
  }
  keepOnlyAClearGain(search, held, heldError);  // two more parameters
  fitStridedShare(search, oneSampleCandidates);
}

// The fastest rate a compute-bound matrix call's forward reached: the curves are fractions of a
// peak no call exceeds (a preset's peak can be below what a core does). Forward only: backward
// passes run on curves of their own, below it.
double fastestRate(const std::vector<TimedCall>& calls, double callOverhead, double bandwidth) {
  double fastest = 0;
  for (const TimedCall& c : calls) {
    if (!c.matrix) continue;
    if (const double busy = computeBusy(c.flops, c.bytes, c.seconds - callOverhead, bandwidth); busy > 0) {
      fastest = std::max(fastest, c.flops / busy);
    }
  }
  return fastest;
}

// The streaming reference: element-wise passes (and any of no named kind), forward.
bool streams(const TimedCall& c) {
  return !c.matrix && (c.memoryKind < 0 || c.memoryKind == static_cast<int>(hw::MemoryKind::kElementwise));
}

// A call this many times slower or faster than its kind's median call (at the curve) is not
// the kind's rate but something else: one 256 MiB leaky ReLU's backward took 597 ms where the
// kind's others ran at 50-90 % of the curve (its gradient's fresh pages faulted in, ~9 us
// each here), and summed in, it set the element-wise backward at 2 % and every ReLU's
// backward of the matrix 20-30x over.
constexpr double kOutlier = 4;

// The calls' time at the curve and their time summed (what a model's many calls add up to),
// over the calls within kOutlier of the median call's ratio of the two.
Work typicalCalls(const std::vector<Work>& calls) {
  if (calls.empty()) return {};
  std::vector<double> ratios;
  for (const Work& w : calls) ratios.push_back(w.amount / w.seconds);
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
  const double median = ratios[ratios.size() / 2];
  Work sum;
  for (const Work& w : calls) {
    const double ratio = w.amount / w.seconds;
    if (ratio > median * kOutlier || ratio < median / kOutlier) continue;
    sum.amount += w.amount, sum.seconds += w.seconds;
  }
  return sum;
}

// The squared log error of `calls` (amount: seconds at the reference rate) at `fraction` of it.
double fractionError(const std::vector<Work>& calls, double fraction) {
  double sum = 0;
  for (const Work& w : calls) {
    const double r = std::log(w.amount / fraction / w.seconds);
    sum += r * r;
  }
  return sum;
}

// A flat rate is kept only where it cuts the kind's squared log error by this share or more.
constexpr double kFlatGain = 0.1;

// One memory kind's pass: its fraction of the curve, or of the flat bandwidth where that fits
// its calls better (hw::MemoryEfficiency::flat). `calls[0]` at the curve, `calls[1]` flat.
void fitMemoryKind(const std::vector<Work> (&calls)[2], int kind, int pass, DeviceFit& fit) {
  double fraction[2] = {0, 0};
  for (int v = 0; v < 2; ++v) {
    const Work w = typicalCalls(calls[v]);
    if (w.seconds > 0) fraction[v] = std::clamp(w.amount / w.seconds, 1e-4, 100.0);
  }
  if (fraction[0] <= 0) return;
  const bool flat = fractionError(calls[1], fraction[1]) < (1 - kFlatGain) * fractionError(calls[0], fraction[0]);
  fit.memoryEfficiency[kind][pass] = fraction[flat ? 1 : 0];
  fit.memoryEfficiency.flat[kind][pass] = flat;
}

// Memory bandwidth and its curve from the streaming calls' forward passes, each decade's bytes
// over its time (what a model's many small element-wise calls add up to); then per memory kind
// and pass the fraction of that curve its calls reached, their time at the curve over their time.
void fitMemory(const std::vector<TimedCall>& calls, double callOverhead, DeviceFit& fit) {
  std::map<int, Work> byDecade;
  Work all;
  for (const TimedCall& c : calls) {
    const double busy = c.seconds - callOverhead;
    if (!streams(c) || c.bytes <= 0 || busy <= 0) continue;
    Work& w = byDecade[decadeOf(c.bytes)];
    w.amount += c.bytes, w.seconds += busy;
    all.amount += c.bytes, all.seconds += busy;
    ++fit.memoryCalls;
  }
  if (fit.memoryCalls == 0) return;
  fit.memoryBandwidth = all.amount / all.seconds;
  if (byDecade.size() > 1) {
    for (const auto& [decade, w] : byDecade) fit.bandwidthCurve.push_back({std::pow(10.0, decade + 0.5), w.amount / w.seconds});
  }
  hw::Device curve;
  curve.memoryBandwidth = fit.memoryBandwidth;
  curve.bandwidthCurve = fit.bandwidthCurve;
  curve.prepare();
  // Per call, amount: seconds at the curve ([0]) and at the flat bandwidth ([1]).
  std::vector<Work> kinds[hw::kMemoryKinds][2][2];
  for (const TimedCall& c : calls) {
    if (c.matrix || c.memoryKind < 0) continue;
    auto (&kind)[2][2] = kinds[c.memoryKind];
    if (const double busy = c.seconds - callOverhead; c.bytes > 0 && busy > 0) {
      kind[0][0].push_back({c.bytes * curve.secondsPerByte(c.bytes), busy});
      kind[0][1].push_back({c.bytes / fit.memoryBandwidth, busy});
    }
    const int passes = c.backwardPasses();
    const double backwardBusy = c.backwardSeconds - passes * callOverhead;
    if (passes > 0 && c.backwardBytes() > 0 && backwardBusy > 0) {
      const double perPass = c.backwardBytes() / passes;
      kind[1][0].push_back({c.backwardBytes() * curve.secondsPerByte(perPass), backwardBusy});
      kind[1][1].push_back({c.backwardBytes() / fit.memoryBandwidth, backwardBusy});
    }
  }
  for (int k = 0; k < hw::kMemoryKinds; ++k) {
    for (int pass = 0; pass < 2; ++pass) fitMemoryKind(kinds[k][pass], k, pass, fit);
  }
}

// The weight-gradient traffic among a grid of them whose device (curves fitted with it, the
// fitted bandwidth) predicts the convolutions' whole backward passes best, in squared log error.
double trafficError(const std::vector<TimedCall>& calls, double callOverhead, const DeviceFit& fit,
                    const hw::WeightGradientTraffic& traffic, bool oneSample) {
  const Curves curves = fitCurves(calls, fit.peak, callOverhead, fit.memoryBandwidth, -1, traffic);
  hw::Device d;
  d.memoryBandwidth = fit.memoryBandwidth;
  d.bandwidthCurve = fit.bandwidthCurve;
  d.efficiency = curves.forward;
  d.backwardEfficiency = curves.backward;
  d.callOverhead = callOverhead;
  d.prepare();
  double error = 0;
  for (const TimedCall& c : calls) {
    // Batches or one sample, which runs LibTorch's other kernel (hw::WeightGradientTraffic::oneSample).
    if (c.accumulatedWeights <= 0 || c.backwardPasses() == 0 || c.backwardSeconds <= 0 ||
        c.native != oneSample) {
      continue;
    }
    const double predicted = cost::passSeconds(d, fit.peak, c.backwardData, true, c.kernel) +
                             cost::passSeconds(d, fit.peak, c.weightPass(traffic), true, c.kernel);
    error += squaredLogError(predicted, c.backwardSeconds);
  }
  return error;
}

hw::WeightGradientTraffic fitTraffic(const std::vector<TimedCall>& calls, double callOverhead, const DeviceFit& fit) {
  double best = -1;
  hw::WeightGradientTraffic bestTraffic;
  for (const double perPass : {1.0, 2.0, 3.0, 4.0, 6.0, 8.0, kLargestPerPassCount}) {
    for (const double perSample : {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, kLargestPerSampleCount}) {
      const hw::WeightGradientTraffic traffic{perPass, perSample};
      if (const double error = trafficError(calls, callOverhead, fit, traffic, false); best < 0 || error < best) {
        best = error;
        bestTraffic = traffic;
      }
    }
  }
  // Then the one-sample calls' own count, where there are any.
  const bool anyOneSample = std::any_of(calls.begin(), calls.end(), [](const TimedCall& c) {
    return c.accumulatedWeights > 0 && c.backwardSeconds > 0 && c.native;
  });
  if (!anyOneSample) return bestTraffic;
  hw::WeightGradientTraffic withOneSample = bestTraffic;
  constexpr double kOneSampleCounts[] = {-1.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, kLargestPerPassCount};  // -1: as a batch
  withOneSample.oneSample = leastError(kOneSampleCounts, [&](double times) {
    hw::WeightGradientTraffic traffic = bestTraffic;
    traffic.oneSample = times;
    return trafficError(calls, callOverhead, fit, traffic, true);
  });
  return withOneSample;
}

// A device of the fitted memory alone: the bandwidth at which weights are reordered.
hw::Device memoryOf(const DeviceFit& fit, double callOverhead) {
  hw::Device d;
  d.memoryBandwidth = fit.memoryBandwidth;
  d.bandwidthCurve = fit.bandwidthCurve;
  d.callOverhead = callOverhead;
  d.prepare();
  return d;
}

// The calls with the traffic `memory` describes before or after their arithmetic taken off
// their times: a batch convolution's forward reordering its weights, each pass of a native one
// moving its column buffer. What the curves describe.
std::vector<TimedCall> withoutSerialTraffic(const std::vector<TimedCall>& calls, const hw::Device& memory) {
  std::vector<TimedCall> out = calls;
  for (TimedCall& c : out) {
    const double bytes = memory.forwardWeightBytes(c.accumulatedWeights, c.native);
    if (bytes > 0) c.seconds -= bytes * memory.secondsPerByte(bytes);
    if (const double columns = c.columnTraffic(memory); columns > 0) {
      const double seconds = columns * memory.secondsPerByte(columns);
      c.seconds -= seconds;
      c.backwardSeconds -= c.backwardPasses() * seconds;
    }
  }
  return out;
}

// The device fitted to `calls` with `traffic` for the forward's weight reordering and `columns`
// for a native convolution's column buffer: its general curves and the convolutions' own (the
// kinds the traffic touches).
hw::Device deviceWithTraffic(const std::vector<TimedCall>& calls, double callOverhead, const DeviceFit& fit,
                             double traffic, double columns) {
  hw::Device d = memoryOf(fit, callOverhead);
  d.forwardWeightTraffic = traffic;
  d.nativeColumnTraffic = columns;
  d.weightGradientTraffic = fit.weightGradientTraffic;
  const std::vector<TimedCall> compute = withoutSerialTraffic(calls, d);
  const Curves all = fitCurves(compute, fit.peak, callOverhead, fit.memoryBandwidth, -1, fit.weightGradientTraffic);
  d.efficiency = all.forward;
  d.backwardEfficiency = all.backward;
  for (const hw::Kernel k : {hw::Kernel::kConv2d, hw::Kernel::kConv3d}) {
    const int kernel = static_cast<int>(k);
    fitKernel(compute, fit.peak, callOverhead, fit.memoryBandwidth, kernel, fit.weightGradientTraffic, 1, d.kernels[kernel]);
  }
  d.prepare();
  return d;
}

// A call's whole forward time on `d` against its measured one, in squared log error.
double forwardError(const TimedCall& c, const hw::Device& d, double peak) {
  return squaredLogError(cost::passSeconds(d, peak, c.forwardPass(d), false, c.kernel), c.seconds);
}

// The forward weight traffic among a grid of them whose device predicts the convolutions'
// whole forward passes best, in squared log error (native calls reorder nothing and count
// alike at every candidate).
double fitForwardTraffic(const std::vector<TimedCall>& calls, double callOverhead, const DeviceFit& fit) {
  return leastError(kTrafficCounts, [&](double traffic) {
    const hw::Device d = deviceWithTraffic(calls, callOverhead, fit, traffic, fit.nativeColumnTraffic);
    double error = 0;
    for (const TimedCall& c : calls) {
      if (c.accumulatedWeights > 0 && c.seconds > 0) error += forwardError(c, d, fit.peak);
    }
    return error;
  });
}

// The column traffic among a grid of counts whose device predicts the native convolutions'
// whole forward and backward times best, in squared log error (0 without such calls).
double fitColumnTraffic(const std::vector<TimedCall>& calls, double callOverhead, const DeviceFit& fit) {
  const bool any = std::any_of(calls.begin(), calls.end(), [](const TimedCall& c) { return c.native && c.columnBytes > 0; });
  if (!any) return 0;
  return leastError(kTrafficCounts, [&](double columns) {
    const hw::Device d = deviceWithTraffic(calls, callOverhead, fit, fit.forwardWeightTraffic, columns);
    double error = 0;
    for (const TimedCall& c : calls) {
      if (!c.native || c.columnBytes <= 0 || c.seconds <= 0) continue;
      error += forwardError(c, d, fit.peak);
      if (c.backwardPasses() > 0 && c.backwardSeconds > 0) {
        error += squaredLogError(c.backwardSecondsOn(d, fit.peak), c.backwardSeconds);
      }
    }
    return error;
  });
}

}  // namespace

std::vector<std::string> trafficCountsAtTheirLimit(const hw::Device& device) {
  const hw::WeightGradientTraffic& t = device.weightGradientTraffic;
  std::vector<std::string> keys;
  if (t.perPass >= kLargestPerPassCount) keys.emplace_back("weight_gradient_traffic.per_pass");
  if (t.perSample >= kLargestPerSampleCount) keys.emplace_back("weight_gradient_traffic.per_sample");
  if (t.oneSample >= kLargestPerPassCount) keys.emplace_back("weight_gradient_traffic.one_sample");
  if (device.forwardWeightTraffic >= kLargestTrafficCount) keys.emplace_back("forward_weight_traffic");
  if (device.nativeColumnTraffic >= kLargestTrafficCount) keys.emplace_back("native_column_traffic");
  return keys;
}

cost::PassWork TimedCall::forwardPass(const hw::Device& device) const {
  cost::PassWork w{flops, bytes, rows, samples};
  w.serialBytes = device.forwardWeightBytes(accumulatedWeights, native) + columnTraffic(device);
  w.native = native, w.depth = depth, w.resident = resident, w.strided = strided;
  return w;
}

double TimedCall::backwardSecondsOn(const hw::Device& device, double peak) const {
  cost::PassWork data = backwardData, weight = weightPass(device.weightGradientTraffic);
  if (data.flops > 0) data.serialBytes = columnTraffic(device);
  if (weight.flops > 0) weight.serialBytes = columnTraffic(device);
  return cost::passSeconds(device, peak, data, true, kernel, memoryKind) +
         cost::passSeconds(device, peak, weight, true, kernel, memoryKind);
}

cost::PassWork TimedCall::weightPass(const hw::WeightGradientTraffic& traffic) const {
  cost::PassWork w = backwardWeight;
  w.bytes += traffic.bytes(accumulatedWeights, backwardWeight.samples, native) - accumulatedWeights;
  return w;
}

void setResidentShares(std::vector<TimedCall>& calls, double cacheShare) {
  for (TimedCall& c : calls) {
    c.resident = hw::residentShare(cacheShare, c.workingSet);
    c.backwardData.resident = c.backwardWeight.resident = c.resident;
  }
}

DeviceFit fitDevice(const std::vector<TimedCall>& calls, double peak, double callOverhead, bool weightReorders,
                    double residentRowsShare) {
  DeviceFit fit;
  fitMemory(calls, callOverhead, fit);

  fit.peak = std::max(peak, fastestRate(calls, callOverhead, fit.memoryBandwidth));
  std::vector<TimedCall> compute = calls;
  if (fit.memoryBandwidth > 0 && weightReorders) {
    fit.weightGradientTraffic = fitTraffic(calls, callOverhead, fit);
    // The columns first, judged on the native calls alone (which reorder nothing), then the
    // reordering with the columns known: the other order let the native calls' unmodelled
    // columns bend the curves the reordering was judged by.
    fit.nativeColumnTraffic = fitColumnTraffic(calls, callOverhead, fit);
    fit.forwardWeightTraffic = fitForwardTraffic(calls, callOverhead, fit);
    hw::Device memory = memoryOf(fit, callOverhead);
    memory.forwardWeightTraffic = fit.forwardWeightTraffic;
    memory.nativeColumnTraffic = fit.nativeColumnTraffic;
    compute = withoutSerialTraffic(calls, memory);
    fit.peak = std::max(fit.peak, fastestRate(compute, callOverhead, fit.memoryBandwidth));
  }
  const Curves all = fitCurves(compute, fit.peak, callOverhead, fit.memoryBandwidth, -1, fit.weightGradientTraffic);
  fit.efficiency = all.forward;
  fit.backwardEfficiency = all.backward;
  fit.computeCalls = all.forwardCalls;
  fit.backwardCalls = all.backwardCalls;
  for (int k = 0; k < hw::kKernels; ++k) {
    // A fully connected layer streams its weights over few rows (hw::KernelCurves::residentRowsShare);
    // a convolution reuses each across its positions: ResNet-18's 512-channel 3x3 ones took 4.3-5.1
    // ms backward at one sample whether 1 or 12 of them (9 to 108 MiB) ran between two uses.
    const double share = k == static_cast<int>(hw::Kernel::kFullyConnected) ? residentRowsShare : 1;
    fitKernel(compute, fit.peak, callOverhead, fit.memoryBandwidth, k, fit.weightGradientTraffic, share, fit.kernels[k]);
  }
  return fit;
}

}  // namespace paraxis::calib
