#include "calib/time_sharing_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace paraxis::calib {

hw::TimeSharing fitTimeSharing(const std::vector<SharedSpan>& spans) {
  if (spans.size() < 2) return {};
  constexpr double kLowest = 1e-5, kHighest = 1;
  constexpr int kStepsPerDecade = 20;
  const int steps = static_cast<int>(std::lround(std::log10(kHighest / kLowest) * kStepsPerDecade));
  hw::TimeSharing best;
  double bestError = std::numeric_limits<double>::infinity();
  for (int k = 0; k <= steps; ++k) {
    const double slice = kLowest * std::pow(10.0, static_cast<double>(k) / kStepsPerDecade);
    // stretch - 1 = (shared - 1) g(span), g = 1 - exp(-span / slice): linear in shared - 1.
    double gy = 0, gg = 0;
    for (const SharedSpan& s : spans) {
      const double g = -std::expm1(-s.cpuSeconds / slice);
      gy += g * (s.wallPerCpu - 1);
      gg += g * g;
    }
    if (gg <= 0) continue;
    const double excess = std::max(0.0, gy / gg);
    double error = 0;
    for (const SharedSpan& s : spans) {
      const double miss = s.wallPerCpu - 1 - excess * -std::expm1(-s.cpuSeconds / slice);
      error += miss * miss;
    }
    if (error < bestError) {
      bestError = error;
      best.shared = 1 + excess;
      best.slice = slice;
    }
  }
  if (best.shared < kLeastTimeSharing) return {};
  return best;
}

}  // namespace paraxis::calib
