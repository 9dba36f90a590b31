// The planner's side of the split between `paraxis` and paraxis-run (runtime.hpp).
#include "cli/runtime.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <vector>

#include "cli/context.hpp"
#include "core/error.hpp"

namespace paraxis::cli {
namespace {

// paraxis-run beside this executable (the build folder), else where `make install` puts it.
std::vector<std::filesystem::path> runnerCandidates() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  const std::filesystem::path dir = self.parent_path();
  return {dir / "paraxis-run", (dir / ".." / "libexec" / "paraxis" / "paraxis-run").lexically_normal()};
}

}  // namespace

const char* runtimeCommandDescription(const std::string& name) {
  if (name == "train") return "Train on LibTorch with any strategy plan names (run under mpirun for several ranks)";
  if (name == "bench") return "Micro-benchmarks: compute here, communication under mpirun";
  if (name == "config") return "List the run-time knobs (set them as PARAXIS_<NAME>) and the LibTorch build";
  throw Error(fmt::format("internal: '{}' is not a command of paraxis-run", name));
}

void handOff(const Context& context, const std::string& command) {
  if (context.argv == nullptr || *context.argv == nullptr) {
    throw ConfigError(fmt::format("'{}' needs LibTorch and MPI: run it as the paraxis command, not in-process", command));
  }
  context.out.flush();
  const std::vector<std::filesystem::path> candidates = runnerCandidates();
  std::string looked;
  for (const auto& path : candidates) {
    if (::access(path.c_str(), X_OK) != 0) {
      looked += (looked.empty() ? "" : ", ") + path.string();
      continue;
    }
    char** argv = *context.argv;
    argv[0] = const_cast<char*>(path.c_str());
    ::execv(path.c_str(), argv);
    throw ConfigError(fmt::format("{}: could not start it for '{}': {}", path.string(), command, std::strerror(errno)));
  }
  throw ConfigError(fmt::format("'{}' needs paraxis-run (LibTorch and MPI); not found at {}", command,
                                looked.empty() ? "/proc/self/exe's folder" : looked));
}

void addRuntimeCommand(const std::string& name, CLI::App& app, Context& context) {
  if (context.runtime != nullptr) return context.runtime->addCommand(name, app, context);
  // Everything after the command's name, --help included, is paraxis-run's to parse.
  CLI::App* command = app.add_subcommand(name, runtimeCommandDescription(name));
  command->prefix_command();
  command->set_help_flag();
  command->callback([name, &context] { handOff(context, name); });
}

void addCommands(CLI::App& app, Context& context) {
  addPlanCommand(app, context);
  addPlaceCommand(app, context);
  addRuntimeCommand("train", app, context);
  addValidateCommand(app, context);
  addCalibrateCommand(app, context);
  addReportCommand(app, context);
  addModelsCommand(app, context);
  addClustersCommand(app, context);
  addRuntimeCommand("config", app, context);
  addRuntimeCommand("bench", app, context);
}

}  // namespace paraxis::cli
