// paraxis validate: hold the oracle's predictions against measured runs.
// paraxis calibrate: fit the cluster's implementation factors to measured runs and write the
// calibrated cluster file (plan/calibration.hpp; formats in docs/measured-format.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <ostream>
#include <utility>
#include <vector>

#include <unistd.h>

#include "calib/calibration.hpp"
#include "calib/fit_parameters.hpp"
#include "calib/machine_check.hpp"
#include "cli/context.hpp"
#include "cli/json_output.hpp"
#include "cli/layer_comparison.hpp"
#include "cli/model_source.hpp"
#include "cli/plan_inputs.hpp"
#include "cli/runtime.hpp"
#include "cli/ranges.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/table.hpp"
#include "core/units.hpp"
#include "hw/cluster_yaml.hpp"
#include "hw/presets.hpp"
#include "plan/planner.hpp"
#include "plan/strategy_json.hpp"

namespace paraxis::cli {
namespace {

struct Options : ModelSource {
  Options() { model = "resnet50"; }
  std::vector<std::string> measured;
  std::string cluster = "abci";
  double datasetSize = 0;
  std::string dtype = "fp32";
  std::string fitGpus;  // calibrate: the runs at these GPU counts are fitted, the rest held out
  std::string out;      // calibrate: the calibrated cluster file
  std::string fit = "factors";  // calibrate: a name in kFitKinds
  bool json = false;
  bool quick = false;   // calibrate --quick: micro-benchmarks instead of runs
  std::vector<std::string> quickModels;  // --quick-models: whose layers --quick times
  std::string saveCalls;                 // --save-calls: where --quick writes its layer timings
  double steadyWithin = 100 * kSteadySpread;  // --steady-within (%)
  bool atRunSpeed = false;  // validate: each run predicted at the speed its probe measured
  std::string trace;        // validate: the one run's train --trace, held against it layer by layer
  CLI::Option* modelOption = nullptr;
  CLI::Option* clusterOption = nullptr;
};

std::vector<calib::MeasuredRun> readAll(const std::vector<std::string>& paths) {
  std::vector<calib::MeasuredRun> runs;
  for (const std::string& path : paths) {
    std::vector<calib::MeasuredRun> more = calib::readMeasuredRuns(path);
    runs.insert(runs.end(), more.begin(), more.end());
  }
  return runs;
}

// The models the runs ran, each built once: the one a train report names and how it was built,
// unless --model says otherwise; --model (default resnet50) for CSV runs.
class RunModels {
 public:
  RunModels(const Options& o, const std::vector<calib::MeasuredRun>& runs) {
    const bool given = o.modelOption != nullptr && o.modelOption->count() > 0;
    for (const calib::MeasuredRun& run : runs) {
      ModelSource source = o;
      if (!given && !run.modelSource.empty()) {
        source = {run.modelSource, run.modelInput, run.modelChannels, run.modelClasses};
      }
      const std::string key = fmt::format("{}|{}|{}|{}", source.model, source.input, source.channels, source.classes);
      auto it = models_.find(key);
      if (it == models_.end()) it = models_.emplace(key, loadModel(source)).first;
      perRun_.push_back(&it->second);
    }
  }

  std::vector<plan::PlanInputs> inputs(const Options& o, const hw::Cluster& cluster) const {
    std::vector<plan::PlanInputs> in;
    for (const graph::Model* model : perRun_) in.push_back(planInputs(*model, cluster, o.dtype, o.datasetSize));
    return in;
  }

  std::string names() const {
    std::vector<std::string> names;
    for (const auto& [key, model] : models_) {
      if (std::find(names.begin(), names.end(), model.name()) == names.end()) names.push_back(model.name());
    }
    return fmt::format("{}", fmt::join(names, ", "));
  }

