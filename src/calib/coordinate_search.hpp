#pragma once
// One-dimensional minimisation over a positive parameter, for the fits of calibration: the
// objective is evaluated through the oracle, so it need be neither smooth nor convex.
#include <functional>

namespace paraxis::calib {

// One coordinate of a descent, over log(value) in [-8, 8] around 1 (so value in
// [3e-4, 3e3]): a coarse scan brackets the minimum, a golden-section search refines it.
// Leaves `value` at the best found and returns the objective there. Scale a parameter to a
// multiple of a starting figure (alpha = alpha0 x value) to search around that figure.
// `radius` narrows the scan to log(value) +- radius: a descent's later sweeps, which move each
// coordinate a little, need not rescan the whole range.
double minimiseCoordinate(double& value, const std::function<double()>& objective, double radius = 16);

}  // namespace paraxis::calib
