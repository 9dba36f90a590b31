// paraxis bench compute: times the layers of some models on this machine and fits the
// cluster's device (efficiency curve, memory bandwidth) to them (calib/torch/compute_bench.hpp,
// calib/efficiency_fit.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <ostream>
#include <sstream>
#include <tuple>

#include "cli/context.hpp"
#include "cli/run/commands.hpp"
#include "cli/run/device_measurement.hpp"
#include "cli/json_output.hpp"
#include "cli/kernel_shapes.hpp"
#include "cli/model_source.hpp"
#include "cli/plan_inputs.hpp"
#include "cli/ranges.hpp"
#include "cli/run/run_configuration.hpp"
#include "comm/world.hpp"
#include "core/atomic_file.hpp"
#include "core/compute_device.hpp"
#include "core/error.hpp"
#include "core/table.hpp"
#include "core/units.hpp"
#include "cost/compute.hpp"
#include "hw/cluster_yaml.hpp"
#include "hw/presets.hpp"
#include "train/torch_runtime.hpp"

namespace paraxis::cli {
namespace {

struct Options : ComputeBench {
  bool perCall = false;
  std::string cluster = "local";
  std::string out;
  bool json = false;
  std::string deviceName = "cpu";
  std::string saveCalls;  // write the timings the fit rests on here
  std::string fromCalls;  // fit these saved timings instead of timing anything
};

struct PassTimes {
  double measured = 0, before = 0, after = 0;  // seconds: measured, predicted by the cluster, fitted
};

struct ModelTimes {
  std::string model;
  std::size_t calls = 0;
  PassTimes forward, backward;
};

std::vector<ModelTimes> compareModels(const TimedModels& timed, const hw::Device& before, const hw::Device& after,
                                      const std::string& dtype) {
  std::vector<ModelTimes> rows;
  for (const auto& [spec, calls] : timed) {
    ModelTimes m;
    m.model = spec;
    m.calls = calls.size();
    std::tie(m.forward.before, m.backward.before) = predictedSeconds(before, before.peak(dtype), calls);
    std::tie(m.forward.after, m.backward.after) = predictedSeconds(after, after.peak(dtype), calls);
    std::tie(m.forward.measured, m.backward.measured) = measuredSeconds(calls);
    rows.push_back(m);
  }
  return rows;
}

std::string versus(double predicted, double measured) {
  return fmt::format("{} ({:+.0f}%)", units::formatSeconds(predicted), (predicted / measured - 1) * 100);
}

void printCurve(const char* what, const std::vector<hw::EfficiencyPoint>& curve, int calls, std::ostream& out) {
  out << fmt::format("{} efficiency by work per pass{}:", what,
                     calls >= 0 ? fmt::format(" ({} compute-bound calls)", calls) : std::string());
  out << efficiencyCurveText(curve) << '\n';
}

// Every timed call against the fitted device: where a curve misses.
void printCalls(const TimedModels& timed, const hw::Device& fitted, double peak, std::ostream& out) {
  Table t;
  for (const char* h : {"model", "layer", "kernel", "FLOPs", "bytes", "forward", "fitted", "backward", "fitted"}) {
    t.addColumn(h, std::string(h) == "model" || std::string(h) == "layer" || std::string(h) == "kernel"
                       ? Table::Align::kLeft : Table::Align::kRight);
  }
  for (const auto& [spec, calls] : timed) {
    for (const calib::TimedCall& c : calls) {
      const auto [forward, backward] = predictedSeconds(fitted, peak, {c});
      t.addRow({spec, c.layer, c.kernel >= 0 ? hw::kKernelKeys[c.kernel] : "-", units::formatFlops(c.flops),
                units::formatBytes(c.bytes), units::formatSeconds(c.seconds), units::formatSeconds(forward),
                c.backwardPasses() > 0 ? units::formatSeconds(c.backwardSeconds) : "-",
                c.backwardPasses() > 0 ? units::formatSeconds(backward) : "-"});
    }
  }
  out << '\n';
  t.print(out);
}

void printFit(const std::vector<ModelTimes>& rows, const std::string& cluster, const hw::Device& was, double peakWas,
              const hw::Device& fitted, const calib::DeviceFit& fit, std::ostream& out) {
  Table t;
  for (const std::string& h : {std::string("model"), std::string("layer calls"), std::string("pass"), std::string("measured"),
                               fmt::format("predicted ({})", cluster), std::string("predicted (fitted)")}) {
    t.addColumn(h, h == "model" || h == "pass" ? Table::Align::kLeft : Table::Align::kRight);
  }
  for (const ModelTimes& m : rows) {
    for (const auto& [pass, times] : {std::pair{"forward", &m.forward}, std::pair{"backward", &m.backward}}) {
      if (times->measured <= 0) continue;
      t.addRow({m.model, std::to_string(m.calls), pass, units::formatSeconds(times->measured),
                versus(times->before, times->measured), versus(times->after, times->measured)});
    }
  }
  out << '\n';
  t.print(out);
  out << fmt::format("\nmemory bandwidth: {} ({} element-wise calls' bytes over their time; was {}); peak {} (was {})\n",
                     units::formatRate(fitted.memoryBandwidth), fit.memoryCalls, units::formatRate(was.memoryBandwidth),
                     units::formatFlopRate(fit.peak), units::formatFlopRate(peakWas));
  if (!fitted.bandwidthCurve.empty()) {
    out << "memory bandwidth by bytes per pass:";
    for (const hw::EfficiencyPoint& p : fitted.bandwidthCurve) {
      out << fmt::format("  {} {}", units::formatBytes(p.flops), units::formatRate(p.efficiency));
    }
    out << '\n';
  }
  out << "fraction of that bandwidth reached (forward, backward):  " << memoryKindsText(fitted) << '\n';
  printCurve("forward", fitted.efficiency, fit.computeCalls, out);
  if (!fitted.backwardEfficiency.empty()) printCurve("backward", fitted.backwardEfficiency, fit.backwardCalls, out);
  for (int k = 0; k < hw::kKernels; ++k) {
    const hw::KernelCurves& curves = fit.kernels[k];
    for (const auto& [what, curve] :
         {std::pair{"forward", &curves.forward}, std::pair{"backward", &curves.backward},
          std::pair{"native forward", &curves.native}}) {
      if (!curve->empty())
        printCurve(fmt::format("{} {}", hw::kKernelKeys[k], what).c_str(), *curve, -1, out);
    }
  }
  if (const std::string rows = kernelShapesText(fitted); !rows.empty()) {
    out << "at half its curve's rate over rows (samples x output positions): " << rows << '\n';
  }
  out << weightTrafficText(fitted) << '\n';
  out << speedProbeText(fitted) << '\n';
  if (fit.efficiency.empty()) out << "(too few compute-bound calls to fit the curve: kept the cluster's)\n";
}

nlohmann::json fitJson(const std::vector<ModelTimes>& rows, const std::string& cluster, const hw::Device& fitted,
                       const calib::DeviceFit& fit, const std::string& written) {
  nlohmann::json models = nlohmann::json::array();
  for (const ModelTimes& m : rows) {
    models.push_back({{"model", m.model}, {"layer_calls", m.calls}, {"measured_forward_seconds", m.forward.measured},
                      {"predicted_forward_seconds", m.forward.before}, {"fitted_forward_seconds", m.forward.after},
                      {"measured_backward_seconds", m.backward.measured},
                      {"predicted_backward_seconds", m.backward.before}, {"fitted_backward_seconds", m.backward.after}});
  }
  nlohmann::json kinds = nlohmann::json::object();
  for (int k = 0; k < hw::kMemoryKinds; ++k) {
    kinds[hw::kMemoryKindKeys[k]] = {{"forward", fitted.memoryEfficiency[k][0]}, {"backward", fitted.memoryEfficiency[k][1]},
                                     {"forward_flat", fitted.memoryEfficiency.flat[k][0]},
                                     {"backward_flat", fitted.memoryEfficiency.flat[k][1]}};
  }
  const nlohmann::json kernels = kernelShapesJson(fitted);
  return {{"cluster", cluster},
          {"models", models},
          {"memory_bandwidth_bytes_per_s", fitted.memoryBandwidth},
          {"memory_calls", fit.memoryCalls},
          {"memory_efficiency", kinds},
          {"peak_flops_per_s", fit.peak},
          {"weight_gradient_traffic",
           {{"per_pass", fitted.weightGradientTraffic.perPass},
            {"per_sample", fitted.weightGradientTraffic.perSample},
            {"one_sample", fitted.weightGradientTraffic.oneSample}}},
          {"forward_weight_traffic", fitted.forwardWeightTraffic},
          {"native_column_traffic", fitted.nativeColumnTraffic},
          {"traffic_counts_at_limit", calib::trafficCountsAtTheirLimit(fitted)},
          {"kernels", kernels},
          {"speed_probe_s", fitted.speedProbe},
          {"compute_calls", fit.computeCalls},
          {"backward_calls", fit.backwardCalls},
          {"efficiency", curveJson(fitted.efficiency)},
          {"backward_efficiency", curveJson(fitted.backwardEfficiency)},
          {"curve_fitted", !fit.efficiency.empty()},
          {"wrote", written}};
}

// Rank 0 writes the cluster with the fitted device, checked to load back.
void writeFittedCluster(const Options& o, hw::Cluster cluster, const hw::Device& fitted, int ranks) {
  cluster.device = fitted;
  const std::string where =
      o.device.cuda() ? o.device.str() : fmt::format("{} thread{}", o.threads, o.threads == 1 ? "" : "s");
  cluster.description +=
      o.fromCalls.empty()
          ? fmt::format(" (device fitted by paraxis bench compute: {} at batch {}, {} x {} rank{})", fmt::join(o.models, ", "),
                        fmt::join(o.batches, ", "), where, ranks, ranks == 1 ? "" : "s")
          : fmt::format(" (device fitted by paraxis bench compute to the timings in {})", o.fromCalls);
  const std::string yaml = hw::clusterYaml(cluster);
  hw::loadClusterText(yaml, o.out);  // what is written must load
  writeFileAtomically(o.out, yaml, "--out");
}

void run(Options& o, const CLI::App& command, Context& context) {
  o.device = parseComputeDevice(o.deviceName, "--device");
  train::requireDevice(o.device, "--device");
  comm::World world = comm::openWorld(context.argc, context.argv,
                                      {.deadlineSeconds = context.knobs.getDouble("comm_deadline"),
                                       .verify = context.knobs.getBool("comm_verify")});
  const comm::Communicator& comm = world.comm;
  agreeAcrossRanks(comm, runConfiguration(command, context.knobs));
  const double deadline = context.knobs.getDouble("comm_deadline");
  requireWritableDirectory(o.out, "--out");
  requireWritableDirectory(o.saveCalls, "--save-calls");
  const std::vector<graph::Model> models = o.fromCalls.empty() ? loadModels(o.models, "--model") : std::vector<graph::Model>{};
  const hw::Cluster cluster = hw::loadCluster(o.cluster);
  const double peak = cluster.device.peak(o.dtype);
  // Under mpirun every rank times the same passes at once; rank 0 reports its timings.
  std::ostringstream quiet;
  std::ostream& out = comm.rank() == 0 && !o.json ? context.out : quiet;
  const DeviceMeasurement m =
      o.fromCalls.empty()
          ? measureDevice(o, models, cluster.device, peak, comm, cluster.ranksOnANode(comm.size()), deadline, out)
          : fitTimings(calib::readSavedTimings(o.fromCalls), cluster.device, peak, o.dtype);
  if (comm.rank() != 0) return;
  if (!o.saveCalls.empty()) calib::writeSavedTimings(o.saveCalls, m.timings, "--save-calls");
  if (!o.out.empty()) writeFittedCluster(o, cluster, m.fitted, comm.size());
  const std::vector<ModelTimes> rows = compareModels(m.timings.timed, cluster.device, m.fitted, o.dtype);
  if (o.json) {
    nlohmann::json j = fitJson(rows, cluster.name, m.fitted, m.fit, o.out);
    j["sharing"] = sharingJson(m);
    j["cache"] = cacheJson(m);
    j["layer_overhead"] = callOverheadJson(m);
    return printJson(j, context);
  }
  if (o.perCall) printCalls(m.timings.timed, m.fitted, m.fitted.peak(o.dtype), out);
  printFit(rows, cluster.name, cluster.device, peak, m.fitted, m.fit, out);
  if (const std::string overhead = callOverheadText(m); !overhead.empty()) out << overhead << '\n';
  if (const std::string drift = speedDriftText(m); !drift.empty()) out << drift << '\n';
  out << cacheText(m) << '\n';
  out << sharingText(m) << '\n';
  if (const std::string shared = timeSharingText(m); !shared.empty()) out << shared << '\n';
  if (!o.out.empty()) out << fmt::format("wrote {} (use it as --cluster {})\n", o.out, o.out);
}

}  // namespace

void addBenchComputeCommand(CLI::App& bench, Context& context) {
  auto o = std::make_shared<Options>();
  CLI::App* c = bench.add_subcommand("compute", "Time models' layers here (under mpirun: as many ranks at once) and fit the cluster's device to them");
  c->add_option("--model", o->models, "models, comma-separated; NAME@INPUT sets a zoo model's input (default lenet,small-cnn,resnet18@64,cosmoflow@32)")
      ->delimiter(',');
  c->add_option("--batch", o->batches, "samples per pass; a comma-separated list times each (default 32)")
      ->delimiter(',')
      ->check(within(1, 1 << 20));
  c->add_option("--threads", o->threads, "torch threads (default 1, as one rank per core trains)")->check(within(1, 1024));
  c->add_option("--repeats", o->repeats, "timed passes after a warm-up; the median is used (default 5)")
      ->check(within(1, 10000));
  addClusterOptions(*c, o->cluster, o->dtype, "local; its device is the one fitted");
  c->add_option("--out", o->out, "write the cluster with the fitted device here");
  c->add_option("--device", o->deviceName, "cpu (default), cuda or cuda:N: where the layers run (docs/gpu.md)");
  c->add_flag("--per-call", o->perCall, "also list every timed layer call against the fitted device");
  c->add_option("--save-calls", o->saveCalls, "also write the timings the fit rests on here (JSON), to fit again later with --from-calls");
  auto* from = c->add_option("--from-calls", o->fromCalls,
                             "fit timings --save-calls wrote instead of timing anything (the same timings under another fit)");
  for (const char* timing : {"--model", "--batch", "--threads", "--repeats", "--device"}) from->excludes(timing);
  c->add_flag("--json", o->json, "print JSON (keys in docs/json-output.md)");
  c->callback([o, c, &context] { run(*o, *c, context); });
}

}  // namespace paraxis::cli
