#include "cli/report_charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"

namespace paraxis::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

using Json = nlohmann::json;

bool feasible(const Json& e) { return e.at("feasible").get<bool>() && e.at("fits").get<bool>(); }
std::string strategyOf(const Json& e) { return e.at("strategy").at("name").get<std::string>(); }

// Per strategy (in order of first appearance), per GPU count: the feasible estimate that
// `better` prefers.
template <typename Better>
std::vector<std::pair<std::string, std::map<int, const Json*>>> bestEstimates(const Json& plan, Better better) {
  std::vector<std::pair<std::string, std::map<int, const Json*>>> out;
  for (const Json& e : plan.at("estimates")) {
    if (!feasible(e)) continue;
    const std::string name = strategyOf(e);
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& s) { return s.first == name; });
    if (it == out.end()) it = out.insert(out.end(), {name, {}});
    const Json*& slot = it->second[e.at("gpus").get<int>()];
    if (slot == nullptr || better(e, *slot)) slot = &e;
  }
  return out;
}

bool fasterStep(const Json& a, const Json& b) {
  return a.at("samples_per_second").get<double>() > b.at("samples_per_second").get<double>();
}

LineChart perStrategyChart(const Json& plan, const std::string& title, const std::string& yLabel,
                           bool (*better)(const Json&, const Json&), double (*value)(const Json&)) {
  LineChart c{.title = title, .x = {"GPUs", true}, .y = {yLabel, true}, .series = {}};
  for (const auto& [name, byGpus] : bestEstimates(plan, better)) {
    ChartSeries s{.name = name, .points = {}};
    for (const auto& [gpus, e] : byGpus) s.points.emplace_back(gpus, value(*e));
    c.series.push_back(std::move(s));
  }
  return c;
}

// The estimate of each strategy at `gpus` with the most samples/s.
std::vector<std::pair<std::string, const Json*>> atGpus(const Json& plan, int gpus) {
  std::vector<std::pair<std::string, const Json*>> out;
  for (const auto& [name, byGpus] : bestEstimates(plan, fasterStep)) {
    if (const auto it = byGpus.find(gpus); it != byGpus.end()) out.emplace_back(name, it->second);
  }
  return out;
}

double number(const Json& object, const std::string& key) { return object.contains(key) ? object.at(key).get<double>() : 0.0; }

// Stacked bars of `keys` of `section` (times in ms or bytes in GiB), series with no value left out.
BarChart componentBars(const std::vector<std::pair<std::string, const Json*>>& rows, const std::string& section,
                       const std::vector<std::string>& keys, double scale) {
  BarChart c;
  for (const auto& [category, row] : rows) c.categories.push_back(category);
  for (const std::string& key : keys) {
    BarSeries s{.name = key, .values = {}};
    bool any = false;
    for (const auto& row : rows) {
      s.values.push_back(number(row.second->at(section), key) * scale);
      any = any || s.values.back() > 0;
    }
    if (any) c.series.push_back(std::move(s));
  }
  return c;
}

}  // namespace

const std::vector<std::string>& iterationComponents() {
  static const std::vector<std::string> keys{"forward",   "backward_data", "backward_weight",   "update",
                                             "gradient_exposed", "halo",   "shuffle",           "layer_collectives",
                                             "pipeline_p2p", "bubble",     "data_loading",      "negotiation"};
  return keys;
}

LineChart planThroughputChart(const Json& plan) {
  return perStrategyChart(plan, fmt::format("{} on {}: samples/s by GPUs", plan.at("model").get<std::string>(),
                                            plan.at("cluster").get<std::string>()),
                          "samples/s (the fastest grid of each strategy)", fasterStep,
                          [](const Json& e) { return e.at("samples_per_second").get<double>(); });
}

LineChart planTimeToTrainChart(const Json& plan) {
  return perStrategyChart(
      plan, fmt::format("{} on {}: time to train by GPUs", plan.at("model").get<std::string>(), plan.at("cluster").get<std::string>()),
      "hours to the target accuracy",
      [](const Json& a, const Json& b) {
        return a.at("time_to_train_seconds").get<double>() < b.at("time_to_train_seconds").get<double>();
      },
      [](const Json& e) { return e.at("time_to_train_seconds").get<double>() / 3600; });
}

int planChartGpus(const Json& plan, int requested) {
  std::map<int, int> strategies;  // GPU count -> strategies feasible there
  for (const auto& [name, byGpus] : bestEstimates(plan, fasterStep)) {
    for (const auto& entry : byGpus) ++strategies[entry.first];
  }
  if (strategies.empty()) throw ConfigError("the plan has no feasible estimate to chart");
  if (requested > 0) {
    if (strategies.count(requested) == 0) {
      std::vector<int> counts;
      for (const auto& entry : strategies) counts.push_back(entry.first);
      throw ConfigError(fmt::format("--gpus {}: the plan has no feasible estimate at {} GPUs (it has {})", requested,
                                    requested, fmt::join(counts, ", ")));
    }
    return requested;
  }
  int best = strategies.begin()->first;
  for (const auto& [gpus, count] : strategies) {
    if (count >= strategies.at(best)) best = gpus;
  }
  return best;
}

