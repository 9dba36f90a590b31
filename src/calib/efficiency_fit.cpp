#include "calib/efficiency_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace paraxis::calib {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int decadeOf(double flops) { return static_cast<int>(std::floor(std::log10(flops))); }

// The median efficiency per decade of FLOPs, made non-decreasing.
std::vector<hw::EfficiencyPoint> curveOf(const std::map<int, std::vector<double>>& byDecade) {
  std::vector<hw::EfficiencyPoint> curve;
  double floor = 0;
  for (const auto& [decade, efficiencies] : byDecade) {
    floor = std::max(floor, median(efficiencies));
    curve.push_back({std::pow(10.0, decade + 0.5), floor});
  }
  return curve;
}

// A kernel with fewer compute-bound calls keeps the device's curves.
constexpr int kFewestCalls = 3;

struct Curves {
  std::vector<hw::EfficiencyPoint> forward, backward;
  int forwardCalls = 0, backwardCalls = 0;
};

// Both curves from the compute-bound matrix calls of `kernel` (-1: every kernel).
Curves fitCurves(const std::vector<TimedCall>& calls, double peak, double callOverhead, double bandwidth, int kernel) {
  std::map<int, std::vector<double>> forward, backward;
  Curves out;
  for (const TimedCall& c : calls) {
    if (!c.matrix || (kernel >= 0 && c.kernel != kernel)) continue;
    const double busy = c.seconds - callOverhead;
    if (c.flops > 0 && busy > 0 && !(bandwidth > 0 && c.bytes / bandwidth >= busy)) {
      forward[decadeOf(c.flops)].push_back(std::min(1.0, c.flops / (peak * busy)));
      ++out.forwardCalls;
    }
    const double backwardBusy = c.backwardSeconds - c.backwardPasses * callOverhead;
    if (c.backwardPasses > 0 && c.backwardFlops > 0 && backwardBusy > 0 &&
        !(bandwidth > 0 && c.backwardBytes / bandwidth >= backwardBusy)) {
      backward[decadeOf(c.backwardFlops / c.backwardPasses)].push_back(std::min(1.0, c.backwardFlops / (peak * backwardBusy)));
      ++out.backwardCalls;
    }
  }
  out.forward = curveOf(forward);
  out.backward = curveOf(backward);
  return out;
}

}  // namespace

DeviceFit fitDevice(const std::vector<TimedCall>& calls, double peak, double callOverhead) {
  DeviceFit fit;
  std::vector<double> bandwidths;
  std::map<int, std::vector<double>> byDecade;
  for (const TimedCall& c : calls) {
    const double busy = c.seconds - callOverhead;
    if (c.matrix || c.bytes <= 0 || busy <= 0) continue;
    bandwidths.push_back(c.bytes / busy);
    byDecade[decadeOf(c.bytes)].push_back(c.bytes / busy);
  }
  if (!bandwidths.empty()) fit.memoryBandwidth = median(bandwidths);
  if (byDecade.size() > 1) {
    for (const auto& [decade, rates] : byDecade) fit.bandwidthCurve.push_back({std::pow(10.0, decade + 0.5), median(rates)});
  }
  fit.memoryCalls = static_cast<int>(bandwidths.size());

  const Curves all = fitCurves(calls, peak, callOverhead, fit.memoryBandwidth, -1);
  fit.efficiency = all.forward;
  fit.backwardEfficiency = all.backward;
  fit.computeCalls = all.forwardCalls;
  fit.backwardCalls = all.backwardCalls;
  for (int k = 0; k < hw::kKernels; ++k) {
    const Curves mine = fitCurves(calls, peak, callOverhead, fit.memoryBandwidth, k);
    if (mine.forwardCalls >= kFewestCalls) fit.kernels[k].forward = mine.forward;
    if (mine.backwardCalls >= kFewestCalls) fit.kernels[k].backward = mine.backward;
  }
  return fit;
}

}  // namespace paraxis::calib
