// paraxis config: every run-time knob with its value and where the value came from.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/context.hpp"
#include "cli/run/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/runtime.hpp"
#include "core/table.hpp"
#include "train/torch_runtime.hpp"

namespace paraxis::cli {

void addConfigCommand(CLI::App& app, Context& context) {
  auto json = std::make_shared<bool>(false);
  CLI::App* config = app.add_subcommand("config", runtimeCommandDescription("config"));
  config->add_flag("--json", *json, "print JSON");
  config->callback([json, &context] {
    // Applies the threads knob the way `train` will, so the listing shows its effect.
    const int threads = train::configureTorchThreads(static_cast<int>(context.knobs.getInt("threads")), 1);
    const train::TorchRuntimeInfo torch = train::torchRuntimeInfo();
    if (*json) {
      nlohmann::json knobs = nlohmann::json::array();
      for (const auto& e : context.knobs.entries()) {
        knobs.push_back({{"name", e.spec.name}, {"type", knobTypeName(e.spec.type)}, {"value", e.value},
                         {"default", e.spec.defaultValue}, {"source", e.source}, {"help", e.spec.help}});
      }
      printJson({{"knobs", knobs}, {"torch", {{"version", torch.version}, {"mkldnn", torch.mkldnn}, {"intra_op_threads", threads}}}}, context);
      return;
    }
    Table table;
    table.addColumn("knob");
    table.addColumn("type");
    table.addColumn("value");
    table.addColumn("source");
    table.addColumn("help");
    for (const auto& e : context.knobs.entries()) {
      table.addRow({e.spec.name, knobTypeName(e.spec.type), e.value, e.source, e.spec.help});
    }
    table.print(context.out);
    context.out << fmt::format("\nSet a knob with the environment variable PARAXIS_<NAME>, e.g. {}=4.\n",
                               knobVariable("threads"));
    context.out << fmt::format("LibTorch {} (oneDNN {}), {} intra-op thread(s) for a single rank\n",
                               torch.version, torch.mkldnn ? "yes" : "no", torch.intraOpThreads);
  });
}


}  // namespace paraxis::cli
