// paraxis train: data-parallel, spatial, filter, channel and pipeline training on LibTorch over
// the communication runtime.
//   mpirun -np N paraxis train --model lenet --data fashion-mnist --epochs 3
//   mpirun -np 4 paraxis train --model cosmoflow --input 64x64x64 --grid data=2xh=2
//   mpirun -np 4 paraxis train --model vgg16 --input 32x32 --grid data=2xpipeline=2 --micro-batches 4
// Without mpirun it runs as one rank.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <thread>

#include "cli/context.hpp"
#include "cli/run/commands.hpp"
#include "cli/gradient_comm_options.hpp"
#include "cli/json_output.hpp"
#include "cli/runtime.hpp"
#include "cli/model_source.hpp"
#include "cli/plan_inputs.hpp"
#include "calib/json_file.hpp"
#include "calib/torch/compute_bench.hpp"
#include "cli/ranges.hpp"
#include "cli/run/device_measurement.hpp"
#include "cli/run/run_configuration.hpp"
#include "comm/collectives.hpp"
#include "comm/hierarchy.hpp"
#include "comm/world.hpp"
#include "core/atomic_file.hpp"
#include "core/compute_device.hpp"
#include "core/error.hpp"
#include "core/thread_slice.hpp"
#include "core/trace.hpp"
#include "core/units.hpp"
#include "hw/presets.hpp"
#include "plan/milp.hpp"
#include "plan/oracle.hpp"
#include "plan/placement.hpp"
#include "plan/strategy_json.hpp"
#include "train/torch_runtime.hpp"
#include "train/trainer.hpp"

namespace paraxis::cli {
namespace {

struct Options : ModelSource {
  train::TrainOptions train;
  std::string plan;
  std::string grid;
  std::string report;
  bool json = false;
  GradientCommFlags gradientComm;
  std::string optimizer = "sgd";
  std::string bnStatistics = "global";
  std::string schedule = "1f1b";
  std::string cluster;
  std::string device = "cpu";
};

// The strategy the run executed, in the strategy file's schema, so that `paraxis validate`
// can predict the same thing.
plan::Strategy ranStrategy(const train::TrainReport& r, const train::TrainOptions& t) {
  plan::Strategy s;
  s.grid = r.grid;
  s.name = plan::strategyNameOf(r.grid);
  s.globalBatch = r.globalBatch;
  s.comm = t.comm;
  s.microBatches = r.microBatches;
  s.schedule = t.schedule;
  return s;
}

// Where the run ran, so that validate can tell a cluster description that places its ranks
// otherwise (calib::machineWarnings). Collective: every rank calls it.
nlohmann::json machineJson(const comm::Communicator& world, const ComputeDevice& device) {
  const comm::Hierarchy hosts = comm::Hierarchy::fromHosts(world);
  return {{"device", device.str()},
          {"host", world.hostName()},
          {"hosts", hosts.groups()},
          {"ranks_per_host", hosts.localSize()},
          {"cores_per_host", std::max(1U, std::thread::hardware_concurrency())}};
}

nlohmann::json reportJson(const train::TrainReport& r, const graph::Model& model, const ModelSource& source,
                          const train::TrainOptions& t, const nlohmann::json& machine) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& e : r.epochs) {
    epochs.push_back({{"epoch", e.epoch}, {"train_loss", e.trainLoss}, {"test_loss", e.testLoss},
                      {"test_accuracy", e.testAccuracy ? nlohmann::json(*e.testAccuracy) : nlohmann::json(nullptr)}, {"seconds", e.seconds}});
  }
  return {{"model", model.name()},
          {"model_source",
           {{"model", source.model}, {"input", source.input}, {"channels", source.channels}, {"classes", source.classes}}},
          {"strategy", plan::strategyJson(ranStrategy(r, t))},
          {"ranks", r.ranks},
          {"machine", machine},
          {"threads", r.threads},
          {"iterations", r.iterations},
          {"measured_iterations", r.measuredIterations},
          {"global_batch", r.globalBatch},
          {"seconds", r.seconds},
          {"samples_per_second", r.samplesPerSecond},
          {"peak_step_bytes", r.peakStepBytes},
          {"gradient_allreduce_algorithm", r.allreduceAlgorithm},
          {"time", plan::timeBreakdownJson(r.time)},
          {"breakdown_rank", r.breakdownRank},
          {"rank_busy_s", r.rankBusy},
          {"epochs", epochs}};
}

