#include "calib/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>

#include "calib/coordinate_search.hpp"
#include "calib/json_file.hpp"
#include "calib/fit_parameters.hpp"
#include "core/counts.hpp"
#include "core/error.hpp"
#include "core/thread_slice.hpp"
#include "plan/estimator.hpp"
#include "plan/oracle.hpp"
#include "plan/planner.hpp"
#include "plan/strategy_json.hpp"

namespace paraxis::calib {

using plan::Grid;
using plan::parseGrid;
using plan::strategyFromJson;
using plan::strategyNames;
namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream fields(line);
  std::string cell;
  while (std::getline(fields, cell, ',')) cells.push_back(trim(cell));
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

// Seconds per epoch and per kind of time, as the estimator predicts them.
struct Predicted {
  double compute = 0, communication = 0, total = 0;
};

// The model's prepared layers per run, once per distinct model: they do not depend on the
// cluster, whose implementation factors the fit varies.
std::vector<std::shared_ptr<const plan::Oracle::Profiles>> profilesOf(const std::vector<PlanInputs>& inputs) {
  std::map<const graph::Model*, std::shared_ptr<const plan::Oracle::Profiles>> byModel;
  std::vector<std::shared_ptr<const plan::Oracle::Profiles>> out;
  for (const PlanInputs& in : inputs) {
    auto& shared = byModel[in.model];
    if (shared == nullptr) shared = plan::Oracle(in).profiles();
    out.push_back(shared);
  }
  return out;
}

Predicted predict(plan::Oracle& oracle, const MeasuredRun& run, Estimate* out) {
  const PlanInputs& in = oracle.inputs();
  if (!run.model.empty() && run.model != in.model->name()) {
    throw ConfigError(fmt::format("measured run '{}' ran model '{}', not '{}' (give --model {})", run.label, run.model,
                                  in.model->name(), run.model));
  }
  Estimate e = oracle.estimate(run.strategy, false);
  if (!e.feasible) {
    throw ConfigError(fmt::format("measured run '{}' (line {}): {}", run.label, run.line, e.infeasibleReason));
  }
  Predicted p;
  const double iterations = run.perIteration ? 1 : e.iterationsPerEpoch;
  p.total = e.time.iteration() * iterations;
  p.compute = e.time.compute() * iterations;
  p.communication = p.total - p.compute;
  if (out != nullptr) *out = std::move(e);
  return p;
}

using Factor = hw::ImplementationFactor;

double squaredLogError(double predicted, double measured) {
  const double r = std::log(std::max(predicted, 1e-12) / measured);
  return r * r;
}


// A train report's number at object[key]; `where` prefixes the key in the message.
double reportNumber(const nlohmann::json& object, const char* key, const std::string& where, const std::string& path) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_number()) {
    throw ConfigError(fmt::format("{}: key '{}{}': expected a number (is this a 'paraxis train --json' report?)", path,
                                  where, key));
  }
  return object.at(key).get<double>();
}

// A train report's `machine` object: where the run ran.
RunMachine readMachine(const nlohmann::json& m, const std::string& path) {
  const auto text = [&](const char* key) {
    return m.is_object() && m.contains(key) && m.at(key).is_string() ? m.at(key).get<std::string>() : std::string();
  };
  const auto count = [&](const char* key) {
    const double x = reportNumber(m, key, "machine.", path);
    if (!(x >= 1 && x < 1 << 30) || x != std::floor(x)) {
      throw ConfigError(fmt::format("{}: key 'machine.{}': expected a positive integer, found {:g}", path, key, x));
    }
    return static_cast<int>(x);
  };
  // Optional: reports before the speed probe do not have it.
  double probe = 0;
  if (m.contains("speed_probe_s")) {
    probe = reportNumber(m, "speed_probe_s", "machine.", path);
    if (!(probe > 0 && probe <= hw::Device::kMaxSpeedProbe)) {
      throw ConfigError(fmt::format("{}: key 'machine.speed_probe_s': expected seconds in (0, {:g}], found {:g}", path,
                                    hw::Device::kMaxSpeedProbe, probe));
    }
  }
  // Optional: reports before communication threads asked for a slice of their own do not have it.
  std::optional<double> slice;
  if (m.contains("comm_thread_slice_s")) {
    slice = reportNumber(m, "comm_thread_slice_s", "machine.", path);
    if (!(*slice >= 0 && *slice <= core::kLongestThreadSlice)) {
      throw ConfigError(fmt::format("{}: key 'machine.comm_thread_slice_s': expected seconds in [0, {:g}], found {:g}",
                                    path, core::kLongestThreadSlice, *slice));
    }
  }
  return {.device = text("device"),
          .host = text("host"),
          .hosts = count("hosts"),
          .ranksPerHost = count("ranks_per_host"),
          .coresPerHost = count("cores_per_host"),
          .speedProbe = probe,
          .commThreadSlice = slice};
}

