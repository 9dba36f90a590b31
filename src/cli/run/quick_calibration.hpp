#pragma once
// `paraxis calibrate --quick`: a cluster file from micro-benchmarks of this job's machine
// (quick_calibration.cpp says what is timed).
#include "cli/context.hpp"
#include "cli/runtime.hpp"

namespace paraxis::cli {

// Collective under mpirun (one rank without); rank 0 prints and writes.
void runQuickCalibration(const QuickCalibration& options, const CLI::App& command, Context& context);

}  // namespace paraxis::cli