BarChart planBreakdownChart(const Json& plan, int gpus) {
  BarChart c = componentBars(atGpus(plan, gpus), "time", iterationComponents(), 1e3);
  c.title = fmt::format("One iteration on {} GPUs, by component", gpus);
  c.yLabel = "milliseconds per iteration";
  return c;
}

BarChart planMemoryChart(const Json& plan, int gpus) {
  const auto rows = atGpus(plan, gpus);
  BarChart c = componentBars(rows, "memory",
                             {"weights", "gradients", "optimizer", "activations", "workspace", "fusion", "halo", "pipeline_in_flight"},
                             1 / kGiB);
  c.title = fmt::format("Memory per GPU on {} GPUs", gpus);
  c.yLabel = "GiB per GPU";
  if (!rows.empty()) {
    c.limit = number(rows.front().second->at("memory"), "capacity") / kGiB;
    c.limitLabel = fmt::format("capacity {:.3g} GiB", *c.limit);
  }
  return c;
}

LineChart validateScatterChart(const Json& validate) {
  LineChart c{.title = "Predicted against measured", .x = {"measured (s)", true}, .y = {"predicted (s)", true},
              .series = {}, .markersOnly = true, .diagonal = true};
  for (const Json& run : validate.at("runs")) {
    const double measured = run.at("measured").at("total").get<double>();
    if (measured <= 0) continue;
    const std::string name = run.at("strategy").get<std::string>();
    auto it = std::find_if(c.series.begin(), c.series.end(), [&](const ChartSeries& s) { return s.name == name; });
    if (it == c.series.end()) it = c.series.insert(c.series.end(), ChartSeries{.name = name, .points = {}});
    it->points.emplace_back(measured, run.at("predicted").at("total").get<double>());
  }
  return c;
}

BarChart validateComponentsChart(const Json& validate) {
  BarChart c{.title = "Compute and communication, measured and predicted", .yLabel = "seconds", .categories = {},
             .series = {{"measured compute", {}}, {"predicted compute", {}}, {"measured communication", {}},
                        {"predicted communication", {}}},
             .stacked = false, .limit = std::nullopt, .limitLabel = ""};
  for (const Json& run : validate.at("runs")) {
    c.categories.push_back(run.at("label").get<std::string>());
    const Json& m = run.at("measured");
    const Json& p = run.at("predicted");
    c.series[0].values.push_back(m.at("compute").get<double>());
    c.series[1].values.push_back(p.at("compute").get<double>());
    c.series[2].values.push_back(m.at("communication").get<double>());
    c.series[3].values.push_back(p.at("communication").get<double>());
  }
  return c;
}

std::vector<LineChart> busBandwidthCharts(const Json& bench) {
  std::vector<LineChart> charts;
  for (const Json& row : bench.at("rows")) {
    const std::string op = row.at("operation").get<std::string>();
    auto chart = std::find_if(charts.begin(), charts.end(), [&](const LineChart& c) { return c.title.starts_with(op + ":"); });
    if (chart == charts.end()) {
      chart = charts.insert(charts.end(), LineChart{.title = fmt::format("{}: bus bandwidth on {} ranks", op, bench.at("ranks").get<int>()),
                                                    .x = {"message size (bytes)", true}, .y = {"busbw (GB/s)", false},
                                                    .series = {}});
    }
    const std::string algorithm = row.at("algorithm").get<std::string>();
    auto s = std::find_if(chart->series.begin(), chart->series.end(), [&](const ChartSeries& x) { return x.name == algorithm; });
    if (s == chart->series.end()) s = chart->series.insert(chart->series.end(), ChartSeries{.name = algorithm, .points = {}});
    s->points.emplace_back(row.at("bytes").get<double>(), row.at("busbw_bytes_per_s").get<double>() / 1e9);
  }
  return charts;
}

BarChart trainBreakdownChart(const Json& train, const std::string& label) {
  BarChart c = componentBars({{label, &train}}, "time", iterationComponents(), 1e3);
  c.title = fmt::format("{} ({} on {} ranks): one measured iteration", train.at("model").get<std::string>(),
                        train.at("strategy").at("name").get<std::string>(), train.at("ranks").get<int>());
  c.yLabel = "milliseconds per iteration";
  return c;
}

std::vector<LineChart> trainAccuracyCharts(const Json& train, const std::string& label) {
  LineChart c{.title = fmt::format("{}: test accuracy by epoch", train.at("model").get<std::string>()),
              .x = {"epoch", false}, .y = {"test accuracy (%)", false}, .series = {{label, {}}}};
  for (const Json& e : train.at("epochs")) {
    c.series[0].points.emplace_back(e.at("epoch").get<double>(), e.at("test_accuracy").get<double>() * 100);
  }
  if (c.series[0].points.empty()) return {};
  return {c};
}

}  // namespace paraxis::cli
