#include "cli/plan_report.hpp"

#include <fmt/format.h>

#include <map>
#include <ostream>
#include <set>

#include "core/table.hpp"
#include "core/units.hpp"
#include "graph/model.hpp"

namespace paraxis::cli {
namespace {

using units::formatBytes;
using units::formatSeconds;

std::string ms(double seconds) { return fmt::format("{:.1f}", seconds * 1e3); }

std::string duration(double seconds) {
  if (seconds <= 0) return "-";
  if (seconds < 3600) return fmt::format("{:.1f} min", seconds / 60);
  if (seconds < 3 * 86400) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} d", seconds / 86400);
}

// Where strategies are compared over several GPU counts: the fastest to train at each, with
// the counts where the lead changes hands (Pal et al.'s crossover of DP x MP and DP).
void printLeaders(const std::vector<plan::Estimate>& estimates, std::ostream& out) {
  std::map<int, const plan::Estimate*> best;  // per GPU count
  std::set<std::string> strategies;
  for (const plan::Estimate& e : estimates) {
    if (!e.feasible || !e.fits || !(e.timeToTrain > 0)) continue;
    strategies.insert(e.strategy.name);
    const plan::Estimate*& b = best[e.strategy.grid.total()];
    if (b == nullptr || e.timeToTrain < b->timeToTrain) b = &e;
  }
  if (best.size() < 2 || strategies.size() < 2) return;
  std::vector<std::string> spans;
  int from = 0, to = 0;
  std::string leader;
  const auto close = [&] {
    spans.push_back(fmt::format("{} GPUs {}", from == to ? std::to_string(from) : fmt::format("{}-{}", from, to), leader));
  };
  for (const auto& [gpus, e] : best) {
    if (!leader.empty() && e->strategy.name != leader) close();
    if (leader.empty() || e->strategy.name != leader) from = gpus, leader = e->strategy.name;
    to = gpus;
  }
  close();
  out << fmt::format("\nfastest to train: {}{}\n", fmt::join(spans, "; "),
                     spans.size() > 1 ? " (the lead changes hands)" : "");
}

}  // namespace

void printPlanTable(const graph::Model& model, const hw::Cluster& cluster, const plan::PlanInputs& in,
                    const std::vector<plan::Estimate>& estimates, std::ostream& out) {
  out << fmt::format("{} on {} ({}), {} samples per epoch ({}); times per iteration in ms\n", model.name(),
                     cluster.name, cluster.device.name, units::formatCount(in.datasetSamples), in.dataset);
  if (!cluster.implementation.isIdentity()) {
    out << fmt::format("with the cluster's implementation factors ({})\n",
                       cluster.implementation.source.empty() ? "no source given" : cluster.implementation.source);
  }
  out << '\n';
  Table t;
  t.addColumn("#", Table::Align::kRight);
  t.addColumn("strategy");
  t.addColumn("grid");
  t.addColumn("GPUs", Table::Align::kRight);
  t.addColumn("batch/GPU", Table::Align::kRight);
  t.addColumn("global", Table::Align::kRight);
  t.addColumn("iter", Table::Align::kRight);
  t.addColumn("compute", Table::Align::kRight);
  t.addColumn("comm", Table::Align::kRight);
  t.addColumn("halo", Table::Align::kRight);
  t.addColumn("bubble", Table::Align::kRight);
  t.addColumn("mem/GPU", Table::Align::kRight);
  t.addColumn("fits");
  t.addColumn("samples/s", Table::Align::kRight);
  t.addColumn("scal.eff", Table::Align::kRight);
  t.addColumn("epochs", Table::Align::kRight);
  t.addColumn("to train", Table::Align::kRight);
  t.addColumn("bottleneck");
  int rank = 0;
  for (const plan::Estimate& e : estimates) {
    const plan::Strategy& s = e.strategy;
    const int gpus = s.grid.total();
    const std::string perGpu = gpus > 0 ? fmt::format("{:g}", static_cast<double>(s.globalBatch) / gpus) : "-";
    if (!e.feasible) {
      t.addRow({"-", s.name, s.grid.str(), std::to_string(gpus), perGpu, std::to_string(s.globalBatch), "-", "-", "-", "-",
                "-", "-", "no", "-", "-", "-", "-", e.bottleneck});
      continue;
    }
    const plan::TimeBreakdown& tb = e.time;
    t.addRow({std::to_string(++rank), s.name, s.grid.str(), std::to_string(gpus), perGpu, std::to_string(s.globalBatch),
              ms(tb.iteration()), ms(tb.compute()), ms(tb.communication() - tb.halo), ms(tb.halo), ms(tb.bubble),
              formatBytes(e.memory.total()), e.fits ? "yes" : "NO", fmt::format("{:.0f}", e.samplesPerSecond),
              fmt::format("{:.2f}", e.scalingEfficiency), fmt::format("{:.0f}", e.epochs), duration(e.timeToTrain),
              e.bottleneck});
  }
  t.print(out);
  printLeaders(estimates, out);
  out << fmt::format("\nepochs to the target accuracy: {}.\n", in.statistics.describe());
  out << "comm: exposed gradient allreduce + per-layer collectives + pipeline transfers; scal.eff: samples/s over "
         "GPUs x one GPU's samples/s at the same batch per GPU.\n";
}

