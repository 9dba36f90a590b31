// paraxis validate: hold the oracle's predictions against measured runs.
// paraxis calibrate: fit the cluster's implementation factors to measured runs and write the
// calibrated cluster file (plan/calibration.hpp; formats in docs/measured-format.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <ostream>

#include "cli/context.hpp"
#include "cli/model_source.hpp"
#include "cli/plan_inputs.hpp"
#include "core/error.hpp"
#include "core/table.hpp"
#include "hw/cluster_yaml.hpp"
#include "hw/presets.hpp"
#include "calib/calibration.hpp"
#include "plan/planner.hpp"

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
  CLI::Option* modelOption = nullptr;
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

// Epochs take seconds to hours, iterations milliseconds: four significant digits fit both.
std::string seconds(double s) { return s > 0 ? fmt::format("{:.4g}", s) : "-"; }

void printComparison(const std::vector<calib::RunComparison>& rows, const std::vector<bool>& heldOut, std::ostream& out) {
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
  if (!heldOut.empty()) t.addColumn("");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const calib::RunComparison& r = rows[i];
    const plan::Strategy& s = r.run->strategy;
    std::vector<std::string> cells{r.run->label, std::to_string(r.run->line), s.name, s.grid.str(),
                                   std::to_string(s.grid.total()), std::to_string(s.globalBatch),
                                   seconds(r.run->compute), seconds(r.run->communication), seconds(r.run->total),
                                   seconds(r.compute), seconds(r.communication), seconds(r.total),
                                   fmt::format("{:.1f}%", r.error * 100)};
    if (!heldOut.empty()) cells.push_back(heldOut[i] ? "held out" : "fitted");
    t.addRow(std::move(cells));
  }
  t.print(out);
}

void runValidate(const Options& o, Context& context) {
  const std::vector<calib::MeasuredRun> runs = readAll(o.measured);
  const RunModels models(o, runs);
  const hw::Cluster cluster = hw::loadCluster(o.cluster);
  const std::vector<plan::PlanInputs> in = models.inputs(o, cluster);
  const std::vector<calib::RunComparison> rows = calib::compareRuns(in, runs);
  std::ostream& out = context.out;
  const bool perIteration = std::any_of(runs.begin(), runs.end(), [](const calib::MeasuredRun& r) { return r.perIteration; });
  out << fmt::format("{} on {} against {} ({} run{}); seconds per {}\n", models.names(), cluster.name,
                     fmt::join(o.measured, ", "), runs.size(), runs.size() == 1 ? "" : "s",
                     perIteration ? "iteration" : fmt::format("epoch of {:.0f} samples", in.front().datasetSamples));
  if (!cluster.implementation.isIdentity()) {
    out << fmt::format("implementation factors: {}\n",
                       cluster.implementation.source.empty() ? "(no source given)" : cluster.implementation.source);
  }
  out << '\n';
  printComparison(rows, {}, out);
  out << fmt::format("\nmean absolute error on the totals: {:.1f}%\n", calib::meanAbsoluteError(rows) * 100);
}