// `paraxis train --json`: the strategy it ran and its measured times per iteration.
MeasuredRun readTrainReport(std::ifstream& file, const std::string& path) {
  const nlohmann::json d = parseJsonFile(file, path);
  auto number = [&](const nlohmann::json& object, const char* key, const std::string& where) {
    return reportNumber(object, key, where, path);
  };
  if (!d.is_object() || !d.contains("strategy") || !d.contains("model") || !d.at("model").is_string()) {
    throw ConfigError(fmt::format("{}: expected the keys 'model' and 'strategy' of a 'paraxis train --json' report", path));
  }
  MeasuredRun run;
  run.label = std::filesystem::path(path).stem().string();
  run.model = d.at("model").get<std::string>();
  run.modelSource = run.model;
  if (d.contains("model_source") && d.at("model_source").is_object()) {
    const nlohmann::json& source = d.at("model_source");
    run.modelSource = source.value("model", "");
    run.modelInput = source.value("input", "");
    run.modelChannels = source.value("channels", std::int64_t{0});
    run.modelClasses = source.value("classes", std::int64_t{0});
  }
  run.strategy = strategyFromJson(d.at("strategy"), path + ": strategy");
  if (d.contains("machine")) run.machine = readMachine(d.at("machine"), path);
  if (d.contains("breakdown_rank")) {
    const double rank = number(d, "breakdown_rank", "");
    if (rank < 0 || rank > 1e7 || rank != static_cast<int>(rank)) {
      throw ConfigError(fmt::format("{}: key 'breakdown_rank': expected a rank (a whole number >= 0), got {}", path, rank));
    }
    run.breakdownRank = static_cast<int>(rank);
  }
  run.perIteration = true;
  run.line = 1;
  const double measured = number(d, "measured_iterations", "");
  if (!(measured >= static_cast<double>(plan::kMinimumMeasuredIterations))) {
    throw ConfigError(fmt::format("{}: key 'measured_iterations': {:g}, fewer than {}: too few iterations were measured "
                                  "to compare (train longer)", path, measured, plan::kMinimumMeasuredIterations));
  }
  const double samplesPerSecond = number(d, "samples_per_second", "");
  if (!(samplesPerSecond > 0 && samplesPerSecond <= 1e12)) {
    throw ConfigError(fmt::format("{}: key 'samples_per_second': expected a rate in (0, 1e12], found {:g}", path,
                                  samplesPerSecond));
  }
  run.total = static_cast<double>(run.strategy.globalBatch) / samplesPerSecond;
  if (!d.contains("time")) throw ConfigError(fmt::format("{}: key 'time': expected the measured breakdown", path));
  plan::TimeBreakdown time = plan::timeBreakdownFromJson(d.at("time"), path + ": time");
  // Reports written before train used the oracle's breakdown named the backward pass whole.
  if (d.at("time").contains("backward")) time.backwardData = number(d.at("time"), "backward", "time.");
  run.compute = time.compute();
  run.communication = time.communication();
  if (run.strategy.grid.total() == 1) run.compute = run.communication = 0;  // one rank: only the total counts
  return run;
}


// One row of the measured-runs CSV, read against the header's columns; errors name the file,
// line and column.
class CsvRow {
 public:
  CsvRow(const std::string& path, int line, const std::vector<std::string>& cells,
         const std::map<std::string, std::size_t>& column)
      : path_(path), line_(line), cells_(cells), column_(column) {}

