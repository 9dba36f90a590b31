// paraxis plan: predict, explain and rank every parallel strategy (plan/).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <ostream>

#include "cli/context.hpp"
#include "cli/gradient_comm_options.hpp"
#include "cli/json_output.hpp"
#include "cli/model_source.hpp"
#include "cli/plan_inputs.hpp"
#include "cli/plan_report.hpp"
#include "cli/report_charts.hpp"
#include "cli/ranges.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "hw/presets.hpp"
#include "plan/layer_search.hpp"
#include "plan/oracle.hpp"
#include "plan/paradl.hpp"
#include "plan/planner.hpp"
#include "plan/strategy_json.hpp"

namespace paraxis::cli {
namespace {

struct Options : ModelSource {
  Options() { model = "resnet50"; }
  std::string cluster = "abci";
  std::string gpus = "8..1024";
  std::string batchPerGpu = "32";
  std::int64_t globalBatch = 0;
  std::int64_t batchPerReplica = 0;
  int modelParallel = 0;
  std::vector<std::string> strategies;
  std::string objective = "time-to-train";
  int top = 0;
  bool json = false;
  bool csv = false;
  std::string emit;
  std::string plot;  // an SVG of samples/s by GPUs per strategy
  bool explain = false;
  bool explainLayers = false;  // --explain, then every layer's predicted times
  std::string variant = "default";
  double sampleSeconds = 0;
  std::string paradlNetwork;  // ParaDL's own network file, instead of the model
  std::string epochsAt;
  std::string epochsTable;
  double datasetSize = 0;
  std::string dtype = "fp32";
  std::string congestion = "expected";
  GradientCommFlags gradientComm;
  int microPerStage = 4;
  std::string schedule = "1f1b";
  bool perLayer = false;
  std::string grid;  // an explicit grid instead of --strategies x --gpus
};

// `--grid`: the one strategy on that grid, with --batch-per-gpu (or --global-batch) samples.
std::vector<plan::Estimate> planOnGrid(const Options& o, const plan::PlanInputs& in, const plan::PlanRequest& r) {
  if (!o.strategies.empty()) throw ConfigError("--grid: give either --grid or --strategies, not both");
  const plan::Grid grid = plan::parseGrid(o.grid);
  if (r.globalBatch == 0 && r.batchPerGpu == 0) throw ConfigError("--grid: give --batch-per-gpu N or --global-batch B, not max");
  const std::int64_t global = r.globalBatch > 0        ? r.globalBatch
                              : r.batchPerReplica > 0 ? r.batchPerReplica * grid.data
                                                      : r.batchPerGpu * grid.total();
  return {plan::Oracle(in).estimate(plan::strategyOnGrid(grid, global, r))};
}

template <typename T>
T pick(const std::string& option, const std::string& value, std::initializer_list<std::pair<const char*, T>> choices) {
  std::vector<std::string> names;
  for (const auto& [name, v] : choices) {
    if (value == name) return v;
    names.emplace_back(name);
  }
  throw ConfigError(fmt::format("{}: expected one of {}, found '{}'", option, fmt::join(names, ", "), value));
}

plan::PlanRequest request(const Options& o, const Knobs& knobs) {
  plan::PlanRequest r;
  if (!o.strategies.empty()) r.strategies = o.strategies;
  for (const auto& s : r.strategies) {
    const auto& names = plan::strategyNames();
    if (std::find(names.begin(), names.end(), s) == names.end()) {
      throw ConfigError(fmt::format("--strategies: unknown strategy '{}' (expected one of: {})", s, fmt::join(names, ", ")));
    }
  }
  r.gpus = plan::parseGpuList(o.gpus);
  if (o.batchPerGpu == "max") {
    r.batchPerGpu = 0;
  } else {
    try {
      r.batchPerGpu = std::stoll(o.batchPerGpu);
    } catch (const std::exception&) {
      r.batchPerGpu = -1;
    }
    if (r.batchPerGpu < 1) throw ConfigError(fmt::format("--batch-per-gpu: expected a positive count or 'max', found '{}'", o.batchPerGpu));
  }
  r.globalBatch = o.globalBatch;
  r.batchPerReplica = o.batchPerReplica;
  r.modelParallel = o.modelParallel;
  r.objective = pick<plan::Objective>("--objective", o.objective,
                                      {{"time-to-train", plan::Objective::kTimeToTrain}, {"iteration", plan::Objective::kIteration},
                                       {"memory", plan::Objective::kMemory}, {"cost", plan::Objective::kCost}});
  r.schedule = pick<plan::PipelineSchedule>("--schedule", o.schedule,
                                            {{"1f1b", plan::PipelineSchedule::kOneFOneB}, {"gpipe", plan::PipelineSchedule::kGPipe}});
  r.microBatchesPerStage = o.microPerStage;
  r.comm = o.gradientComm.apply(knobDefaults(knobs));
  return r;
}

plan::PlanInputs inputs(const Options& o, const graph::Model& model, const hw::Cluster& cluster) {
  plan::PlanInputs in = planInputs(model, cluster, o.dtype, o.datasetSize);
  in.congestion = pick<cost::Congestion>("--congestion", o.congestion,
                                         {{"optimistic", cost::Congestion::kOptimistic}, {"expected", cost::Congestion::kExpected},
                                          {"congested", cost::Congestion::kCongested}});
  if (!o.epochsTable.empty()) in.statistics.table = plan::loadEpochsTable(o.epochsTable);
  if (!o.epochsAt.empty()) {
    const auto [batch, epochs] = plan::parseEpochsAt(o.epochsAt);
    in.statistics.anchor(batch, epochs);
  }
  return in;
}

void runParadl(const Options& o, const plan::PlanInputs& in, const plan::PlanRequest& r, Context& context) {
  if (o.sampleSeconds <= 0) {
    throw ConfigError("--model-variant paradl needs --sample-seconds (ParaDL's measured time per sample on one device)");
  }
  plan::ParadlNetwork network =
      o.paradlNetwork.empty() ? plan::paradlNetworkOf(*in.model) : plan::readParadlNetwork(o.paradlNetwork);
  plan::shareCompute(network, o.sampleSeconds);
  const plan::ParadlPlatform platform = plan::ParadlPlatform::forCluster(*in.cluster);
  // ParaDL's file names its data set size; --dataset-size still wins.
  const double samples = o.datasetSize <= 0 && network.samples > 0 ? network.samples : in.datasetSamples;
  std::vector<std::vector<std::string>> rows;
  nlohmann::json json = nlohmann::json::array();
  for (int gpus : r.gpus) {
    for (const std::string& name : r.strategies) {
      const std::int64_t global = r.globalBatch > 0 ? r.globalBatch : r.batchPerGpu * gpus;
      const plan::Strategy s = plan::makeStrategy(in, name, gpus, global, r);
      const plan::ParadlEpoch e = plan::paradlEpoch(network, platform, s, samples);
      rows.push_back({name, s.grid.str(), std::to_string(gpus), std::to_string(global),
                      fmt::format("{:.1f}", e.compute), fmt::format("{:.1f}", e.communication), fmt::format("{:.2f}", e.total())});
      json.push_back({{"strategy", name}, {"grid", s.grid.str()}, {"gpus", gpus}, {"global_batch", global},
                      {"epoch_compute_seconds", e.compute}, {"epoch_communication_seconds", e.communication},
                      {"epoch_seconds", e.total()}});
    }
  }
  if (o.json) {
    printJson({{"model", in.model->name()}, {"cluster", in.cluster->name}, {"variant", "paradl"}, {"rows", json}}, context);
  } else {
    printParadlTable(rows, context.out);
  }
}

// A per-layer plan as a strategy file: the grid of the input's distribution (samples as the
// data axis), and every layer's distribution by name.
plan::Strategy perLayerStrategy(const graph::Model& model, const plan::LayerSearchResult& result, std::int64_t batch,
                                const plan::PlanRequest& r) {
  const plan::Distribution& first = result.perLayer.front();
  plan::Strategy s;
  s.name = "per-layer";
  s.grid = {.data = first.sample * first.replicas, .depth = first.depth, .height = first.height, .width = first.width};
  s.globalBatch = batch;
  s.comm = r.comm;
  for (int i = 0; i < model.size(); ++i) s.layers.push_back({model.layer(i).name, result.perLayer[i]});
  return s;
}

// What --emit wrote, on stderr (stdout carries the table or the JSON document alone).
void sayEmitted(const Options& o, const std::string& what) {
  std::cerr << fmt::format("wrote {} to {} (run it: paraxis train --plan {})\n", what, o.emit, o.emit);
}

void runPerLayer(const Options& o, const plan::PlanInputs& in, const plan::PlanRequest& r, Context& context) {
  const int gpus = r.gpus.front();
  const std::int64_t batch = r.globalBatch > 0 ? r.globalBatch : std::max<std::int64_t>(1, r.batchPerGpu) * gpus;
  const plan::LayerSearchResult result = plan::searchDistributions(in, gpus, batch);
  if (!o.emit.empty()) {
    writeFileAtomically(o.emit, jsonText(plan::strategyJson(perLayerStrategy(*in.model, result, batch, r))), "--emit");
    sayEmitted(o, fmt::format("the per-layer distribution on {} GPUs", gpus));
  }
  if (!o.json) return printLayerSearch(*in.model, result, gpus, batch, context.out);
  nlohmann::json layers = nlohmann::json::array();
  for (int i = 0; i < in.model->size(); ++i) {
    const plan::Distribution& d = result.perLayer[i];
    layers.push_back({{"index", i}, {"name", in.model->layer(i).name},
                      {"distribution", {{"sample", d.sample}, {"depth", d.depth}, {"height", d.height},
                                        {"width", d.width}, {"replicas", d.replicas}}},
                      {"layer_seconds", result.layerSeconds[i]}, {"shuffle_seconds", result.shuffleSeconds[i]}});
  }
  printJson({{"model", in.model->name()}, {"cluster", in.cluster->name}, {"gpus", gpus}, {"global_batch", batch},
             {"total_seconds", result.totalSeconds}, {"layers", layers}},
            context);
}

// The same GPU counts in every mode: one beyond the cluster's devices is refused when it was
// asked for by name (a count or a list); a range stops at the cluster's size.
void fitToCluster(const std::string& text, std::vector<int>& gpus, const hw::Cluster& cluster) {
  const std::int64_t devices = cluster.totalDevices();
  const bool range = text.find("..") != std::string::npos;
  for (int g : gpus) {
    if (g > devices && (!range || g == gpus.front())) {
      throw InfeasibleError(fmt::format("--gpus {}: cluster '{}' has {} devices{}", range ? text : std::to_string(g),
                                        cluster.name, devices, range ? fmt::format(" (try --gpus 1..{})", devices) : ""));
    }
  }
  std::erase_if(gpus, [&](int g) { return g > devices; });
}

// The best strategy as train --plan runs it: with the allreduce the oracle picked for its
// largest gradient group, unless the settings forced one.
plan::Strategy emitted(const plan::Estimate& best) {
  plan::Strategy s = best.strategy;
  if (s.comm.algorithm == GradientAlgorithm::kAuto && best.allreduceAlgorithm != "none") {
    s.comm.algorithm = gradientAlgorithmFromName(best.allreduceAlgorithm, "the oracle's allreduce");
  }
  return s;
}

// What --json prints, and what --plot draws from.
nlohmann::json planDocument(const graph::Model& model, const hw::Cluster& cluster, const plan::PlanInputs& in,
                            const std::vector<plan::Estimate>& estimates) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& e : estimates) rows.push_back(plan::estimateJson(e));
  return {{"model", model.name()},
          {"cluster", cluster.name},
          {"dataset", {{"name", in.dataset}, {"samples", in.datasetSamples}}},
          {"estimates", rows}};
}

