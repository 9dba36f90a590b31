#include "plan/strategy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "core/error.hpp"
#include "plan/estimate.hpp"

namespace paraxis::plan {

std::string Grid::str() const {
  std::vector<std::string> parts;
  auto add = [&](const char* name, int n) {
    if (n > 1) parts.push_back(fmt::format("{}={}", name, n));
  };
  add("data", data);
  add("pipeline", pipeline);
  add("place", place);
  add("channel", channel);
  add("filter", filter);
  add("d", depth);
  add("h", height);
  add("w", width);
  if (filterHead) parts.emplace_back("head=filter");
  return parts.empty() ? "1" : fmt::format("{}", fmt::join(parts, "x"));
}

Grid parseGrid(const std::string& text) {
  Grid g;
  const std::pair<const char*, int*> axes[] = {{"data", &g.data},     {"pipeline", &g.pipeline}, {"place", &g.place},
                                               {"channel", &g.channel}, {"filter", &g.filter},     {"d", &g.depth},
                                               {"h", &g.height},        {"w", &g.width}};
  if (text == "1") return g;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('x', start), text.size());
    const std::string part = text.substr(start, end - start);
    if (part == "head=filter" || part == "head=samples") {
      g.filterHead = part == "head=filter";
      start = end + 1;
      continue;
    }
    const std::size_t eq = part.find('=');
    int* axis = nullptr;
    for (const auto& [name, field] : axes) {
      if (eq != std::string::npos && part.substr(0, eq) == name) axis = field;
    }
    int value = 0;
    std::size_t used = 0;
    try {
      if (axis != nullptr) value = std::stoi(part.substr(eq + 1), &used);
    } catch (const std::exception&) {
      value = 0;
    }
    if (axis == nullptr || value < 1 || used != part.size() - eq - 1) {
      throw ConfigError(fmt::format("grid '{}': cannot read '{}' (expected axis=count joined by 'x', axes data, "
                                    "pipeline, place, channel, filter, d, h, w, and head=filter or head=samples; e.g. data=8xh=4)", text, part));
    }
    *axis = value;
    start = end + 1;
  }
  if (std::string problem = headProblem(g); !problem.empty()) throw ConfigError(fmt::format("grid '{}': {}", text, problem));
  return g;
}

std::string headProblem(const Grid& grid) {
  if (!grid.filterHead) return {};
  if (grid.spatial() == 1) return "head=filter splits the head over the spatial ranks, and this grid has no spatial axis";
  if (grid.filter > 1 || grid.channel > 1 || grid.pipeline > 1 || grid.place > 1) {
    return "head=filter goes with data and spatial axes only (not filter, channel, pipeline or place)";
  }
  return {};
}

std::string scheduleName(PipelineSchedule s) { return s == PipelineSchedule::kGPipe ? "gpipe" : "1f1b"; }

std::string Distribution::str() const {
  return replicas > 1 ? fmt::format("n{}xd{}xh{}xw{}xr{}", sample, depth, height, width, replicas)
                      : fmt::format("n{}xd{}xh{}xw{}", sample, depth, height, width);
}

std::string strategyNameOf(const Grid& grid) {
  std::vector<std::string> axes;
  if (grid.data > 1) axes.emplace_back("data");
  if (grid.pipeline > 1) axes.emplace_back("pipeline");
  if (grid.place > 1) axes.emplace_back("placement");
  if (grid.channel > 1) axes.emplace_back("channel");
  if (grid.filter > 1) axes.emplace_back("filter");
  if (grid.spatial() > 1) axes.emplace_back(grid.filterHead ? "spatial+filter-head" : "spatial");
  return axes.empty() ? "serial" : fmt::format("{}", fmt::join(axes, "+"));
}

std::string MemoryBreakdown::largest() const {
  const std::pair<double, const char*> parts[] = {
      {weights, "weights"},   {gradients, "gradients"}, {optimizer, "optimizer state"},
      {activations, "activations"}, {halo, "halo buffers"}, {fusion, "fusion buffer"},
      {pipelineInFlight, "in-flight micro-batches"}, {workspace, "workspace"}};
  const auto* best = &parts[0];
  for (const auto& p : parts) {
    if (p.first > best->first) best = &p;
  }
  return best->second;
}

}  // namespace paraxis::plan