void printPlanCsv(const std::vector<plan::Estimate>& estimates, std::ostream& out) {
  out << "strategy,grid,gpus,global_batch,feasible,fits,iteration_s,compute_s,communication_s,halo_s,bubble_s,"
         "memory_bytes,samples_per_s,scaling_efficiency,epochs,time_to_train_s,bottleneck\n";
  for (const plan::Estimate& e : estimates) {
    const plan::TimeBreakdown& t = e.time;
    out << fmt::format("{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.4g},{:.4g},{:.6g},\"{}\"\n",
                       e.strategy.name, e.strategy.grid.str(), e.strategy.grid.total(), e.strategy.globalBatch,
                       e.feasible, e.fits, t.iteration(), t.compute(), t.communication(), t.halo, t.bubble,
                       e.memory.total(), e.samplesPerSecond, e.scalingEfficiency, e.epochs, e.timeToTrain, e.bottleneck);
  }
}

namespace {

// The layers that take time, with the ms a `train --trace` of the same run sums per layer (its
// `layer` and `layer_backward` events) beside them.
void printLayerTimes(const graph::Model& model, const std::vector<plan::LayerTime>& layers, std::ostream& out) {
  if (layers.empty()) return;
  Table t;
  for (const char* h : {"layer", "forward", "backward", "halo+collectives"}) {
    t.addColumn(h, std::string(h) == "layer" ? Table::Align::kLeft : Table::Align::kRight);
  }
  const auto ms = [](double seconds) { return fmt::format("{:.3f}", seconds * 1e3); };
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const plan::LayerTime& l = layers[i];
    if (l.forward + l.backward + l.communication <= 0) continue;
    t.addRow({model.layer(static_cast<int>(i)).name, ms(l.forward), ms(l.backward), ms(l.communication)});
  }
  out << "per layer, ms on one rank (before the gradient schedule's stretch; a pipeline's: one micro-batch)\n";
  t.print(out);
}

}  // namespace