  MeasuredRun run() const {
    MeasuredRun run;
    run.line = line_;
    run.strategy.name = cell("strategy");
    const auto& names = strategyNames();
    if (std::find(names.begin(), names.end(), run.strategy.name) == names.end()) {
      fail("strategy", fmt::format("unknown strategy '{}' (expected one of: {})", run.strategy.name, fmt::join(names, ", ")));
    }
    run.label = cell("label").empty() ? run.strategy.name : cell("label");
    try {
      run.strategy.grid = parseGrid(cell("grid"));
    } catch (const ConfigError& e) {
      fail("grid", e.what());
    }
    run.strategy.globalBatch = globalBatch();
    const std::string overlap = cell("overlap");
    if (overlap == "no") {
      run.strategy.comm.overlap = false;
      run.strategy.comm.order = ReduceOrder::kFifo;
    } else if (!overlap.empty() && overlap != "yes") {
      fail("overlap", fmt::format("expected yes or no, found '{}'", overlap));
    }
    run.compute = seconds("compute", false);
    run.communication = seconds("communication", false);
    run.total = seconds("total", true);
    return run;
  }

 private:
  std::string cell(const char* name) const { return column_.contains(name) ? cells_[column_.at(name)] : std::string(); }

  [[noreturn]] void fail(const char* name, const std::string& what) const {
    throw ConfigError(fmt::format("{}:{}: column '{}': {}", path_, line_, name, what));
  }

  std::int64_t globalBatch() const {
    const std::string text = cell("global_batch");
    try {
      std::size_t used = 0;
      const std::int64_t batch = std::stoll(text, &used);
      if (used == text.size() && batch >= 1 && batch < kInputLimit) return batch;
    } catch (const std::exception&) {
    }
    fail("global_batch", fmt::format("expected a positive integer below 2^31, found '{}'", text));
  }

  double seconds(const char* name, bool required) const {
    const std::string text = cell(name);
    if (text.empty()) {
      if (required) fail(name, "expected seconds per epoch");
      return 0.0;
    }
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    // A year per epoch bounds the domain: inf and 1e308 would print as 300-digit errors.
    if (used != text.size() || !(value > 0 && value <= 3.2e7)) {
      fail(name, fmt::format("expected seconds per epoch in (0, 3.2e7], found '{}'", text));
    }
    return value;
  }

  const std::string& path_;
  int line_;
  const std::vector<std::string>& cells_;
  const std::map<std::string, std::size_t>& column_;
};

// The header line: every column known, the required ones present.
std::map<std::string, std::size_t> readCsvHeader(const std::vector<std::string>& cells, const std::string& path, int line) {
  const std::vector<std::string> known{"label", "strategy", "grid", "global_batch", "overlap",
                                       "compute", "communication", "total"};
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (std::find(known.begin(), known.end(), cells[i]) == known.end()) {
      throw ConfigError(fmt::format("{}:{}: unknown column '{}' (expected some of: {})", path, line, cells[i],
                                    fmt::join(known, ", ")));
    }
    column[cells[i]] = i;
  }
  for (const char* required : {"strategy", "grid", "global_batch", "total"}) {
    if (!column.contains(required)) {
      throw ConfigError(fmt::format("{}:{}: the header lacks the column '{}'", path, line, required));
    }
  }
  return column;
}

}  // namespace

std::vector<MeasuredRun> readMeasuredRuns(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw NotFoundError(fmt::format("{}: cannot read the measured runs", path));
  if (path.ends_with(".json")) return {readTrainReport(file, path)};
  std::map<std::string, std::size_t> column;
  std::vector<MeasuredRun> runs;
  std::string line;
  int number = 0;
  while (std::getline(file, line)) {
    ++number;
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    const std::vector<std::string> cells = splitCsv(line);
    if (column.empty()) {
      column = readCsvHeader(cells, path, number);
      continue;
    }
    if (cells.size() != column.size()) {
      throw ConfigError(fmt::format("{}:{}: {} cells; the header has {}", path, number, cells.size(), column.size()));
    }
    runs.push_back(CsvRow(path, number, cells, column).run());
  }
  if (runs.empty()) throw ConfigError(fmt::format("{}: no measured runs", path));
  return runs;
}