 private:
  std::map<std::string, graph::Model> models_;
  std::vector<const graph::Model*> perRun_;
};

// Fixed units, no exponents: a per-iteration run in ms, a per-epoch run in s.
std::string timeCell(double s, bool perIteration) {
  if (s <= 0) return "-";
  return perIteration ? fmt::format("{:.2f} ms", s * 1e3) : fmt::format("{:.1f} s", s);
}

std::string thisHost() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

// A run's speed probe against the cluster's: "1.23x" slower, "0.87x" faster, "-" unknown.
std::string slowdownCell(const calib::RunComparison& r, const hw::Device& device) {
  const double slowdown = r.run->machine.slowdownAgainst(device);
  return slowdown > 0 ? fmt::format("{:.2f}x", slowdown) : "-";
}

// `device`: the cluster's, whose speed probe the runs' are held against (a "slower" column
// where any run has one).
void printComparison(const std::vector<calib::RunComparison>& rows, const std::vector<bool>& heldOut,
                     const hw::Device& device, std::ostream& out) {
  const bool probed = std::any_of(rows.begin(), rows.end(), [&](const calib::RunComparison& r) {
    return r.run->machine.slowdownAgainst(device) > 0;
  });
  Table t;
  t.addColumn("run");
  t.addColumn("line", Table::Align::kRight);
  t.addColumn("strategy");
  t.addColumn("grid");
  t.addColumn("GPUs", Table::Align::kRight);
  t.addColumn("batch", Table::Align::kRight);
  for (const char* h : {"measured comp", "comm", "total", "predicted comp", "comm", "total", "error"}) {
    t.addColumn(h, Table::Align::kRight);
  }
  if (probed) t.addColumn("slower", Table::Align::kRight);
  if (!heldOut.empty()) t.addColumn("");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const calib::RunComparison& r = rows[i];
    const plan::Strategy& s = r.run->strategy;
    const bool it = r.run->perIteration;
    std::vector<std::string> cells{r.run->label, std::to_string(r.run->line), s.name, s.grid.str(),
                                   std::to_string(s.grid.total()), std::to_string(s.globalBatch),
                                   timeCell(r.run->compute, it), timeCell(r.run->communication, it),
                                   timeCell(r.run->total, it), timeCell(r.compute, it), timeCell(r.communication, it),
                                   timeCell(r.total, it), fmt::format("{:.1f}%", r.error * 100)};
    if (probed) cells.push_back(slowdownCell(r, device));
    if (!heldOut.empty()) cells.push_back(heldOut[i] ? "held out" : "fitted");
    t.addRow(std::move(cells));
  }
  t.print(out);
}

nlohmann::json comparisonJson(const std::vector<calib::RunComparison>& rows, const std::vector<bool>& heldOut,
                              const hw::Device& device) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const calib::RunComparison& r = rows[i];
    const plan::Strategy& s = r.run->strategy;
    nlohmann::json row = {
        {"label", r.run->label},
        {"line", r.run->line},
        {"strategy", s.name},
        {"grid", s.grid.str()},
        {"gpus", s.grid.total()},
        {"global_batch", s.globalBatch},
        {"per_iteration", r.run->perIteration},
        {"measured", {{"compute", r.run->compute}, {"communication", r.run->communication}, {"total", r.run->total}}},
        {"predicted", {{"compute", r.compute}, {"communication", r.communication}, {"total", r.total},
                       {"time", plan::timeBreakdownJson(r.estimate.time)}}},
        {"error", r.error}};
    const double slowdown = r.run->machine.slowdownAgainst(device);
    row["slowdown"] = slowdown > 0 ? nlohmann::json(slowdown) : nlohmann::json(nullptr);
    if (!heldOut.empty()) row["held_out"] = static_cast<bool>(heldOut[i]);
    out.push_back(std::move(row));
  }
  return out;
}

// validate --at-run-speed: per run, the cluster with its device slowed by the run's speed
// probe against the cluster's, and the inputs pointed at it.
std::deque<hw::Cluster> atRunSpeed(const hw::Cluster& cluster, const std::vector<calib::MeasuredRun>& runs,
                                   std::vector<plan::PlanInputs>& in) {
  if (cluster.device.speedProbe <= 0) {
    throw ConfigError(fmt::format("--at-run-speed: cluster '{}' has no speed probe (device.speed_probe: calibrate "
                                  "--quick and bench compute --out record it)", cluster.name));
  }
  std::deque<hw::Cluster> clusters;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double slowdown = runs[i].machine.slowdownAgainst(cluster.device);
    if (slowdown <= 0) {
      throw ConfigError(fmt::format("--at-run-speed: run '{}' has no speed probe (its report has no machine.speed_probe_s)",
                                    runs[i].label));
    }
    hw::Cluster& c = clusters.emplace_back(cluster);
    c.device = cluster.device.slowedBy(slowdown);
    in[i].cluster = &c;
  }
  return clusters;
}

