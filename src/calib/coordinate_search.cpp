#include "calib/coordinate_search.hpp"

#include <algorithm>
#include <cmath>

namespace paraxis::calib {

double minimiseCoordinate(double& value, const std::function<double()>& objective) {
  constexpr double kLimit = 8;
  constexpr double kStep = 0.25;
  auto at = [&](double x) {
    value = std::exp(x);
    return objective();
  };
  double bestX = std::log(value);
  double best = at(bestX);
  for (double x = -kLimit; x <= kLimit + 1e-9; x += kStep) {
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
  for (int i = 0; i < 40; ++i) {
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
