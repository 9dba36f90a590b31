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

class Runtime;

struct Context {
  Knobs knobs;
  std::ostream& out;
  int* argc = nullptr;  // for backends that parse the command line (MPI)
  char*** argv = nullptr;
  const Runtime* runtime = nullptr;  // LibTorch and MPI: present in paraxis-run only (runtime.hpp)
};

// Every knob paraxis reads, in one table (STYLE.md practice 11).
const std::vector<KnobSpec>& knobTable();

void addModelsCommand(CLI::App& app, Context& context);
void addClustersCommand(CLI::App& app, Context& context);
void addPlanCommand(CLI::App& app, Context& context);
void addValidateCommand(CLI::App& app, Context& context);
void addCalibrateCommand(CLI::App& app, Context& context);
void addPlaceCommand(CLI::App& app, Context& context);
void addReportCommand(CLI::App& app, Context& context);
// Every command above and the runtime's (runtime.hpp), in the order --help lists them.
void addCommands(CLI::App& app, Context& context);

}  // namespace paraxis::cli