// validate --trace: the one run's trace, read once for its layers and its exposed gradient time.
calib::RankTraces traceOfTheRun(const Options& o, const std::vector<calib::MeasuredRun>& runs) {
  if (o.trace.empty()) return {};
  if (runs.size() != 1 || !runs.front().perIteration) {
    throw ConfigError(fmt::format("--trace: give one --measured train report, the run that wrote the trace ({} given)",
                                  runs.size() == 1 ? "a CSV row" : fmt::format("{} runs", runs.size())));
  }
  return calib::readRankTraces(o.trace);
}

void runValidate(const Options& o, Context& context) {
  const std::vector<calib::MeasuredRun> runs = readAll(o.measured);
  const RunModels models(o, runs);
  const hw::Cluster cluster = hw::loadCluster(o.cluster);
  std::vector<plan::PlanInputs> in = models.inputs(o, cluster);
  const std::deque<hw::Cluster> slowed = o.atRunSpeed ? atRunSpeed(cluster, runs, in) : std::deque<hw::Cluster>();
  const std::vector<calib::RunComparison> rows = calib::compareRuns(in, runs);
  const std::vector<std::string> warnings = calib::machineWarnings(cluster, runs, thisHost());
  const calib::RankTraces trace = traceOfTheRun(o, runs);
  const std::vector<LayerComparison> layers = trace.empty()
                                                  ? std::vector<LayerComparison>{}
                                                  : compareLayers(in.front(), runs.front(), trace, o.trace);
  const calib::ExposedGradient exposed = calib::exposedGradient(trace);
  const plan::ExposedGradientParts predictedExposed =
      rows.empty() ? plan::ExposedGradientParts{} : rows.front().estimate.exposedParts;
  if (o.json) {
    nlohmann::json j{{"models", models.names()}, {"cluster", cluster.name}, {"implementation", cluster.implementation.source},
                     {"at_run_speed", o.atRunSpeed}, {"warnings", warnings}, {"runs", comparisonJson(rows, {}, cluster.device)},
                     {"mean_absolute_error", calib::meanAbsoluteError(rows)}};
    if (!layers.empty()) {
      j["layers"] = layerComparisonJson(layers);
      j["layer_kinds"] = kindSumsJson(sumByKind(layers));
      if (exposed.steps > 0) j["exposed_gradient"] = exposedGradientJson(exposed, predictedExposed);
    }
    printJson(j, context);
    return;
  }
  std::ostream& out = context.out;
  const bool perIteration = std::any_of(runs.begin(), runs.end(), [](const calib::MeasuredRun& r) { return r.perIteration; });
  const bool perEpoch = std::any_of(runs.begin(), runs.end(), [](const calib::MeasuredRun& r) { return !r.perIteration; });
  out << fmt::format("{} on {} against {} ({} run{}); times per {}\n", models.names(), cluster.name,
                     fmt::join(o.measured, ", "), runs.size(), runs.size() == 1 ? "" : "s",
                     perEpoch ? fmt::format("epoch of {:.0f} samples{}", in.front().datasetSamples,
                                            perIteration ? " (train reports: per iteration)" : "")
                              : "iteration");
  for (const std::string& w : warnings) out << "warning: " << w << '\n';
  if (o.atRunSpeed) {
    out << "predicted at each run's own speed (--at-run-speed: the device slowed by the run's speed probe against "
           "the cluster's): not a prediction made before the run, a measure of what the machine's drift costs\n";
  }
  if (!cluster.implementation.isIdentity()) {
    out << fmt::format("implementation factors: {}\n",
                       cluster.implementation.source.empty() ? "(no source given)" : cluster.implementation.source);
  }
  out << '\n';
  printComparison(rows, {}, cluster.device, out);
  out << fmt::format("\nmean absolute error on the totals: {:.1f}%\n", calib::meanAbsoluteError(rows) * 100);
  if (!layers.empty()) printLayerComparison(layers, o.trace, out);
  printExposedGradient(exposed, predictedExposed, out);
}