void printExplanation(const plan::PlanInputs& in, const plan::Estimate& e, const std::vector<plan::LayerTime>& layers,
                      std::ostream& out) {
  const plan::Strategy& s = e.strategy;
  const plan::TimeBreakdown& t = e.time;
  const plan::MemoryBreakdown& m = e.memory;
  out << fmt::format("\nexplain: {} ({}) on {} GPUs, global batch {}\n", s.name, s.grid.str(), s.grid.total(), s.globalBatch);
  if (!e.feasible) {
    out << "  infeasible: " << e.infeasibleReason << '\n';
    return;
  }
  auto line = [&](const char* what, double seconds) {
    out << fmt::format("  {:<34} {:>12}\n", what, formatSeconds(seconds));
  };
  out << "per iteration\n";
  line("forward", t.forward);
  line("backward (data gradients)", t.backwardData);
  line("backward (weight gradients)", t.backwardWeight);
  line("optimizer update", t.update);
  line(("gradient allreduce (" + e.allreduceAlgorithm + ")").c_str(), t.gradientAllreduce);
  line("  of which exposed after backward", t.gradientExposed);
  if (t.gradientExposed > 0) {  // its parts (plan::ExposedGradientParts), as validate --trace sets them out
    line("    the reductions, waited for", e.exposedParts.reductions);
    line("    the ranks' drift after it", e.exposedParts.drift);
    line("    one wait a group beside them", e.exposedParts.groupAwaits);
  }
  line("halo exchange", t.halo);
  line("per-layer collectives", t.layerCollectives);
  line("redistributions (shuffles)", t.shuffle);
  line("pipeline transfers", t.pipelineP2P);
  line("pipeline bubble", t.bubble);
  line("iteration (expected)", t.iteration());
  out << fmt::format("  {:<34} {:>12} .. {}\n", "range (optimistic .. congested)", formatSeconds(e.iterationOptimistic),
                     formatSeconds(e.iterationCongested));
  out << "per GPU memory\n";
  auto bytes = [&](const char* what, double b) { out << fmt::format("  {:<34} {:>12}\n", what, formatBytes(b)); };
  bytes("weights", m.weights);
  bytes("gradients", m.gradients);
  bytes("optimizer state", m.optimizer);
  bytes("activations kept for backward", m.activations);
  bytes("halo buffers", m.halo);
  bytes("fusion buffer", m.fusion);
  bytes("in-flight micro-batches", m.pipelineInFlight);
  bytes("workspace", m.workspace);
  out << fmt::format("  {:<34} {:>12} of {} ({})\n", "total", formatBytes(m.total()), formatBytes(e.memoryCapacity),
                     e.fits ? "fits" : "does NOT fit: " + m.largest());
  out << "training\n";
  out << fmt::format("  {:<34} {:>12.0f}\n", "samples/s", e.samplesPerSecond);
  out << fmt::format("  {:<34} {:>12.0f} x {}\n", "iterations per epoch x iteration", e.iterationsPerEpoch, formatSeconds(t.iteration()));
  out << fmt::format("  {:<34} {:>12.1f} (E(B) at B={})\n", "epochs to target", e.epochs, s.globalBatch);
  out << fmt::format("  {:<34} {:>12}\n", "time to train", formatSeconds(e.timeToTrain));
  out << fmt::format("  {:<34} {:>12.0f}\n", "device-hours", e.deviceHours);
  out << fmt::format("speedup over one GPU = {} workers x {:.2f} model-parallel x {:.2f} scaling efficiency x {:.2f} "
                     "statistical efficiency = {:.1f}\n",
                     s.grid.data, e.modelParallelSpeedup, e.scalingEfficiency * s.grid.total() / s.grid.data /
                                                              std::max(1e-9, e.modelParallelSpeedup),
                     e.statisticalEfficiency,
                     e.scalingEfficiency * s.grid.total() * e.statisticalEfficiency);
  out << "bottleneck: " << e.bottleneck << '\n';
  printLayerTimes(*in.model, layers, out);
}

void printLayerSearch(const graph::Model& model, const plan::LayerSearchResult& r, int gpus, std::int64_t batch,
                      std::ostream& out) {
  out << fmt::format("{}: per-layer distributions over {} GPUs, global batch {} (n samples x d x h x w, r replicas)\n\n",
                     model.name(), gpus, batch);
  Table t;
  t.addColumn("#", Table::Align::kRight);
  t.addColumn("layer");
  t.addColumn("output", Table::Align::kRight);
  t.addColumn("distribution");
  t.addColumn("layer ms", Table::Align::kRight);
  t.addColumn("shuffle ms", Table::Align::kRight);
  for (int i = 0; i < model.size(); ++i) {
    const bool changed = i == 0 || !(r.perLayer[i] == r.perLayer[i - 1]);
    t.addRow({std::to_string(i), model.layer(i).name, model.layer(i).output.str(), changed ? r.perLayer[i].str() : "\"",
              fmt::format("{:.3f}", r.layerSeconds[i] * 1e3),
              r.shuffleSeconds[i] > 0 ? fmt::format("{:.3f}", r.shuffleSeconds[i] * 1e3) : ""});
  }
  t.print(out);
  out << fmt::format("\ntotal {} per iteration (layers {}, shuffles {})\n", formatSeconds(r.totalSeconds),
                     formatSeconds(r.totalSeconds - [&] {
                       double s = 0;
                       for (double x : r.shuffleSeconds) s += x;
                       return s;
                     }()),
                     formatSeconds([&] {
                       double s = 0;
                       for (double x : r.shuffleSeconds) s += x;
                       return s;
                     }()));
}

void printParadlTable(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  Table t;
  t.addColumn("strategy");
  t.addColumn("grid");
  t.addColumn("GPUs", Table::Align::kRight);
  t.addColumn("global", Table::Align::kRight);
  t.addColumn("compute s/epoch", Table::Align::kRight);
  t.addColumn("comm s/epoch", Table::Align::kRight);
  t.addColumn("total s/epoch", Table::Align::kRight);
  for (const auto& row : rows) t.addRow(row);
  out << "ParaDL's equations (compute: one measured per-sample time shared over layers by ParaDL's FLOP count;\n"
         "communication: alpha-beta rings with ParaDL's platform latencies)\n\n";
  t.print(out);
}

}  // namespace paraxis::cli
