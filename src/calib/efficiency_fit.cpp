#include "calib/efficiency_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace paraxis::calib {
namespace {

int decadeOf(double flops) { return static_cast<int>(std::floor(std::log10(flops))); }

struct Work {
  double amount = 0, seconds = 0;  // FLOPs or bytes, and the seconds they took
};

// Per decade of FLOPs the decade's work over its time (its calls' efficiency weighted by their
// time, so the curve adds up to what the calls took: a median under-predicted a model whose
// slow calls shared a decade with fast ones by a third), made non-decreasing.
std::vector<hw::EfficiencyPoint> curveOf(const std::map<int, Work>& byDecade, double peak) {
  std::vector<hw::EfficiencyPoint> curve;
  double floor = 0;
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

double backwardBusy(const TimedCall& c, double callOverhead, double bandwidth) {
  return c.backwardPasses == 0 ? 0
                               : computeBusy(c.backwardFlops, c.backwardBytes,
                                             c.backwardSeconds - c.backwardPasses * callOverhead, bandwidth);
}

// Both curves from the compute-bound matrix calls of `kernel` (-1: every kernel), each call's
// work counted as if it had rows enough (its FLOPs over its rows' share at `rows`' half rate).
Curves fitCurves(const std::vector<TimedCall>& calls, double peak, double callOverhead, double bandwidth, int kernel,
                 const hw::KernelCurves& rows = {}) {
  std::map<int, Work> forward, backward;
  Curves out;
  for (const TimedCall& c : calls) {
    if (!c.matrix || (kernel >= 0 && c.kernel != kernel)) continue;
    const double share = hw::rowsShare(c.rows, rows.halfRateRowsAt(c.samples));
    if (const double busy = computeBusy(c.flops, c.bytes, c.seconds - callOverhead, bandwidth); busy > 0) {
      Work& w = forward[decadeOf(c.flops)];
      w.amount += c.flops / share;
      w.seconds += busy;
      ++out.forwardCalls;
    }
    if (const double busy = backwardBusy(c, callOverhead, bandwidth); busy > 0) {
      Work& w = backward[decadeOf(c.backwardFlops / c.backwardPasses)];
      w.amount += c.backwardFlops / share;
      w.seconds += busy;
      ++out.backwardCalls;
    }
  }
  out.forward = curveOf(forward, peak);
  out.backward = curveOf(backward, peak);
  return out;
}

// Squared log error of a kernel's curves at `rows`' half rates on its compute-bound calls.
double kernelError(const std::vector<TimedCall>& calls, double peak, double callOverhead, double bandwidth, int kernel,
                   const Curves& curves, const hw::KernelCurves& rows) {
  hw::Device d;
  d.efficiency = curves.forward;
  d.kernels[kernel] = rows;
  d.kernels[kernel].forward = curves.forward;
  d.kernels[kernel].backward = curves.backward;
  d.prepare();
  double error = 0;
  auto add = [&](double flops, double busy, bool backward, const TimedCall& c) {
    const double predicted =
        flops / (peak * d.efficiencyOf(kernel, backward, std::log(flops)) * d.rowsFactor(kernel, c.rows, c.samples));
    error += std::pow(std::log(predicted / busy), 2);
  };
  for (const TimedCall& c : calls) {
    if (!c.matrix || c.kernel != kernel) continue;
    if (const double busy = computeBusy(c.flops, c.bytes, c.seconds - callOverhead, bandwidth); busy > 0) {
      add(c.flops, busy, false, c);
    }
    if (const double busy = backwardBusy(c, callOverhead, bandwidth); busy > 0) {
      add(c.backwardFlops / c.backwardPasses, busy / c.backwardPasses, true, c);
    }
  }
  return error;
}

// The candidate half-rate rows: none, or 1 to 16384 by factors of 2.
std::vector<double> halfRateCandidates() {
  std::vector<double> rows{0};
  for (double r = 1; r <= 16384; r *= 2) rows.push_back(r);
  return rows;
}

// A kernel's own curves and the rows at which it runs at half their rate, for batches and, where
// it has one-sample calls, for those: the pair of candidates whose curves fit its calls best.
void fitKernel(const std::vector<TimedCall>& calls, double peak, double callOverhead, double bandwidth, int kernel,
               hw::KernelCurves& out) {
  const bool anyOneSample = std::any_of(calls.begin(), calls.end(), [&](const TimedCall& c) {
    return c.matrix && c.kernel == kernel && hw::isOneSample(c.samples);
  });
  const std::vector<double> candidates = halfRateCandidates();
  const std::vector<double> oneSampleCandidates = anyOneSample ? candidates : std::vector<double>{-1};
  double best = -1;
  for (const double half : candidates) {
    for (const double oneSampleHalf : oneSampleCandidates) {
      hw::KernelCurves rows;
      rows.halfRateRows = half;
      rows.oneSampleHalfRateRows = oneSampleHalf;
      const Curves mine = fitCurves(calls, peak, callOverhead, bandwidth, kernel, rows);
      if (mine.forwardCalls < kFewestCalls) return;
      const double error = kernelError(calls, peak, callOverhead, bandwidth, kernel, mine, rows);
      if (best >= 0 && error >= best) continue;
      best = error;
      out = rows;
      out.forward = mine.forward;
      out.backward = mine.backwardCalls >= kFewestCalls ? mine.backward : std::vector<hw::EfficiencyPoint>{};
    }
  }
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
  Work kinds[hw::kMemoryKinds][2];  // amount: seconds at the curve
  for (const TimedCall& c : calls) {
    if (c.matrix || c.memoryKind < 0) continue;
    Work* kind = kinds[c.memoryKind];
    if (const double busy = c.seconds - callOverhead; c.bytes > 0 && busy > 0) {
      kind[0].amount += c.bytes * curve.secondsPerByte(c.bytes), kind[0].seconds += busy;
    }
    const double backwardBusy = c.backwardSeconds - c.backwardPasses * callOverhead;
    if (c.backwardPasses > 0 && c.backwardBytes > 0 && backwardBusy > 0) {
      const double perPass = c.backwardBytes / c.backwardPasses;
      kind[1].amount += c.backwardBytes * curve.secondsPerByte(perPass), kind[1].seconds += backwardBusy;
    }
  }
  for (int k = 0; k < hw::kMemoryKinds; ++k) {
    for (int pass = 0; pass < 2; ++pass) {
      const Work& w = kinds[k][pass];
      if (w.seconds > 0) fit.memoryEfficiency[k][pass] = std::clamp(w.amount / w.seconds, 1e-4, 100.0);
    }
  }
}

}  // namespace

DeviceFit fitDevice(const std::vector<TimedCall>& calls, double peak, double callOverhead) {
  DeviceFit fit;
  fitMemory(calls, callOverhead, fit);

  fit.peak = std::max(peak, fastestRate(calls, callOverhead, fit.memoryBandwidth));
  const Curves all = fitCurves(calls, fit.peak, callOverhead, fit.memoryBandwidth, -1);
  fit.efficiency = all.forward;
  fit.backwardEfficiency = all.backward;
  fit.computeCalls = all.forwardCalls;
  fit.backwardCalls = all.backwardCalls;
  for (int k = 0; k < hw::kKernels; ++k) fitKernel(calls, fit.peak, callOverhead, fit.memoryBandwidth, k, fit.kernels[k]);
  return fit;
}

}  // namespace paraxis::calib
