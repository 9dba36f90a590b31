// paraxis models            list the zoo
// paraxis models show X     per-layer table of a zoo model or a YAML model file
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <iostream>

#include "cli/context.hpp"
#include "cli/json_output.hpp"
#include "cli/model_report.hpp"
#include "cli/model_source.hpp"
#include "cli/ranges.hpp"
#include "core/error.hpp"
#include "core/table.hpp"
#include "core/units.hpp"
#include "graph/yaml_loader.hpp"
#include "graph/zoo/zoo.hpp"

namespace paraxis::cli {
namespace {

struct ShowOptions : ModelSource {
  std::int64_t batch = 1;
  bool json = false;
};

void listModels(bool json, Context& context) {
  if (json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const graph::ZooEntry& entry : graph::zooEntries()) {
      const graph::Model model = entry.build(entry.defaultInput, entry.defaultClasses);
      const graph::ModelTotals t = model.totals();
      nlohmann::json input = {entry.defaultInput.channels};
      for (auto e : entry.defaultInput.spatial) input.push_back(e);
      rows.push_back({{"name", entry.name}, {"description", entry.description}, {"input", input},
                      {"classes", entry.defaultClasses}, {"params", t.params}, {"forward_flops", t.forwardFlops}});
    }
    printJson({{"models", rows}}, context);
    return;
  }
  Table table;
  table.addColumn("model");
  table.addColumn("input", Table::Align::kRight);
  table.addColumn("params", Table::Align::kRight);
  table.addColumn("fwd FLOPs/sample", Table::Align::kRight);
  table.addColumn("description");
  for (const graph::ZooEntry& entry : graph::zooEntries()) {
    const graph::Model model = entry.build(entry.defaultInput, entry.defaultClasses);
    const graph::ModelTotals t = model.totals();
    table.addRow({entry.name, entry.defaultInput.str(), units::formatCount(static_cast<double>(t.params)),
                  units::formatFlops(t.forwardFlops), entry.description});
  }
  table.print(context.out);
  context.out << "\nShow one with 'paraxis models show NAME' (or a model .yaml file; see docs/model-format.md).\n";
}

}  // namespace

void addModelsCommand(CLI::App& app, Context& context) {
  CLI::App* models = app.add_subcommand("models", "List the model zoo, or show one model layer by layer");
  auto listJson = std::make_shared<bool>(false);
  models->add_flag("--json", *listJson, "print the zoo as JSON (keys in docs/json-output.md)");
  models->callback([models, listJson, &context] {
    if (models->get_subcommands().empty()) listModels(*listJson, context);
  });
  auto options = std::make_shared<ShowOptions>();
  CLI::App* show = models->add_subcommand("show", "Per-layer shapes, parameters, FLOPs and activation bytes");
  show->add_option("model", options->model, "zoo name (see 'paraxis models') or a model .yaml file")
      ->required();
  addModelShapeOptions(*show, *options);
  show->add_option("--batch", options->batch, "samples per step for the batch totals")
      ->check(positive());
  show->add_flag("--json", options->json, "print JSON (keys in docs/json-output.md)");
  show->callback([options, &context] {
    const graph::Model model = loadModel(*options);
    if (options->json) {
      printJson(modelJson(model, options->batch), context);
    } else {
      printModelTable(model, options->batch, context.out);
    }
  });
}

}  // namespace paraxis::cli