void runCalibrate(const Options& o, Context& context) {
  const std::vector<calib::MeasuredRun> runs = readAll(o.measured);
  const RunModels models(o, runs);
  const hw::Cluster cluster = hw::loadCluster(o.cluster);
  const std::string text = hw::clusterText(o.cluster);
  const std::vector<plan::PlanInputs> in = models.inputs(o, cluster);
  requireWritableDirectory(o.out, "--out");
  std::vector<int> fitGpus;
  if (!o.fitGpus.empty()) {
    try {
      fitGpus = plan::parseGpuList(o.fitGpus);
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      throw ConfigError("--fit-gpus" + (what.rfind("--gpus", 0) == 0 ? what.substr(6) : ": " + what));
    }
  }
  std::vector<calib::MeasuredRun> fitting;
  std::vector<plan::PlanInputs> fittingInputs;
  std::vector<bool> heldOut;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const calib::MeasuredRun& run = runs[i];
    const bool fit = fitGpus.empty() || std::find(fitGpus.begin(), fitGpus.end(), run.strategy.grid.total()) != fitGpus.end();
    if (fit) {
      fitting.push_back(run);
      fittingInputs.push_back(in[i]);
    }
    heldOut.push_back(!fit);
  }
  if (fitting.empty()) {
    throw ConfigError(fmt::format("--fit-gpus {}: no run in {} has those GPU counts", o.fitGpus, fmt::join(o.measured, ", ")));
  }
  std::ostream& out = context.out;
  out << fmt::format("fitting the implementation factors of {} to {} of the {} runs in {} ...\n", cluster.name,
                     fitting.size(), runs.size(), fmt::join(o.measured, ", "));
  out.flush();
  const calib::ImplementationFit fit = calib::fitImplementation(fittingInputs, fitting);

  hw::Implementation im = fit.implementation;
  im.source = fmt::format("paraxis calibrate: {} on {} fitted to {} runs of {}", models.names(), cluster.name,
                          fitting.size(), fmt::join(o.measured, ", "));
  hw::Cluster calibrated = cluster;
  calibrated.implementation = im;
  const std::vector<plan::PlanInputs> withFit = models.inputs(o, calibrated);
  const std::vector<calib::RunComparison> rows = calib::compareRuns(withFit, runs);
  out << '\n';
  printComparison(rows, heldOut, out);

  Table factors;
  factors.addColumn("factor");
  factors.addColumn("value", Table::Align::kRight);
  for (const hw::ImplementationFactor& f : hw::kImplementationFactors) {
    const bool fitted = std::find(fit.fitted.begin(), fit.fitted.end(), f.key) != fit.fitted.end();
    factors.addRow({f.key, fitted ? fmt::format("{:.3g}", im.*f.field) : "1 (no run exercises it)"});
  }
  out << "\nimplementation factors (predicted time of that kind x factor):\n";
  factors.print(out);
  std::vector<calib::RunComparison> held;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (heldOut[i]) held.push_back(rows[i]);
  }
  out << fmt::format("\nmean absolute error on the fitted runs: {:.1f}% with the factors at 1, {:.1f}% fitted\n",
                     fit.errorBefore * 100, fit.errorAfter * 100);
  if (!held.empty()) {
    out << fmt::format("mean absolute error on the {} held-out runs: {:.1f}%\n", held.size(),
                       calib::meanAbsoluteError(held) * 100);
  }
  if (!o.out.empty()) {
    const std::string yaml = hw::withImplementation(text, im);
    hw::loadClusterText(yaml, o.out);  // what is written must load
    std::ofstream file(o.out);
    if (!(file << yaml)) throw ConfigError(fmt::format("{}: cannot write the calibrated cluster", o.out));
    out << fmt::format("wrote {} (use it as --cluster {})\n", o.out, o.out);
  }
}

void addCommon(CLI::App* c, Options* o) {
  c->add_option("--measured", o->measured, "measured runs: CSV files or 'paraxis train --json' reports (docs/measured-format.md)")
      ->required();
  o->modelOption = c->add_option("--model", o->model, "zoo name or model .yaml file (default: the one a train report names, else resnet50)");
  c->add_option("--input", o->input, "spatial input extents (zoo models)");
  c->add_option("--cluster", o->cluster, "preset or cluster .yaml file (default abci)");
  c->add_option("--dataset-size", o->datasetSize, "samples per epoch (default: the model's data set)");
  c->add_option("--dtype", o->dtype, "compute data type: fp32 (default), tf32, fp16, bf16");
}

}  // namespace

void addValidateCommand(CLI::App& app, Context& context) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("validate", "Hold the oracle's predictions against measured runs (no MPI, no torch)");
  addCommon(c, o.get());
  c->callback([o, &context] { runValidate(*o, context); });
}

void addCalibrateCommand(CLI::App& app, Context& context) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("calibrate", "Fit a cluster's implementation factors to measured runs");
  addCommon(c, o.get());
  c->add_option("--fit-gpus", o->fitGpus, "fit only the runs at these GPU counts (e.g. 32,64); the rest are held out");
  c->add_option("--out", o->out, "write the calibrated cluster file here");
  c->callback([o, &context] { runCalibrate(*o, context); });
}

}  // namespace paraxis::cli
