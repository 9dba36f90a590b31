#pragma once
// The commands that need LibTorch or MPI (train, bench, config, calibrate --quick) live in
// paraxis-run (cli/run/). The planner executable `paraxis` and the Python module link neither:
// they start in milliseconds and hand such a command, whole, to paraxis-run (handOff).
#include <string>
#include <vector>

#include "core/knobs.hpp"

namespace CLI {
class App;
}

namespace paraxis::cli {

struct Context;

// The speed probe's spread (the slower reading over the faster, less 1) over which calibrate
// --quick times the layers once more (--steady-within).
inline constexpr double kSteadySpread = 0.2;

// `paraxis calibrate --quick`: a cluster file from micro-benchmarks of this job's machine
// (cli/run/quick_calibration.cpp says what is timed).
struct QuickCalibration {
  std::string cluster = "local";  // the description whose figures are measured and replaced
  std::string dtype = "fp32";
  std::vector<std::string> models;  // whose layers it times (NAME or NAME@INPUT); empty: ComputeBench's
  std::string out;
  std::string saveCalls;  // also write the layer timings here (bench compute --from-calls fits them again)
  double steadySpread = kSteadySpread;
  bool json = false;
};

// What paraxis-run adds to the planner's commands. Context::runtime is null where it is absent.
class Runtime {
 public:
  virtual ~Runtime() = default;
  // Applies the knobs only the runtime reads, before any command runs.
  virtual void configure(const Knobs& knobs) const = 0;
  // Registers the command `name` (train, bench or config) with its options.
  virtual void addCommand(const std::string& name, CLI::App& app, Context& context) const = 0;
  // Collective under mpirun (one rank without); rank 0 prints and writes.
  virtual void quickCalibration(const QuickCalibration& options, const CLI::App& command, Context& context) const = 0;
};

// The one-line description of train, bench or config, whichever executable registers it.
const char* runtimeCommandDescription(const std::string& name);

// Where the runtime is absent: replaces this process by paraxis-run with the same command line
// (same pid, environment and MPI launch), or, in-process (Python), refuses the command in one
// line. Throws ConfigError where paraxis-run cannot be found.
[[noreturn]] void handOff(const Context& context, const std::string& command);

// Registers `name`: the real command where the runtime is present, else one that hands off.
void addRuntimeCommand(const std::string& name, CLI::App& app, Context& context);

}  // namespace paraxis::cli
