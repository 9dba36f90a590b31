#pragma once
// What every subcommand receives: the validated knobs and the output stream.
// Subcommands register themselves on the CLI11 app and run from its callbacks; a
// paraxis::Error thrown there becomes one line on stderr and exit code 2 (main.cpp).
#include <iosfwd>

#include "core/knobs.hpp"

namespace CLI {
class App;
}

namespace paraxis::cli {

struct Context {
  Knobs knobs;
  std::ostream& out;
  int* argc = nullptr;  // for backends that parse the command line (MPI)
  char*** argv = nullptr;
};

// Every knob paraxis reads, in one table (STYLE.md practice 11).
const std::vector<KnobSpec>& knobTable();

void addModelsCommand(CLI::App& app, Context& context);
void addClustersCommand(CLI::App& app, Context& context);
void addConfigCommand(CLI::App& app, Context& context);
void addBenchCommand(CLI::App& app, Context& context);
void addBenchComputeCommand(CLI::App& bench, Context& context);
void addBenchConvertCommand(CLI::App& bench, Context& context);
void addPlanCommand(CLI::App& app, Context& context);
void addTrainCommand(CLI::App& app, Context& context);
void addValidateCommand(CLI::App& app, Context& context);
void addCalibrateCommand(CLI::App& app, Context& context);
void addPlaceCommand(CLI::App& app, Context& context);
// Every command above, in the order --help lists them (the executable and the Python module).
void addCommands(CLI::App& app, Context& context);

}  // namespace paraxis::cli
