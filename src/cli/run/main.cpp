// paraxis-run: every command, with LibTorch and MPI. `paraxis` hands the commands that need
// them to this executable (cli/runtime.hpp); it can also be run directly.
#include <unistd.h>

#include <cstddef>
#include <string>

#include "cli/entry.hpp"
#include "cli/run/commands.hpp"
#include "cli/run/quick_calibration.hpp"
#include "cli/runtime.hpp"
#include "comm/convert.hpp"
#include "core/error.hpp"
#include "train/tensor_block_cache.hpp"

namespace {

class FullRuntime final : public paraxis::cli::Runtime {
 public:
  void configure(const paraxis::Knobs& knobs) const override {
    using namespace paraxis;
    // Freed tensor blocks stay with the process, as freed heap memory does (entry.cpp): up to
    // a quarter of the host's memory held free at once.
    if (knobs.getBool("keep_freed_memory")) {
      const auto hostBytes = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
      train::installTensorBlockCache(hostBytes / 4);
    }
    if (const std::string path = knobs.getString("wire_conversion_path"); path != "auto") {
      comm::chooseConvertPath(comm::convertPathNamed(path, "PARAXIS_WIRE_CONVERSION_PATH"));
    }
  }

  void addCommand(const std::string& name, CLI::App& app, paraxis::cli::Context& context) const override {
    using namespace paraxis::cli;
    if (name == "train") return addTrainCommand(app, context);
    if (name == "config") return addConfigCommand(app, context);
    if (name == "bench") return addBenchCommand(app, context);
    throw paraxis::Error("internal: '" + name + "' is not a command of paraxis-run");
  }

  void quickCalibration(const paraxis::cli::QuickCalibration& options, const CLI::App& command,
                        paraxis::cli::Context& context) const override {
    paraxis::cli::runQuickCalibration(options, command, context);
  }
};

}  // namespace

int main(int argc, char** argv) {
  static const FullRuntime runtime;
  return paraxis::cli::commandMain(argc, argv, &runtime);
}