// A strategy file from `paraxis plan --emit`: its grid, batch and gradient settings. The data
// and spatial axes run today; other model-parallel axes are refused (by the trainer) rather
// than ignored.
void applyPlan(const std::string& path, int ranks, const graph::Model& model, train::TrainOptions& t) {
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot open the strategy file", path));
  const nlohmann::json document = calib::parseJsonFile(in, path);
  const plan::Strategy s = plan::strategyFromJson(document, path);
  // The plan's layers against the model first: a plan for another model is that, whatever
  // the rank count.
  try {
    if (!s.layers.empty()) {
      const train::PlanExecution e = train::planExecution(s.layers, model);
      t.sampleFrom = e.sampleFrom;
      t.layerGrids = e.layerGrids;
    }
    train::checkGrid(s.grid, ranks, model);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", path, e.what()));
  }
  if (s.globalBatch % s.grid.data != 0) {
    throw ConfigError(fmt::format("{}: a global batch of {} does not divide over {} data replicas", path, s.globalBatch,
                                  s.grid.data));
  }
  t.grid = s.grid;
  t.batchPerRank = s.globalBatch / s.grid.data;
  t.comm = s.comm;
  t.microBatches = s.microBatches;
  t.schedule = s.schedule;
}

// --cluster: where --allreduce (or the plan file) leaves the gradient allreduce to auto, the
// run executes the one the oracle picks for this run on that cluster (what `plan --emit`
// writes), not the runtime's rule of message size. Every rank computes the same pick from the
// same inputs (agreeAcrossRanks checked them).
void applyOracleAllreduce(const std::string& clusterName, const graph::Model& model, int ranks, train::TrainOptions& t) {
  const hw::Cluster cluster = hw::loadCluster(clusterName);
  if (ranks > cluster.totalDevices()) {
    throw ConfigError(fmt::format("--cluster {}: describes {} devices, but this job runs {} ranks", clusterName,
                                  cluster.totalDevices(), ranks));
  }
  if (t.comm.algorithm != GradientAlgorithm::kAuto) return;
  plan::Strategy s;
  s.grid = t.grid.value_or(plan::Grid{.data = ranks});
  s.name = plan::strategyNameOf(s.grid);
  s.globalBatch = t.batchPerRank * s.grid.data;
  s.comm = t.comm;
  s.microBatches = s.grid.pipeline > 1 ? train::microBatchesOf(t, s.grid) : 1;
  s.schedule = t.schedule;
  plan::Oracle oracle(planInputs(model, cluster, "fp32", 0));
  const plan::Estimate e = oracle.estimate(s, false);
  if (!e.feasible) {
    throw ConfigError(fmt::format("--cluster {}: the oracle cannot price this run: {}", clusterName, e.infeasibleReason));
  }
  if (e.allreduceAlgorithm != "none") {
    t.comm.algorithm = gradientAlgorithmFromName(e.allreduceAlgorithm, "the oracle's allreduce");
  }
}

// Placement grids: every layer's forward and backward seconds on this machine at the replica's
// batch (calib::benchLayers: median of 3, every rank at once, as they will train), for the
// placement to schedule. DLPlacer places by profiled times; the 'local' preset's model of a
// layer is tens of per cent off.
void measureLayerTimes(const comm::Communicator& world, const graph::Model& model, double deadline,
                       train::TrainOptions& t) {
  if (!t.grid || t.grid->place <= 1) return;
  const std::vector<calib::TimedCall> calls =
      calib::benchLayers(model, t.batchPerRank, t.threads, 3, [&] { comm::barrier(world, deadline); });
  t.layerForwardSeconds.assign(static_cast<std::size_t>(model.size()), 0.0);
  t.layerBackwardSeconds.assign(static_cast<std::size_t>(model.size()), 0.0);
  for (const calib::TimedCall& c : calls) {
    const int i = model.find(c.layer);
    if (i < 0) continue;
    t.layerForwardSeconds[i] = c.seconds;
    t.layerBackwardSeconds[i] = c.backwardSeconds;
  }
}

// Options that may change between a checkpoint and its resume: how long to train and where
// the outputs go.
const std::set<std::string> kFreeOnResume{"--epochs", "--iterations", "--checkpoint", "--checkpoint-every", "--resume",
                                          "--weights-out", "--report", "--json", "--quiet", "--threads", "--trace"};