// Which runs the fit uses: those at the --fit-gpus counts (all without it); the rest are held out.
std::vector<bool> heldOutRuns(const Options& o, const std::vector<calib::MeasuredRun>& runs) {
  std::vector<int> fitGpus;
  if (!o.fitGpus.empty()) {
    try {
      fitGpus = plan::parseGpuList(o.fitGpus);
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      throw ConfigError("--fit-gpus" + (what.rfind("--gpus", 0) == 0 ? what.substr(6) : ": " + what));
    }
  }
  std::vector<bool> heldOut;
  for (const calib::MeasuredRun& run : runs) {
    heldOut.push_back(!fitGpus.empty() &&
                      std::find(fitGpus.begin(), fitGpus.end(), run.strategy.grid.total()) == fitGpus.end());
  }
  if (std::find(heldOut.begin(), heldOut.end(), false) == heldOut.end()) {
    throw ConfigError(fmt::format("--fit-gpus {}: no run in {} has those GPU counts", o.fitGpus, fmt::join(o.measured, ", ")));
  }
  return heldOut;
}

// calibrate --fit's names for what it fits.
const std::pair<const char*, calib::FitKind> kFitKinds[] = {
    {"factors", calib::FitKind::kFactors},
    {"physical", calib::FitKind::kPhysical},
    {"communication", calib::FitKind::kCommunication}};

calib::FitKind fitKindNamed(const std::string& name) {
  for (const auto& [key, kind] : kFitKinds) {
    if (name == key) return kind;
  }
  throw InternalError(fmt::format("--fit '{}': not in kFitKinds (the option's check takes their names)", name));
}

struct Calibration {
  calib::FitKind kind = calib::FitKind::kFactors;
  calib::ImplementationFit fit;
  hw::Cluster calibrated;
  std::vector<calib::RunComparison> rows;  // every run, against the calibrated cluster
  std::vector<bool> heldOut;
  double heldOutError = -1;  // -1: no run held out
  std::vector<std::string> warnings;  // runs made on a machine the cluster does not describe
};

// The physical fit's communication paths and overlap (calibrate --fit physical).
void printFittedPhysics(const calib::ImplementationFit& fit, const hw::Implementation& im, std::ostream& out) {
  const auto fitted = [&](const std::string& key) {
    return std::find(fit.fitted.begin(), fit.fitted.end(), key) != fit.fitted.end();
  };
  Table t;
  for (const char* h : {"path", "level", "alpha", "bandwidth"}) {
    t.addColumn(h, std::string(h) == "path" || std::string(h) == "level" ? Table::Align::kLeft : Table::Align::kRight);
  }
  bool any = false;
  for (int p = 0; p < hw::kCommPaths; ++p) {
    for (const hw::PathLink& l : im.paths[p]) {
      if (!fitted(fmt::format("paths.{}.{}.alpha", hw::kCommPathKeys[p], l.level))) continue;
      t.addRow({hw::kCommPathKeys[p], l.level, units::formatSeconds(l.alpha), units::formatRate(1 / l.beta)});
      any = true;
    }
  }
  if (any) {
    out << "\ncommunication paths as fitted (alpha and bandwidth per level, in place of the level's):\n";
    t.print(out);
  }
  if (fitted("overlap.hidden")) {
    out << fmt::format("overlap as fitted: a reduction beside compute at {:.0f}% of its speed (chunk by chunk beside "
                       "backward {:.0f}%), compute {:.2f}x longer\n",
                       im.overlap.hidden * 100, im.overlap.whileChunked() * 100, im.overlap.slowdown);
  }
}

void printCalibration(const Calibration& c, std::ostream& out) {
  for (const std::string& w : c.warnings) out << "warning: " << w << '\n';
  out << '\n';
  printComparison(c.rows, c.heldOut, c.calibrated.device, out);
  Table factors;
  factors.addColumn("factor");
  factors.addColumn("value", Table::Align::kRight);
  const hw::Implementation& im = c.calibrated.implementation;
  for (const hw::ImplementationFactor& f : hw::kImplementationFactors) {
    const bool fitted = std::find(c.fit.fitted.begin(), c.fit.fitted.end(), f.key) != c.fit.fitted.end();
    factors.addRow({f.key, fitted ? fmt::format("{:.3g}", im.*f.field) : fmt::format("1 ({})", calib::whyUnfitted(c.kind, f))});
  }
  out << "\nimplementation factors (predicted time of that kind x factor):\n";
  factors.print(out);
  printFittedPhysics(c.fit, im, out);
  out << fmt::format("\nmean absolute error on the fitted runs: {:.1f}% with the factors at 1, {:.1f}% fitted\n",
                     c.fit.errorBefore * 100, c.fit.errorAfter * 100);
  if (c.heldOutError >= 0) {
    const auto held = std::count(c.heldOut.begin(), c.heldOut.end(), true);
    out << fmt::format("mean absolute error on the {} held-out runs: {:.1f}%\n", held, c.heldOutError * 100);
  }
}