std::vector<RunComparison> compareRuns(const PlanInputs& in, const std::vector<MeasuredRun>& runs) {
  return compareRuns(std::vector<PlanInputs>(runs.size(), in), runs);
}

std::vector<RunComparison> compareRuns(const std::vector<PlanInputs>& inputs, const std::vector<MeasuredRun>& runs) {
  const std::vector<std::shared_ptr<const plan::Oracle::Profiles>> profiles = profilesOf(inputs);
  std::vector<RunComparison> rows;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const MeasuredRun& run = runs[i];
    RunComparison row;
    row.run = &run;
    plan::Oracle oracle(inputs[i], profiles[i]);
    const Predicted p = predict(oracle, run, &row.estimate);
    row.compute = p.compute;
    row.communication = p.communication;
    row.total = p.total;
    row.error = std::fabs(p.total - run.total) / run.total;
    rows.push_back(std::move(row));
  }
  return rows;
}

double meanAbsoluteError(const std::vector<RunComparison>& rows) {
  if (rows.empty()) return 0;
  double sum = 0;
  for (const RunComparison& row : rows) sum += row.error;
  return sum / static_cast<double>(rows.size());
}

ImplementationFit fitImplementation(const PlanInputs& inputs, const std::vector<MeasuredRun>& runs, FitKind kind) {
  return fitImplementation(std::vector<PlanInputs>(runs.size(), inputs), runs, kind);
}

ImplementationFit fitImplementation(const std::vector<PlanInputs>& inputs, const std::vector<MeasuredRun>& runs,
                                    FitKind kind) {
  hw::Cluster cluster = *inputs.front().cluster;
  // The factors start at 1; what was measured of the paths and the overlap stays.
  for (const Factor& f : hw::kImplementationFactors) cluster.implementation.*f.field = 1;
  std::vector<PlanInputs> in = inputs;
  for (PlanInputs& each : in) each.cluster = &cluster;
  const std::vector<std::shared_ptr<const plan::Oracle::Profiles>> profiles = profilesOf(in);

  ImplementationFit fit;
  std::vector<FitParameter> free = fitParameters(cluster, runs, kind);
  for (const FitParameter& p : free) fit.fitted.push_back(p.key);
  fit.errorBefore = meanAbsoluteError(compareRuns(in, runs));

  // The pull towards the starting figure: small beside a run's misfit, enough to settle a
  // parameter no run pins.
  constexpr double kPull = 1e-3;
  auto objective = [&] {
    double sum = 0;
    for (const FitParameter& p : free) {
      p.apply();
      sum += kPull * std::log(p.scale) * std::log(p.scale);
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const MeasuredRun& run = runs[i];
      plan::Oracle oracle(in[i], profiles[i]);  // the cluster changed: a fresh Oracle, the same model
      const Predicted p = predict(oracle, run, nullptr);
      // With overlap, how much communication a run "exposed" depends on its own accounting:
      // only a run that reduced after backward splits cleanly into compute and communication.
      if (run.compute > 0 && run.communication > 0 && !run.strategy.comm.overlap) {
        sum += squaredLogError(p.compute, run.compute) + squaredLogError(p.communication, run.communication);
      }
      sum += squaredLogError(p.total, run.total);
    }
    return sum;
  };

  // Coordinate descent over log(scale).
  double best = objective();
  for (int sweep = 0; sweep < 40; ++sweep) {
    const double before = best;
    for (FitParameter& p : free) best = minimiseCoordinate(p.scale, objective, sweep == 0 ? 16.0 : 1.0);
    if (before - best < 1e-10) break;
  }
  for (const FitParameter& p : free) p.apply();
  fit.implementation = cluster.implementation;
  fit.errorAfter = meanAbsoluteError(compareRuns(in, runs));
  return fit;
}

}  // namespace paraxis::calib
