#include "cli/model_report.hpp"

#include <fmt/format.h>

#include <ostream>

#include "core/table.hpp"
#include "core/units.hpp"

namespace paraxis::cli {
namespace {

using graph::Layer;
using graph::LayerKind;

std::string inputNames(const graph::Model& model, const Layer& layer, int index) {
  // The previous layer is implied; name inputs only where the graph branches or joins.
  if (layer.inputs.size() == 1 && layer.inputs.front() == index - 1) return "";
  std::vector<std::string> names;
  for (int input : layer.inputs) names.push_back(model.layer(input).name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string haloText(const Layer& layer) {
  bool any = false;
  for (auto h : layer.counts.halo) any = any || h > 0;
  return any ? fmt::format("{}", fmt::join(layer.counts.halo, "x")) : "";
}

nlohmann::json attrsJson(const Layer& layer) {
  using nlohmann::json;
  return std::visit(
      [](const auto& a) -> json {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, graph::ConvAttrs>) {
          return {{"filters", a.filters},   {"kernel", a.kernel},   {"stride", a.stride},
                  {"padding", a.padding},   {"dilation", a.dilation}, {"output_padding", a.outputPadding},
                  {"groups", a.groups},     {"bias", a.bias}};
        } else if constexpr (std::is_same_v<T, graph::PoolAttrs>) {
          return {{"kernel", a.kernel}, {"stride", a.stride}, {"padding", a.padding}, {"ceil_mode", a.ceilMode}};
        } else if constexpr (std::is_same_v<T, graph::AdaptivePoolAttrs>) {
          return {{"output", a.output}};
        } else if constexpr (std::is_same_v<T, graph::BatchNormAttrs>) {
          return {{"eps", a.eps}, {"momentum", a.momentum}};
        } else if constexpr (std::is_same_v<T, graph::ActivationAttrs>) {
          return {{"slope", a.slope}};
        } else if constexpr (std::is_same_v<T, graph::FcAttrs>) {
          return {{"outputs", a.outputs}, {"bias", a.bias}};
        } else if constexpr (std::is_same_v<T, graph::DropoutAttrs>) {
          return {{"p", a.probability}};
        } else {
          return json::object();
        }
      },
      layer.attrs);
}

nlohmann::json shapeJson(const graph::TensorShape& shape) {
  nlohmann::json dims = nlohmann::json::array({shape.channels});
  for (auto extent : shape.spatial) dims.push_back(extent);
  return dims;
}

}  // namespace

void printModelTable(const graph::Model& model, std::int64_t batch, std::ostream& out) {
  Table table;
  table.addColumn("#", Table::Align::kRight);
  table.addColumn("layer");
  table.addColumn("kind");
  table.addColumn("inputs");
  table.addColumn("output", Table::Align::kRight);
  table.addColumn("params", Table::Align::kRight);
  table.addColumn("fwd FLOPs", Table::Align::kRight);
  table.addColumn("activations", Table::Align::kRight);
  table.addColumn("halo", Table::Align::kRight);
  for (int i = 0; i < model.size(); ++i) {
    const Layer& layer = model.layer(i);
    table.addRow({std::to_string(i), layer.name, graph::kindName(layer), inputNames(model, layer, i),
                  layer.output.str(), units::formatCount(static_cast<double>(layer.counts.params)),
                  units::formatFlops(layer.counts.forwardFlops),
                  units::formatBytes(static_cast<double>(layer.counts.activationBytes)), haloText(layer)});
  }
  const graph::ModelTotals t = model.totals();
  table.addRule();
  table.addRow({"", "total", "", "", "", units::formatCount(static_cast<double>(t.params)),
                units::formatFlops(t.forwardFlops),
                units::formatBytes(static_cast<double>(t.activationBytes)), ""});
  out << fmt::format("{}: {} layers, input {}, {} bytes per element; counts per sample\n\n",
                     model.name(), model.size(), model.inputShape().str(), model.bytesPerElement());
  table.print(out);
  const double b = static_cast<double>(batch);
  const double backward = t.backwardDataFlops + t.backwardWeightFlops;
  out << fmt::format(
      "\nparameters {} ({} of weights)\n"
      "per sample: forward {}, backward {} (data {}, weights {}), activations {}\n",
      units::formatCount(static_cast<double>(t.params)),
      units::formatBytes(static_cast<double>(t.params * model.bytesPerElement())),
      units::formatFlops(t.forwardFlops), units::formatFlops(backward),
      units::formatFlops(t.backwardDataFlops), units::formatFlops(t.backwardWeightFlops),
      units::formatBytes(static_cast<double>(t.activationBytes)));
  out << fmt::format("batch {}: one training step {}, activations kept for backward {}\n", batch,
                     units::formatFlops(b * (t.forwardFlops + backward)),
                     units::formatBytes(b * static_cast<double>(t.activationBytes)));
}

nlohmann::json modelJson(const graph::Model& model, std::int64_t batch) {
  using nlohmann::json;
  json layers = json::array();
  for (int i = 0; i < model.size(); ++i) {
    const Layer& layer = model.layer(i);
    json inputs = json::array();
    for (int input : layer.inputs) inputs.push_back(model.layer(input).name);
    layers.push_back({{"index", i},
                      {"name", layer.name},
                      {"kind", graph::kindName(layer)},
                      {"inputs", inputs},
                      {"attrs", attrsJson(layer)},
                      {"output", shapeJson(layer.output)},
                      {"params", layer.counts.params},
                      {"forward_flops", layer.counts.forwardFlops},
                      {"backward_data_flops", layer.counts.backwardDataFlops},
                      {"backward_weight_flops", layer.counts.backwardWeightFlops},
                      {"activation_bytes", layer.counts.activationBytes},
                      {"halo", layer.counts.halo}});
  }
  const graph::ModelTotals t = model.totals();
  return {{"model", model.name()},
          {"input", shapeJson(model.inputShape())},
          {"bytes_per_element", model.bytesPerElement()},
          {"batch", batch},
          {"layers", layers},
          {"totals",
           {{"params", t.params},
            {"forward_flops", t.forwardFlops},
            {"backward_data_flops", t.backwardDataFlops},
            {"backward_weight_flops", t.backwardWeightFlops},
            {"activation_bytes", t.activationBytes}}}};
}

}  // namespace paraxis::cli