void writePlot(const Options& o, const nlohmann::json& document) {
  writeFileAtomically(o.plot, svgDocument(renderChart(planThroughputChart(document))), "--plot");
  std::cerr << fmt::format("wrote the chart of samples/s by GPUs per strategy to {}\n", o.plot);
}

void run(const Options& o, Context& context) {
  requireWritableDirectory(o.emit, "--emit");
  requireWritableDirectory(o.plot, "--plot");
  const graph::Model model = loadModel(o);
  const hw::Cluster cluster = hw::loadCluster(o.cluster);
  const plan::PlanInputs in = inputs(o, model, cluster);
  plan::PlanRequest r = request(o, context.knobs);
  if (o.grid.empty()) fitToCluster(o.gpus, r.gpus, cluster);
  if (o.variant == "paradl") return runParadl(o, in, r, context);
  if (o.perLayer) return runPerLayer(o, in, r, context);
  if (o.variant != "default") throw ConfigError(fmt::format("--model-variant: expected default or paradl, found '{}'", o.variant));
  std::vector<plan::Estimate> estimates = o.grid.empty() ? plan::planAll(in, r) : planOnGrid(o, in, r);
  // An explicit single request that cannot run is a user error, not a table row.
  if (estimates.size() == 1 && !estimates.front().feasible) {
    const int gpus = o.grid.empty() ? r.gpus.front() : estimates.front().strategy.grid.total();
    throw InfeasibleError(fmt::format("{} on {} GPUs: {}", estimates.front().strategy.name, gpus,
                                      estimates.front().infeasibleReason));
  }
  if (!o.plot.empty()) writePlot(o, planDocument(model, cluster, in, estimates));
  if (o.top > 0 && static_cast<int>(estimates.size()) > o.top) estimates.resize(o.top);
  if (!o.emit.empty()) {
    writeFileAtomically(o.emit, jsonText(plan::strategyJson(emitted(estimates.front()))), "--emit");
    const plan::Strategy& best = estimates.front().strategy;
    sayEmitted(o, fmt::format("strategy #1, {} on grid {}", best.name, best.grid.str()));
  }
  if (o.json) {
    printJson(planDocument(model, cluster, in, estimates), context);
  } else if (o.csv) {
    printPlanCsv(estimates, context.out);
  } else {
    printPlanTable(model, cluster, in, estimates, context.out);
  }
  if ((o.explain || o.explainLayers) && !o.json && !o.csv) {
    const std::vector<plan::LayerTime> layers =
        o.explainLayers ? plan::Oracle(in).layerTimes(estimates.front().strategy) : std::vector<plan::LayerTime>{};
    printExplanation(in, estimates.front(), layers, context.out);
  }
}

}  // namespace