// The options that name a choice: each checked against its list (one line naming the option)
// and set into the training options.
void applyChoices(Options& o) {
  if (o.optimizer != "sgd") {
    throw ConfigError(fmt::format("--optimizer: only sgd (with --momentum, --nesterov, --weight-decay) is implemented, "
                                  "found '{}'", o.optimizer));
  }
  if (o.train.lrSchedule != "constant" && o.train.lrSchedule != "step" && o.train.lrSchedule != "cosine") {
    throw ConfigError(fmt::format("--lr-schedule: expected constant, step or cosine, found '{}'", o.train.lrSchedule));
  }
  if (o.bnStatistics != "global" && o.bnStatistics != "local") {
    throw ConfigError(fmt::format("--bn-statistics: expected global or local, found '{}'", o.bnStatistics));
  }
  o.train.localBatchNorm = o.bnStatistics == "local";
  const std::string& method = o.train.placementMethod;
  if (!plan::isPlacementMethod(method) || method == "exhaustive") {  // enumeration: small test graphs only
    throw ConfigError(fmt::format("--placement-method: expected list, ilp or auto, found '{}'", method));
  }
  if (method == "ilp" && plan::milpSolverName().empty()) {
    throw ConfigError("--placement-method ilp: this build has no ILP solver (apt-get install libglpk-dev and rebuild)");
  }
  if (o.schedule != "gpipe" && o.schedule != "1f1b") {
    throw ConfigError(fmt::format("--schedule: expected gpipe or 1f1b, found '{}'", o.schedule));
  }
  o.train.schedule = o.schedule == "gpipe" ? plan::PipelineSchedule::kGPipe : plan::PipelineSchedule::kOneFOneB;
  o.train.device = parseComputeDevice(o.device, "--device");
  train::requireDevice(o.train.device, "--device");
}

// The run, with the speed probe before and after it (the machine's speed while it ran, for
// validate to hold against the speed its cluster file was measured at) into `machine`. The
// probe times CPU cores: a GPU run's speed is the GPU's, and its report carries none.
train::TrainReport trainProbed(const comm::Communicator& world, const graph::Model& model, const train::TrainOptions& t,
                               double deadline, nlohmann::json& machine, std::ostream& out) {
  if (t.device.cuda()) return train::runTraining(world, model, t, out);
  auto probe = [&] { return calib::speedProbeSeconds([&] { comm::barrier(world, deadline); }); };
  const double before = probe();
  train::TrainReport report = train::runTraining(world, model, t, out);
  machine["speed_probe_s"] = meanOverRanks(world, (before + probe()) / 2, deadline);
  return report;
}

// " (rank 1, the busiest stage)": whose figures the summary prints, where ranks compute
// different layers; empty where every rank computes the same.
std::string busiestRankText(const train::TrainReport& report) {
  if (!report.grid.ranksRunDifferentLayers()) return {};
  return fmt::format(" (rank {}, the busiest {})", report.breakdownRank, report.grid.pipeline > 1 ? "stage" : "device");
}

void printMeasured(const train::TrainReport& report, std::ostream& out) {
  if (report.measuredIterations < plan::kMinimumMeasuredIterations) {
    out << fmt::format("measured per iteration: not reported: {} of {} iterations measured (the first {} warm "
                       "up); run at least {} for figures\n", report.measuredIterations, report.iterations,
                       report.iterations - report.measuredIterations,
                       report.iterations - report.measuredIterations + plan::kMinimumMeasuredIterations);
    return;
  }
  const plan::TimeBreakdown& t = report.time;
  const double ms = 1e3;
  std::string layers = t.halo + t.shuffle + t.layerCollectives > 0
                           ? fmt::format(", halo {:.1f} ms, shuffle {:.1f} ms, layer collectives {:.1f} ms",
                                         t.halo * ms, t.shuffle * ms, t.layerCollectives * ms)
                           : std::string();
  if (report.grid.pipeline > 1) {
    layers += fmt::format(", pipeline transfers {:.1f} ms, bubble {:.1f} ms", t.pipelineP2P * ms, t.bubble * ms);
  }
  if (report.grid.place > 1) {
    layers += fmt::format(", transfers {:.1f} ms, waiting for other ranks {:.1f} ms", t.pipelineP2P * ms, t.bubble * ms);
  }
  out << fmt::format(
      "measured per iteration{}: forward {:.1f} ms, backward {:.1f} ms{}, gradient communication {:.1f} ms of which "
      "{:.1f} ms exposed, update {:.1f} ms, data {:.1f} ms; {:.4g} samples/s\n",
      busiestRankText(report), t.forward * ms, (t.backwardData + t.backwardWeight) * ms, layers,
      t.gradientAllreduce * ms, t.gradientExposed * ms, t.update * ms, t.dataLoading * ms, report.samplesPerSecond);
}

