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

}  // namespace

DeviceFit fitDevice(const std::vector<TimedCall>& calls, double peak, double callOverhead) {
  DeviceFit fit;
  std::vector<double> bandwidths;
  for (const TimedCall& c : calls) {
    const double busy = c.seconds - callOverhead;
    if (!c.matrix && c.bytes > 0 && busy > 0) bandwidths.push_back(c.bytes / busy);
  }
  if (!bandwidths.empty()) fit.memoryBandwidth = median(bandwidths);
  fit.memoryCalls = static_cast<int>(bandwidths.size());

  std::map<int, std::vector<double>> byDecade;
  for (const TimedCall& c : calls) {
    const double busy = c.seconds - callOverhead;
    if (!c.matrix || c.flops <= 0 || busy <= 0) continue;
    if (fit.memoryBandwidth > 0 && c.bytes / fit.memoryBandwidth >= busy) continue;  // memory-bound
    byDecade[static_cast<int>(std::floor(std::log10(c.flops)))].push_back(std::min(1.0, c.flops / (peak * busy)));
    ++fit.computeCalls;
  }
  double floor = 0;
  for (const auto& [decade, efficiencies] : byDecade) {
    floor = std::max(floor, median(efficiencies));
    fit.efficiency.push_back({std::pow(10.0, decade + 0.5), floor});
  }
  return fit;
}

}  // namespace paraxis::calib
