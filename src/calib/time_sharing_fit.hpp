#pragma once
// hw::TimeSharing fitted to timed steps' wall time over their CPU time (calibrate --quick, bench
// compute: each model and batch's steps, every rank at once).
#include <vector>

#include "hw/cluster.hpp"

namespace paraxis::calib {

// A timed step: its CPU seconds (the span a rank computed between two synchronisations) and its
// wall time over them (>= 1).
struct SharedSpan {
  double cpuSeconds = 0;
  double wallPerCpu = 1;
};

// Below this stretch at its longest a curve is the machine's noise, not ranks waiting for a core.
inline constexpr double kLeastTimeSharing = 1.05;

// Least squares over the spans' stretches less 1, the slice searched in log steps from 10 us to
// 1 s (the stretch's scale closed-form at each). Identity ({1, 1, 0}) with fewer than two spans or
// where the fitted `shared` is below kLeastTimeSharing.
hw::TimeSharing fitTimeSharing(const std::vector<SharedSpan>& spans);

}  // namespace paraxis::calib
