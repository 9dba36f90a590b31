#pragma once
// `paraxis calibrate --quick`: a cluster file from micro-benchmarks of this job's machine
// (quick_calibration.cpp says what is timed).
#include <string>

#include "cli/context.hpp"

namespace CLI {
class App;
}

namespace paraxis::cli {

struct QuickCalibration {
  std::string cluster = "local";  // the description whose figures are measured and replaced
  std::string dtype = "fp32";
  std::string out;
  bool json = false;
};

// Collective under mpirun (one rank without); rank 0 prints and writes.
void runQuickCalibration(const QuickCalibration& options, const CLI::App& command, Context& context);

}  // namespace paraxis::cli