void run(Options& o, const CLI::App& command, Context& context) {
  const RunConfiguration configuration = runConfiguration(command, context.knobs);
  o.train.configuration = configuration.text(kFreeOnResume);
  const graph::Model model = loadModel(o);
  applyChoices(o);
  o.train.comm = o.gradientComm.apply(knobDefaults(context.knobs));  // PARAXIS_* knobs, then the options
  if (o.train.comm.negotiation == Negotiation::kCentralized) {
    throw ConfigError("--negotiation: centralized is modelled by plan but not run by train: use none or decentralized");
  }
  requireWritableDirectory(o.report, "--report");
  requireWritableDirectory(o.train.trace, "--trace");
  if (!o.train.trace.empty()) {
    trace::enable();  // before the communicator's threads start, so that they carry their names
    trace::nameThread("main");
  }
  if (o.json) o.train.quiet = true;  // stdout carries the JSON document alone
  comm::World world = comm::openWorld(context.argc, context.argv,
                                      {.deadlineSeconds = context.knobs.getDouble("comm_deadline"),
                                       .verify = context.knobs.getBool("comm_verify")});
  agreeAcrossRanks(world.comm, configuration);
  if (!o.grid.empty()) {
    try {
      o.train.grid = plan::parseGrid(o.grid);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("--grid: {}", e.what()));
    }
  }
  if (!o.plan.empty()) {
    applyPlan(o.plan, world.comm.size(), model, o.train);
    o.train.comm = o.gradientComm.apply(o.train.comm);  // the command line overrides the file
  }
  if (o.train.threads == 0) o.train.threads = static_cast<int>(context.knobs.getInt("threads"));
  o.train.progressInterval = context.knobs.getDouble("progress_interval");
  if (!o.cluster.empty()) {
    applyOracleAllreduce(o.cluster, model, world.comm.size(), o.train);
    o.train.stageCluster = o.cluster;
  }
  measureLayerTimes(world.comm, model, context.knobs.getDouble("comm_deadline"), o.train);
  nlohmann::json machine = machineJson(world.comm, o.train.device);
  const train::TrainReport report =
      trainProbed(world.comm, model, o.train, context.knobs.getDouble("comm_deadline"), machine, context.out);
  if (const auto slice = core::commThreadSliceInEffect()) machine["comm_thread_slice_s"] = *slice;
  if (world.comm.rank() != 0) return;
  const nlohmann::json document = reportJson(report, model, o, o.train, machine);
  if (!o.report.empty()) writeFileAtomically(o.report, jsonText(document), "--report");
  if (o.json) {
    printJson(document, context);
    return;
  }
  printMeasured(report, context.out);
}

}  // namespace