nlohmann::json calibrationJson(const Calibration& c, const std::string& models, const std::string& written) {
  nlohmann::json factors = nlohmann::json::object();
  for (const hw::ImplementationFactor& f : hw::kImplementationFactors) factors[f.key] = c.calibrated.implementation.*f.field;
  nlohmann::json paths = nlohmann::json::array();
  const hw::Implementation& im = c.calibrated.implementation;
  for (int p = 0; p < hw::kCommPaths; ++p) {
    for (const hw::PathLink& l : im.paths[p]) {
      paths.push_back({{"path", hw::kCommPathKeys[p]}, {"level", l.level}, {"alpha_s", l.alpha}, {"beta_s_per_byte", l.beta}});
    }
  }
  return {{"models", models},
          {"cluster", c.calibrated.name},
          {"warnings", c.warnings},
          {"runs", comparisonJson(c.rows, c.heldOut, c.calibrated.device)},
          {"factors", factors},
          {"paths", paths},
          {"overlap", {{"hidden", im.overlap.hidden}, {"slowdown", im.overlap.slowdown}, {"chunked", im.overlap.whileChunked()}}},
          {"fitted", c.fit.fitted},
          {"error_before", c.fit.errorBefore},
          {"error_after", c.fit.errorAfter},
          {"held_out_error", c.heldOutError >= 0 ? nlohmann::json(c.heldOutError) : nlohmann::json(nullptr)},
          {"wrote", written}};
}

void runCalibrate(const Options& o, Context& context) {
  const std::vector<calib::MeasuredRun> runs = readAll(o.measured);
  const RunModels models(o, runs);
  const hw::Cluster cluster = hw::loadCluster(o.cluster);
  const std::string text = hw::clusterText(o.cluster);
  const std::vector<plan::PlanInputs> in = models.inputs(o, cluster);
  requireWritableDirectory(o.out, "--out");
  Calibration c;
  c.heldOut = heldOutRuns(o, runs);
  c.warnings = calib::machineWarnings(cluster, runs, thisHost());
  std::vector<calib::MeasuredRun> fitting;
  std::vector<plan::PlanInputs> fittingInputs;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (c.heldOut[i]) continue;
    fitting.push_back(runs[i]);
    fittingInputs.push_back(in[i]);
  }
  if (!o.json) {
    context.out << fmt::format("fitting the implementation factors of {} to {} of the {} runs in {} ...\n", cluster.name,
                               fitting.size(), runs.size(), fmt::join(o.measured, ", "))
                << std::flush;
  }
  c.kind = fitKindNamed(o.fit);
  c.fit = calib::fitImplementation(fittingInputs, fitting, c.kind);
  c.calibrated = cluster;
  c.calibrated.implementation = c.fit.implementation;
  c.calibrated.implementation.source = fmt::format("paraxis calibrate: {} on {} fitted to {} runs of {}", models.names(),
                                                   cluster.name, fitting.size(), fmt::join(o.measured, ", "));
  c.rows = calib::compareRuns(models.inputs(o, c.calibrated), runs);
  std::vector<calib::RunComparison> held;
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    if (c.heldOut[i]) held.push_back(c.rows[i]);
  }
  if (!held.empty()) c.heldOutError = calib::meanAbsoluteError(held);
  if (!o.out.empty()) {
    const std::string yaml = hw::withImplementation(text, c.calibrated.implementation);
    hw::loadClusterText(yaml, o.out);  // what is written must load
    writeFileAtomically(o.out, yaml, "--out");
  }
  if (o.json) return printJson(calibrationJson(c, models.names(), o.out), context);
  printCalibration(c, context.out);
  if (!o.out.empty()) context.out << fmt::format("wrote {} (use it as --cluster {})\n", o.out, o.out);
}

