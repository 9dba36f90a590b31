// The command line of both executables, `paraxis` (the planner, no LibTorch or MPI) and
// paraxis-run (everything). Exit codes: 0 success, 1 an output could not be written whole (one
// line naming it; nothing partial left), 2 a user or environment error (one line on stderr
// naming the file, key or rank at fault), 3 an internal error (a bug).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

#include "cli/entry.hpp"

#include "cli/context.hpp"
#include "cli/runtime.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/thread_slice.hpp"

namespace {

constexpr int kOutputError = 1;
constexpr int kUserError = 2;
constexpr int kInternalError = 3;
bool gDebug = false;  // the knob `debug`, once the knobs are read

// A user error is one line, whatever text it quotes, written with one call: the ranks of a
// job print theirs at the same moment, and separate writes interleave into garbled lines.
void printLine(const std::string& prefix, std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  const std::string line = "paraxis: " + prefix + text + "\n";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
}

int run(int argc, char** argv, const paraxis::cli::Runtime* runtime) {
  using namespace paraxis;
  cli::Context context{Knobs::load(cli::knobTable(), processEnvironment()), std::cout, &argc, &argv, runtime};
  gDebug = context.knobs.getBool("debug");
  if (context.knobs.getBool("keep_freed_memory")) keepFreedMemory();
  core::setCommThreadSlice(context.knobs.getDouble("comm_thread_slice"));
  if (runtime != nullptr) runtime->configure(context.knobs);

  CLI::App app{"paraxis: plan, predict and run hybrid-parallel training of CNNs", "paraxis"};
  app.set_version_flag("--version", "paraxis 0.1.0");
  app.require_subcommand(1);
  cli::addCommands(app, context);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    printLine("", fmt::format("{} (see 'paraxis --help')", e.what()));
    return kUserError;
  }
  return 0;
}

}  // namespace

int paraxis::cli::commandMain(int argc, char** argv, const Runtime* runtime) {
  try {
    const int rc = run(argc, argv, runtime);
    if (rc == 0) paraxis::finishStandardOutput();  // a result that never reached stdout is not a success
    return rc;
  } catch (const paraxis::CommError& e) {
    // A peer failed or disagreed: MPI_Finalize could wait for it forever, so leave now.
    printLine("", e.what());
    std::_Exit(kUserError);
  } catch (const paraxis::OutputError& e) {
    printLine("", e.what());
    return kOutputError;
  } catch (const paraxis::Error& e) {
    printLine("", e.what());
    return kUserError;
  } catch (const std::exception& e) {
    // LibTorch's messages carry a 20-30 line trace: one line unless asked for it.
    const std::string what = e.what();
    const std::size_t newline = what.find('\n');
    if (gDebug && newline != std::string::npos) {
      std::cerr << "paraxis: internal error: " << what << std::endl;
    } else {
      printLine("internal error: ", newline == std::string::npos ? what : what.substr(0, newline) + " (PARAXIS_DEBUG=1 for the trace)");
    }
    return kInternalError;
  }
}