void addTrainCommand(CLI::App& app, Context& context) {
  auto o = std::make_shared<Options>();
  o->model = "lenet";
  CLI::App* c = app.add_subcommand("train", runtimeCommandDescription("train"));
  addModelOptions(*c, *o, "default lenet");
  CLI::Option* plan =
      c->add_option("--plan", o->plan, "strategy file from 'paraxis plan --emit' (grid, batch and gradient settings)");
  c->add_option("--grid", o->grid,
                "axes over the ranks, as plan prints them: data=2xh=2, filter=2xh=2, data=2xchannel=2, "
                "data=2xpipeline=2, data=2xh=2xhead=filter (default: data=<ranks>)")
      ->excludes(plan);
  c->add_option("--micro-batches", o->train.microBatches,
                 "pipeline grids: micro-batches per replica batch (default: the largest divisor of the batch up to 4 "
                 "per stage)")
      ->check(within(1, 1 << 20));
  c->add_option("--schedule", o->schedule, "pipeline grids: 1f1b (default) or gpipe");
  c->add_option("--placement-method", o->train.placementMethod,
                 "placement grids: list (list scheduling, default), ilp (the exact program from it) or auto (ilp "
                 "where a solver is built in)");
  c->add_option("--placement-time-limit", o->train.placementTimeLimit,
                 "placement grids: seconds the ILP may search (default 10)")
      ->check(within(0.1, 3600));
  c->add_option("--bn-statistics", o->bnStatistics,
                 "spatial grids: batch-norm statistics over the spatial group (global, default) or each block (local)");
  c->add_flag("--halo-overlap", o->train.haloOverlap,
              "spatial grids: compute a block's interior while its halos travel (slower on shared memory here)");
  c->add_option("--data", o->train.data, "synthetic (default), fashion-mnist, or a directory of IDX files");
  c->add_option("--synthetic-samples", o->train.syntheticSamples, "samples of synthetic data (default 4096, fewer for large inputs: about 256 MiB)")->check(within(1, 1e9));
  c->add_option("--batch-per-rank", o->train.batchPerRank,
                "samples per data replica per iteration (a spatial group shares its replica's)")->check(within(1, 1 << 24));
  c->add_option("--epochs", o->train.epochs, "epochs")->check(within(1, 1e6));
  c->add_option("--iterations", o->train.iterations, "stop after this many iterations")->check(within(1, 1e12));
  c->add_option("--lr", o->train.learningRate, "learning rate of one rank (scaled by the rank count)")
      ->check(aboveUpTo(0, 1000));
  c->add_flag("!--no-lr-scaling", o->train.scaleLearningRate, "keep --lr whatever the rank count");
  c->add_option("--optimizer", o->optimizer, "sgd (default; the only one so far)");
  c->add_option("--momentum", o->train.momentum, "SGD momentum (default 0.9)")->check(fraction());
  c->add_flag("--nesterov", o->train.nesterov, "Nesterov momentum");
  c->add_flag("--skip-nonfinite", o->train.skipNonFinite,
              "skip the updates of steps whose gradients hold nan or inf, instead of stopping the run");
  c->add_option("--weight-decay", o->train.weightDecay, "weight decay")->check(within(0, 1));
  c->add_option("--warmup-epochs", o->train.warmupEpochs, "linear learning-rate warm-up")->check(within(0, 1e6));
  c->add_option("--lr-schedule", o->train.lrSchedule, "learning-rate schedule: constant (default), step or cosine");
  c->add_option("--threads", o->train.threads, "torch threads per rank (default: knob threads)")
      ->check(within(0, 1024));
  c->add_option("--seed", o->train.seed, "seed of weights, shuffling and synthetic data");
  c->add_option("--device", o->device,
                "cpu (default), cuda or cuda:N: where the model, data and gradient buffers live (cuda: the data axis, "
                "a paraxis built against a CUDA LibTorch, docs/gpu.md)");
  addGradientCommOptions(*c, o->gradientComm);
  c->add_option("--cluster", o->cluster,
                "a preset or cluster file: with --allreduce auto, run the gradient allreduce the oracle picks for this "
                "run on it (as plan --emit writes it); pipeline stages balanced on its device (default: the local preset's)");
  c->add_option("--sparse-warmup-epochs", o->train.sparseWarmupEpochs, "dense epochs before chunk-sparse starts (a fraction starts it mid-epoch)")
      ->check(within(0, 1e6));
  c->add_flag("--quiet", o->train.quiet, "no progress output");
  c->add_option("--checkpoint", o->train.checkpointDir, "directory for checkpoints");
  c->add_option("--checkpoint-every", o->train.checkpointEvery, "iterations between checkpoints")->check(within(1, 1e12));
  c->add_option("--resume", o->train.resumeDir, "continue from the latest checkpoint in this directory");
  c->add_option("--weights-out", o->train.weightsOut, "rank 0 writes the final parameters (raw f32) here");
  c->add_option("--trace", o->train.trace,
                "write every rank's timeline here: Chrome trace events for Perfetto or chrome://tracing (docs/trace.md)");
  c->add_option("--report", o->report, "write the report (the oracle's breakdown, docs/json-output.md) as JSON here");
  c->add_flag("--json", o->json, "print the report as JSON on stdout (rank 0), instead of the summary line");
  c->callback([o, c, &context] { run(*o, *c, context); });
}

}  // namespace paraxis::cli
