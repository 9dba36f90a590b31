// `import paraxis`: the paraxis commands in-process (pybind11), for notebooks and scripts.
// `_run(args)` runs one command line, as a shell passes it without the word "paraxis", and
// returns what the command printed; python/paraxis/__init__.py builds the arguments and reads
// the --json document, so the objects Python gets have exactly the keys docs/json-output.md
// documents. A user error (paraxis::Error: a bad option, file or model) raises paraxis.Error,
// a ValueError, with the line the command would print.
#include <CLI/CLI.hpp>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "core/error.hpp"
#include "core/knobs.hpp"

namespace {

std::string run(std::vector<std::string> args) {
  using namespace paraxis;
  std::ostringstream out;
  cli::Context context{Knobs::load(cli::knobTable(), processEnvironment()), out};
  CLI::App app{"paraxis: plan, predict and run hybrid-parallel training of CNNs", "paraxis"};
  app.require_subcommand(1);
  cli::addCommands(app, context);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(args);
  } catch (const CLI::Success&) {
    return app.help();
  } catch (const CLI::ParseError& e) {
    throw ConfigError(e.what());
  }
  return out.str();
}

}  // namespace

PYBIND11_MODULE(_paraxis, m) {
  m.doc() = "paraxis's commands in-process; use the functions of the paraxis package";
  pybind11::register_exception<paraxis::Error>(m, "Error", PyExc_ValueError);
  m.def("_run", &run, pybind11::arg("args"),
        "Runs one paraxis command line (without 'paraxis') and returns what it printed.");
}