void addCommon(CLI::App* c, Options* o) {
  c->add_option("--measured", o->measured, "measured runs: CSV files or 'paraxis train --json' reports (docs/measured-format.md)");
  o->modelOption = addModelOptions(*c, *o, "default: the one a train report names, else resnet50");
  o->clusterOption = addClusterOptions(*c, o->cluster, o->dtype, "abci; local with --quick");
  c->add_option("--dataset-size", o->datasetSize, "samples per epoch (default: the model's data set)")
      ->check(aboveUpTo(0, 1e15));
  c->add_flag("--json", o->json, "print JSON (keys in docs/json-output.md)");
}

void requireMeasured(const Options& o, const char* command) {
  if (o.measured.empty()) {
    throw ConfigError(fmt::format("{}: --measured is required (runs: CSV files or 'paraxis train --json' reports){}",
                                  command, std::string(command) == "calibrate" ? "; or --quick to time this machine" : ""));
  }
}

}  // namespace

void addValidateCommand(CLI::App& app, Context& context) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("validate", "Hold the oracle's predictions against measured runs (no MPI, no torch)");
  addCommon(c, o.get());
  c->add_flag("--at-run-speed", o->atRunSpeed,
              "predict each run with the device slowed by its speed probe against the cluster's (train reports "
              "and calibrate --quick record one): how much of the error is the machine's drift");
  c->add_option("--trace", o->trace,
                 "the run's 'paraxis train --trace' file: each layer's measured forward, backward and communication "
                 "against the oracle's (one --measured train report)");
  c->callback([o, &context] {
    requireMeasured(*o, "validate");
    runValidate(*o, context);
  });
}

void addCalibrateCommand(CLI::App& app, Context& context) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("calibrate", "Fit a cluster's implementation factors to measured runs");
  addCommon(c, o.get());
  c->add_option("--fit-gpus", o->fitGpus, "fit only the runs at these GPU counts (e.g. 32,64); the rest are held out");
  c->add_option("--out", o->out, "write the calibrated cluster file here");
  c->add_option("--fit", o->fit,
                 "what to fit: factors (one per kind of predicted time, default) or physical (compute factors, each "
                 "communication path's alpha and bandwidth per level, the overlap) or communication (the same "
                 "without the compute factors: compute as the cluster's device gives it)")
      ->check(CLI::IsMember([] {
        std::vector<std::string> names;
        for (const auto& entry : kFitKinds) names.emplace_back(entry.first);
        return names;
      }()));
  c->add_flag("--quick", o->quick,
              "no runs: time this machine (under mpirun, the job's ranks and hosts) and fit every communication "
              "path's alpha and bandwidth per level and the device (about a minute)");
  c->add_option("--quick-models", o->quickModels,
                "with --quick: the models whose layers it times, comma-separated, NAME@INPUT for a zoo model's input "
                "(default lenet,small-cnn,resnet18@64,cosmoflow@32): the layer shapes your jobs run")
      ->delimiter(',');
  c->add_option("--save-calls", o->saveCalls,
                "with --quick: also write the layer timings the device fit rests on (JSON; 'bench compute --from-calls' "
                "fits them again)");
  c->add_option(
       "--steady-within", o->steadyWithin,
       fmt::format(
           "with --quick: the most the speed probe may move (%, slower over faster) while the layers are "
           "timed before they are timed once more (where that ends within the first minute), the steadier kept "
           "(default {:g})",
           100 * kSteadySpread))
      ->check(aboveUpTo(0, 1000));
  c->callback([o, c, &context] {
    if (!o->quick && !o->quickModels.empty()) throw ConfigError("calibrate: --quick-models needs --quick");
    if (!o->quick && c->count("--steady-within") > 0)
      throw ConfigError("calibrate: --steady-within needs --quick");
    if (!o->quick && !o->saveCalls.empty()) throw ConfigError("calibrate: --save-calls needs --quick");
    if (o->quick) {
      if (!o->measured.empty()) throw ConfigError("calibrate: give either --quick or --measured, not both");
      const bool given = o->clusterOption != nullptr && o->clusterOption->count() > 0;
      if (context.runtime == nullptr) handOff(context, "calibrate --quick");
      return context.runtime->quickCalibration({.cluster = given ? o->cluster : "local",
                                                .dtype = o->dtype,
                                                .models = o->quickModels,
                                                .out = o->out,
                                                .saveCalls = o->saveCalls,
                                                .steadySpread = o->steadyWithin / 100,
                                                .json = o->json},
                                               *c, context);
    }
    requireMeasured(*o, "calibrate");
    runCalibrate(*o, context);
  });
}

}  // namespace paraxis::cli
