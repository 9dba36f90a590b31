#pragma once
// The charts of `paraxis report` and `plan --plot`, each drawn from the JSON document a command
// prints with --json (docs/json-output.md), so that a report reads saved runs as well as fresh
// ones. Units on the charts: samples/s, hours, milliseconds, GiB, GB/s; docs/report.md says
// which JSON key each mark comes from.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/chart.hpp"

namespace paraxis::cli {

// The components of one iteration, in the order they stack (their sum is time.iteration).
const std::vector<std::string>& iterationComponents();

// plan --json: the fastest feasible estimate of each strategy at each GPU count.
LineChart planThroughputChart(const nlohmann::json& plan);
LineChart planTimeToTrainChart(const nlohmann::json& plan);
// At `gpus` (0: the largest count with the most feasible strategies), per strategy.
int planChartGpus(const nlohmann::json& plan, int requested);
BarChart planBreakdownChart(const nlohmann::json& plan, int gpus);
BarChart planMemoryChart(const nlohmann::json& plan, int gpus);

// validate --json: predicted against measured totals, and each run's compute and communication.
LineChart validateScatterChart(const nlohmann::json& validate);
BarChart validateComponentsChart(const nlohmann::json& validate);

// bench comm --json: bus bandwidth against size, one chart per operation (out of place).
std::vector<LineChart> busBandwidthCharts(const nlohmann::json& bench);

// train --json: the measured iteration, and test accuracy by epoch (none without epochs).
BarChart trainBreakdownChart(const nlohmann::json& train, const std::string& label);
std::vector<LineChart> trainAccuracyCharts(const nlohmann::json& train, const std::string& label);

}  // namespace paraxis::cli