void addPlanCommand(CLI::App& app, Context& context) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("plan", "Predict, explain and rank parallel strategies (no MPI, no torch)");
  addModelOptions(*c, *o, "default resnet50");
  addClusterOptions(*c, o->cluster, o->dtype, "abci");
  c->add_option("--gpus", o->gpus, "GPU counts: 64, 8..1024 (powers of two) or 8,16,48 (default 8..1024)");
  c->add_option("--batch-per-gpu", o->batchPerGpu, "samples per GPU per iteration, or 'max' (largest that fits)");
  CLI::Option* global =
      c->add_option("--global-batch", o->globalBatch, "the same global batch at every GPU count")->check(within(1, 1e12));
  c->add_option("--batch-per-replica", o->batchPerReplica,
                "samples per data replica (a model-parallel group shares them), so a hybrid's global batch grows "
                "with its replicas (Pal et al.'s DP vs DP x MP); overrides --batch-per-gpu")
      ->check(within(1, 1e9))
      ->excludes(global);
  c->add_option("--model-parallel", o->modelParallel,
                "ranks per replica of the data+ hybrids' model-parallel axis (default: a node's devices)")
      ->check(within(1, 1 << 20));
  c->add_option("--strategies", o->strategies, "comma-separated: " + fmt::format("{}", fmt::join(plan::strategyNames(), ", ")))
      ->delimiter(',');
  c->add_option("--objective", o->objective, "rank by time-to-train (default), iteration, memory or cost");
  c->add_option("--top", o->top, "show the best K rows")->check(within(0, 1e9));
  c->add_flag("--json", o->json, "print JSON (keys in docs/json-output.md)");
  c->add_flag("--csv", o->csv, "print CSV");
  c->add_option("--plot", o->plot, "write an SVG chart of samples/s by GPUs per strategy (every estimate, before --top)");
  c->add_option("--emit", o->emit, "write the best strategy as JSON for 'train --plan' (docs/strategy-json.md)");
  c->add_flag("--explain", o->explain, "print every term of the best row with units");
  c->add_flag("--explain-layers", o->explainLayers,
              "--explain, then every layer's predicted forward, backward and communication (ms, as train --trace sums them)");
  c->add_option("--model-variant", o->variant, "default, or paradl (ParaDL's published equations)");
  c->add_option("--sample-seconds", o->sampleSeconds, "paradl: measured seconds per sample on one device")
      ->check(aboveUpTo(0, 1e6));
  c->add_option("--paradl-network", o->paradlNetwork, "paradl: ParaDL's own network file (name|x|w|y rows) instead of --model");
  c->add_option("--epochs-at", o->epochsAt, "anchor epochs-to-target at one batch: BATCH=EPOCHS");
  c->add_option("--epochs-table", o->epochsTable, "CSV of batch,epochs to interpolate");
  c->add_option("--dataset-size", o->datasetSize, "samples per epoch (default: the model's data set)")
      ->check(aboveUpTo(0, 1e15));
  c->add_option("--congestion", o->congestion, "optimistic, expected (default) or congested");
  addGradientCommOptions(*c, o->gradientComm);
  c->add_option("--micro-batches-per-stage", o->microPerStage, "pipeline micro-batches per stage (default 4)")
      ->check(positive());
  c->add_option("--schedule", o->schedule, "pipeline schedule: 1f1b (default) or gpipe");
  c->add_option("--grid", o->grid,
                "one explicit grid instead of --strategies x --gpus: data=8xfilter=2xh=2 (axes data, pipeline, channel, "
                "filter, d, h, w; any product; xhead=filter: a spatial grid's head split by filters)");
  c->add_flag("--per-layer", o->perLayer,
              "search each layer's own sample x spatial distribution (first GPU count), layer by layer");
  c->callback([o, &context] { run(*o, context); });
}

}  // namespace paraxis::cli
