#include "calib/coordinate_search.hpp"

#include <algorithm>
#include <cmath>

namespace paraxis::calib {

double minimiseCoordinate(double& value, const std::function<double()>& objective, double radius) {
  constexpr double kLimit = 8;
  constexpr double kStep = 0.25;
  auto at = [&](double x) {
    value = std::exp(x);
    return objective();
  };
  double bestX = std::log(value);
  double best = at(bestX);
  // The scan's grid stays on multiples of the step, so a narrow scan visits the wide one's points.
  const double from = std::max(-kLimit, kStep * std::floor((bestX - radius) / kStep));
  const double to = std::min(kLimit, bestX + radius);
  for (double x = from; x <= to + 1e-9; x += kStep) {
    const double v = at(x);
    if (v < best) {
      best = v;
      bestX = x;
    }
  }
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double lo = bestX - kStep, hi = bestX + kStep;
  double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
  double fa = at(a), fb = at(b);
  for (int i = 0; i < 24; ++i) {  // the bracket shrinks to 2e-6 of log(value)
    if (fa < fb) {
      hi = b, b = a, fb = fa, a = hi - phi * (hi - lo), fa = at(a);
    } else {
      lo = a, a = b, fa = fb, b = lo + phi * (hi - lo), fb = at(b);
    }
  }
  const double refined = fa < fb ? a : b;
  if (std::min(fa, fb) < best) bestX = refined;
  value = std::exp(bestX);
  return objective();
}

}  // namespace paraxis::calib
