// paraxis clusters            list the machine presets
// paraxis clusters show X     one preset or cluster .yaml file in detail
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "cli/json_output.hpp"
#include "cli/kernel_shapes.hpp"
#include "core/table.hpp"
#include "core/units.hpp"
#include "hw/presets.hpp"

namespace paraxis::cli {
namespace {

nlohmann::json clusterJson(const hw::Cluster& c) {
  using nlohmann::json;
  json implementation = {{"source", c.implementation.source}};
  for (const hw::ImplementationFactor& f : hw::kImplementationFactors) implementation[f.key] = c.implementation.*f.field;
  json paths = json::object();
  for (int p = 0; p < hw::kCommPaths; ++p) {
    json links = json::array();
    for (const hw::PathLink& l : c.implementation.paths[p]) {
      links.push_back({{"level", l.level}, {"alpha_s", l.alpha}, {"beta_s_per_byte", l.beta},
                       {"bandwidth_bytes_per_s", 1 / l.beta}});
    }
    paths[hw::kCommPathKeys[p]] = links;
  }
  implementation["paths"] = paths;
  implementation["overlap"] = {{"hidden", c.implementation.overlap.hidden},
                               {"slowdown", c.implementation.overlap.slowdown},
                               {"chunked", c.implementation.overlap.whileChunked()}};
  if (c.implementation.overlap.forward) implementation["overlap"]["forward"] = *c.implementation.overlap.forward;
  json levels = json::array();
  for (const auto& l : c.levels) {
    levels.push_back({{"name", l.name}, {"alpha_s", l.alpha}, {"beta_s_per_byte", l.beta},
                      {"bandwidth_bytes_per_s", l.bandwidth()}, {"ranks", l.ranks}, {"links", l.links},
                      {"injection_bandwidth_bytes_per_s", l.injectionBandwidth()},
                      {"oversubscription", l.oversubscription}});
  }
  return {
      {"name", c.name},
      {"description", c.description},
      {"device",
       {{"name", c.device.name},
        {"peak_flops", c.device.peakFlops},
        {"memory_bytes", c.device.memoryBytes},
        {"memory_bandwidth_bytes_per_s", c.device.memoryBandwidth},
        {"efficiency", curveJson(c.device.efficiency)},
        {"backward_efficiency", curveJson(c.device.backwardEfficiency)},
        {"channel_tile", c.device.channelTile},
        {"weight_gradient_traffic",
         {{"per_pass", c.device.weightGradientTraffic.perPass},
          {"per_sample", c.device.weightGradientTraffic.perSample},
          {"one_sample", c.device.weightGradientTraffic.oneSample}}},
        {"forward_weight_traffic", c.device.forwardWeightTraffic},
        {"native_column_traffic", c.device.nativeColumnTraffic},
        {"speed_probe_s", c.device.speedProbe},
        {"cache_share_bytes", c.device.cacheShare},
        {"sharing", {{"ranks", c.device.sharing.ranks}, {"alone_speedup", c.device.sharing.aloneSpeedup}}},
        {"time_sharing",
         {{"ranks", c.device.timeSharing.ranks},
          {"shared", c.device.timeSharing.shared},
          {"slice_s", c.device.timeSharing.slice}}},
        {"kernels", kernelShapesJson(c.device)}}},
      {"devices_per_node", c.devicesPerNode},
      {"nodes", c.nodes},
      {"total_devices", c.totalDevices()},
      {"network", levels},
      {"implementation", implementation}};
}

// What each communication path achieved where it was measured, in place of the level's figures.
void printPathLinks(const hw::Implementation& im, std::ostream& out) {
  bool any = false;
  for (const std::vector<hw::PathLink>& links : im.paths) any = any || !links.empty();
  if (!any) return;
  Table table;
  table.addColumn("path");
  table.addColumn("level");
  table.addColumn("alpha", Table::Align::kRight);
  table.addColumn("bandwidth", Table::Align::kRight);
  for (int p = 0; p < hw::kCommPaths; ++p) {
    for (const hw::PathLink& l : im.paths[p]) {
      table.addRow({hw::kCommPathKeys[p], l.level, units::formatSeconds(l.alpha), units::formatRate(1 / l.beta)});
    }
  }
  out << "\ncommunication paths as measured (replace the level's alpha and bandwidth for that path):\n";
  table.print(out);
}

// "  WHAT:  1 MFLOP 40%  10 MFLOP 60%" for a curve that is not empty.
void printEfficiencyCurve(const std::string& what, const std::vector<hw::EfficiencyPoint>& curve,
                          std::ostream& out) {
  if (!curve.empty()) out << "  " << what << ':' << efficiencyCurveText(curve) << '\n';
}

// Each matrix kernel's curves of its own, batched and its native calls' forward (LibTorch's own kernel).
void printKernelCurves(const hw::Device& d, std::ostream& out) {
  for (int k = 0; k < hw::kKernels; ++k) {
    const hw::KernelCurves& c = d.kernels[k];
    const char* key = hw::kKernelKeys[k];
    printEfficiencyCurve(fmt::format("{}'s own curve", key), c.forward, out);
    printEfficiencyCurve(fmt::format("{}'s backward", key), c.backward, out);
    printEfficiencyCurve(fmt::format("{}'s native calls forward (LibTorch's own kernel)", key), c.native,
                         out);
  }
}

void printDevice(const hw::Cluster& c, std::ostream& out) {
  out << fmt::format("device {}: memory {}, memory bandwidth {}\n", c.device.name,
                     units::formatBytes(c.device.memoryBytes), units::formatRate(c.device.memoryBandwidth));
  for (const auto& [dtype, peak] : c.device.peakFlops) {
    out << fmt::format("  peak {:<5} {}\n", dtype, units::formatFlopRate(peak));
  }
  printEfficiencyCurve("achieved fraction of peak by work per layer call", c.device.efficiency, out);
  if (!c.device.bandwidthCurve.empty()) {
    out << "  memory bandwidth by bytes per layer pass:";
    for (const auto& p : c.device.bandwidthCurve) {
      out << fmt::format("  {} {}", units::formatBytes(p.flops), units::formatRate(p.efficiency));
    }
    out << "\n";
  }
  printEfficiencyCurve("the same for a backward pass (each gradient)", c.device.backwardEfficiency, out);
  printKernelCurves(c.device, out);
  if (c.device.channelTile > 1) {
    out << fmt::format("  channel tile {:g}: a split leaving fewer channels still runs a whole tile\n", c.device.channelTile);
  }
  if (const hw::WeightGradientTraffic& t = c.device.weightGradientTraffic; !t.once()) {
    out << fmt::format("  weight gradients: a convolution's weight pass moves its weights {:g}x per pass and {:g}x per sample",
                       t.perPass, t.perSample);
    out << (t.oneSample >= 0 ? fmt::format(", {:g}x at one sample\n", t.oneSample) : std::string("\n"));
  }
  if (c.device.forwardWeightTraffic > 0) {
    out << fmt::format("  convolution weights: a forward over a batch moves them {:g}x before its arithmetic (a reorder)\n",
                       c.device.forwardWeightTraffic);
  }
  if (c.device.nativeColumnTraffic > 0) {
    out << fmt::format("  native convolutions (LibTorch's own kernel): each pass moves its column buffer {:g}x\n",
                       c.device.nativeColumnTraffic);
  }
  if (const std::string shapes = kernelShapesText(c.device); !shapes.empty()) {
    out << "  at half their curve's rate over rows (samples x output positions): " << shapes << '\n';
  }
  if (c.device.cacheShare > 0) {
    out << fmt::format("  cache: a rank keeps {:.0f} MiB of the last-level cache (weights its working set leaves there "
                       "stream from it)\n",
                       c.device.cacheShare / (1 << 20));
  }
  if (c.device.speedProbe > 0) {
    out << fmt::format("  speed probe: {:.2f} ms when measured (validate compares each run's)\n", c.device.speedProbe * 1e3);
  }
  if (!c.device.sharing.isIdentity()) {
    out << fmt::format("  measured with {} ranks a node computing at once; a rank alone computes {:.2f}x as fast (fewer "
                       "ranks a node: between the two)\n",
                       c.device.sharing.ranks, c.device.sharing.aloneSpeedup);
  }
  if (const hw::TimeSharing& t = c.device.timeSharing; !t.isIdentity()) {
    out << fmt::format(
        "  ranks time-share the cores: with {} ranks a node, a rank's compute between two synchronisations "
        "takes "
        "up to {:.2f}x its figures on the wall ({:.2f}x over {:.1f} ms, {:.2f}x over {:.1f} ms; fewer ranks "
        "a node: "
        "less)\n",
        t.ranks, t.shared, t.factor(t.slice), t.slice * 1e3, t.factor(4 * t.slice), 4 * t.slice * 1e3);
  }
}

void printLevels(const hw::Cluster& c, std::ostream& out) {
  out << "\nnetwork levels, innermost first:\n";
  Table table;
  table.addColumn("level");
  table.addColumn("ranks spanned", Table::Align::kRight);
  table.addColumn("alpha", Table::Align::kRight);
  table.addColumn("bandwidth", Table::Align::kRight);
  table.addColumn("beta (s/B)", Table::Align::kRight);
  table.addColumn("links in", Table::Align::kRight);
  table.addColumn("injection", Table::Align::kRight);
  table.addColumn("oversubscription", Table::Align::kRight);
  for (const auto& l : c.levels) {
    table.addRow({l.name, units::formatCount(static_cast<double>(l.ranks)), units::formatSeconds(l.alpha),
                  units::formatRate(l.bandwidth()), fmt::format("{:.3g}", l.beta),
                  units::formatCount(static_cast<double>(l.links)), units::formatRate(l.injectionBandwidth()),
                  fmt::format("{:g}:1", l.oversubscription)});
  }
  table.print(out);
  out << "bandwidth and beta are one link's; injection: what one unit of the level below (a device, a node, a\n"
         "rack) sends into the level at once over its links. One flow runs on one link.\n";
}

void printImplementation(const hw::Cluster& c, std::ostream& out) {
  const hw::Implementation& im = c.implementation;
  if (!im.isIdentity()) {
    out << fmt::format("\nimplementation factors (predicted time of that kind x factor){}:\n",
                       im.source.empty() ? "" : "; " + im.source);
    for (const hw::ImplementationFactor& f : hw::kImplementationFactors) {
      out << fmt::format("  {:<20} {:.3g}\n", f.key, im.*f.field);
    }
    printPathLinks(im, out);
    if (!im.overlap.isIdentity()) {
      out << fmt::format("\ncommunication beside compute progresses at {:.0f}% of its speed ({:.0f}% as the gradient "
                         "engine's chunks beside backward); compute runs {:.2f}x longer meanwhile\n",
                         im.overlap.hidden * 100, im.overlap.whileChunked() * 100, im.overlap.slowdown);
      if (im.overlap.forward) {
        out << fmt::format("the previous step's reductions progress through the next forward at {:.0f}% of their speed "
                           "(forward priority)\n", *im.overlap.forward * 100);
      }
    }
  }
}

void printCluster(const hw::Cluster& c, std::ostream& out) {
  out << fmt::format("{}: {}\n", c.name, c.description);
  out << fmt::format("{} nodes x {} devices = {} devices\n\n", units::formatCount(static_cast<double>(c.nodes)),
                     c.devicesPerNode, units::formatCount(static_cast<double>(c.totalDevices())));
  printDevice(c, out);
  printLevels(c, out);
  printImplementation(c, out);
}

void listClusters(bool json, Context& context) {
  if (json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const hw::Preset& preset : hw::presets()) rows.push_back(clusterJson(hw::loadCluster(preset.name)));
    printJson({{"clusters", rows}}, context);
    return;
  }
  Table table;
  table.addColumn("cluster");
  table.addColumn("devices", Table::Align::kRight);
  table.addColumn("per node", Table::Align::kRight);
  table.addColumn("device");
  table.addColumn("fp32 peak", Table::Align::kRight);
  table.addColumn("memory", Table::Align::kRight);
  table.addColumn("levels");
  for (const hw::Preset& preset : hw::presets()) {
    const hw::Cluster c = hw::loadCluster(preset.name);
    std::vector<std::string> levels;
    for (const auto& l : c.levels) levels.push_back(l.name);
    table.addRow({c.name, units::formatCount(static_cast<double>(c.totalDevices())),
                  std::to_string(c.devicesPerNode), c.device.name,
                  units::formatFlopRate(c.device.peak("fp32")), units::formatBytes(c.device.memoryBytes),
                  fmt::format("{}", fmt::join(levels, " > "))});
  }
  table.print(context.out);
  context.out << "\nShow one with 'paraxis clusters show NAME' (or a cluster .yaml file; see docs/cluster-format.md).\n";
}

}  // namespace

void addClustersCommand(CLI::App& app, Context& context) {
  CLI::App* clusters = app.add_subcommand("clusters", "List the machine presets, or show one in detail");
  auto listJson = std::make_shared<bool>(false);
  clusters->add_flag("--json", *listJson, "print every preset as JSON (keys in docs/json-output.md)");
  clusters->callback([clusters, listJson, &context] {
    if (clusters->get_subcommands().empty()) listClusters(*listJson, context);
  });
  struct Options {
    std::string cluster;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* show = clusters->add_subcommand("show", "Device, network levels and their alpha/beta");
  show->add_option("cluster", options->cluster, "preset name (see 'paraxis clusters') or a cluster .yaml file")
      ->required();
  show->add_flag("--json", options->json, "print JSON (keys in docs/json-output.md)");
  show->callback([options, &context] {
    const hw::Cluster cluster = hw::loadCluster(options->cluster);
    if (options->json) {
      printJson(clusterJson(cluster), context);
    } else {
      printCluster(cluster, context.out);
    }
  });
}

}  // namespace paraxis::cli
