#include "hw/cluster_yaml.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <thread>

#include "core/yaml_value.hpp"

namespace paraxis::hw {
namespace {

using units::Quantity;

std::int64_t hostCores() { return std::max(1U, std::thread::hardware_concurrency()); }

double hostMemory() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

bool isAuto(const YamlValue& v) { return v.isScalar() && v.text() == "auto"; }

// [[flops, efficiency], ...] or [{flops, efficiency}, ...].
std::vector<EfficiencyPoint> readCurve(const YamlValue& curve) {
  std::vector<EfficiencyPoint> points;
  for (const YamlValue& point : curve.items()) {
    if (point.isSequence()) {
      const auto pair = point.items();
      if (pair.size() != 2) point.fail("expected [flops, efficiency]");
      points.push_back({pair[0].number(), pair[1].number()});
    } else {
      point.requireKeys({"flops", "efficiency"});
      points.push_back({point.at("flops").number(), point.at("efficiency").number()});
    }
  }
  return points;
}

// How the node's ranks share its cores: `sharing` and `time_sharing`.
void readSharing(const YamlValue& v, Device& d) {
  if (auto sharing = v.find("sharing")) {
    if (!sharing->isMap()) sharing->fail("expected a mapping {ranks: N, alone_speedup: X}");
    sharing->requireKeys({"ranks", "alone_speedup"});
    d.sharing = {sharing->integer("ranks", 1, 1), sharing->number("alone_speedup", 1.0)};
  }
  if (auto timeSharing = v.find("time_sharing")) {
    if (!timeSharing->isMap()) timeSharing->fail("expected a mapping {ranks: N, shared: X, slice: SECONDS}");
    timeSharing->requireKeys({"ranks", "shared", "slice"});
    d.timeSharing = {timeSharing->integer("ranks", 1, 1), timeSharing->number("shared", 1.0),
                     timeSharing->at("slice").quantity(Quantity::kSeconds)};
  }
}

Device readDevice(const YamlValue& v, std::int64_t devicesPerNode) {
  // clang-format off
  v.requireKeys({"name", "peak_flops", "memory", "memory_bandwidth", "memory_bandwidth_curve", "efficiency",
                 "backward_efficiency", "kernels", "memory_efficiency", "layer_overhead", "channel_tile",
                 "weight_gradient_traffic", "forward_weight_traffic", "native_column_traffic", "receives_by_copy",
                 "split_keeps_rate", "speed_probe", "sharing", "time_sharing", "cache_share"});
  // clang-format on
  Device d;
  d.name = v.at("name").text();
  const YamlValue peaks = v.at("peak_flops");
  if (!peaks.isMap()) peaks.fail("expected a mapping of data type to FLOP/s, e.g. {fp32: 15.7 TFLOP/s}");
  for (const char* dtype : {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"}) {
    if (auto p = peaks.find(dtype)) d.peakFlops[dtype] = p->quantity(Quantity::kFlopsPerSecond);
  }
  peaks.requireKeys({"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"});
  const YamlValue memory = v.at("memory");
  // "auto": this host's memory shared by its devices (the `local` preset).
  d.memoryBytes = isAuto(memory) ? hostMemory() / static_cast<double>(devicesPerNode)
                                 : memory.quantity(Quantity::kBytes);
  d.memoryBandwidth = v.at("memory_bandwidth").quantity(Quantity::kBytesPerSecond);
  if (auto overhead = v.find("layer_overhead")) d.callOverhead = overhead->quantity(Quantity::kSeconds);
  d.channelTile = v.number("channel_tile", 1.0);
  if (auto traffic = v.find("weight_gradient_traffic")) {
    if (!traffic->isMap()) traffic->fail("expected a mapping {per_pass: N, per_sample: N}");
    traffic->requireKeys({"per_pass", "per_sample", "one_sample"});
    d.weightGradientTraffic = {traffic->number("per_pass", 1.0), traffic->number("per_sample", 0.0),
                               traffic->number("one_sample", -1.0)};
  }
  d.forwardWeightTraffic = v.number("forward_weight_traffic", 0.0);
  d.nativeColumnTraffic = v.number("native_column_traffic", 0.0);
  d.receivesByCopy = v.boolean("receives_by_copy", false);
  d.splitKeepsRate = v.boolean("split_keeps_rate", false);
  if (auto probe = v.find("speed_probe")) d.speedProbe = probe->quantity(Quantity::kSeconds);
  if (auto cache = v.find("cache_share")) d.cacheShare = cache->quantity(Quantity::kBytes);
  readSharing(v, d);
  if (auto curve = v.find("efficiency")) d.efficiency = readCurve(*curve);
  if (auto curve = v.find("backward_efficiency")) d.backwardEfficiency = readCurve(*curve);
  if (auto curve = v.find("memory_bandwidth_curve")) d.bandwidthCurve = readCurve(*curve);
  if (auto kernels = v.find("kernels")) {
    kernels->requireKeys(std::vector<std::string>(std::begin(kKernelKeys), std::end(kKernelKeys)));
    for (int k = 0; k < kKernels; ++k) {
      const auto kernel = kernels->find(kKernelKeys[k]);
      if (!kernel) continue;
      std::vector<std::string> keys{"efficiency", "backward_efficiency", "native_efficiency"};
      for (const KernelFigure& f : kKernelFigures) keys.emplace_back(f.key);
      kernel->requireKeys(keys);
      for (const KernelFigure& f : kKernelFigures) d.kernels[k].*f.member = kernel->number(f.key, f.none);
      if (auto curve = kernel->find("efficiency")) d.kernels[k].forward = readCurve(*curve);
      if (auto curve = kernel->find("backward_efficiency")) d.kernels[k].backward = readCurve(*curve);
      if (auto curve = kernel->find("native_efficiency")) d.kernels[k].native = readCurve(*curve);
    }
  }
  if (auto kinds = v.find("memory_efficiency")) {
    kinds->requireKeys(std::vector<std::string>(std::begin(kMemoryKindKeys), std::end(kMemoryKindKeys)));
    for (int k = 0; k < kMemoryKinds; ++k) {
      const auto kind = kinds->find(kMemoryKindKeys[k]);
      if (!kind) continue;
      kind->requireKeys({"forward", "backward", "forward_flat", "backward_flat"});
      d.memoryEfficiency[k][0] = kind->number("forward", 1.0);
      d.memoryEfficiency[k][1] = kind->number("backward", 1.0);
      d.memoryEfficiency.flat[k][0] = kind->boolean("forward_flat", false);
      d.memoryEfficiency.flat[k][1] = kind->boolean("backward_flat", false);
    }
  }
  return d;
}

// Seconds per byte from exactly one of 'bandwidth' or 'beta'.
double readBeta(const YamlValue& v) {
  const auto bandwidth = v.find("bandwidth");
  const auto beta = v.find("beta");
  if (bandwidth.has_value() == beta.has_value()) v.fail("give exactly one of 'bandwidth' or 'beta'");
  return bandwidth ? 1.0 / bandwidth->quantity(Quantity::kBytesPerSecond) : beta->number();
}

NetworkLevel readLevel(const YamlValue& v, std::int64_t devicesPerNode, std::int64_t total) {
  v.requireKeys({"name", "alpha", "bandwidth", "beta", "ranks", "links", "oversubscription", "contention"});
  NetworkLevel level;
  level.name = v.at("name").text();
  level.alpha = v.at("alpha").quantity(Quantity::kSeconds);
  level.beta = readBeta(v);
  const YamlValue ranks = v.at("ranks");
  const std::string spec = ranks.isScalar() ? ranks.text() : "";
  // "node" and "all" keep presets valid when devices_per_node or nodes change.
  level.ranks = spec == "node" ? devicesPerNode : spec == "all" ? total : ranks.integer(1);
  if (auto links = v.find("links")) level.links = links->integer(1);
  level.oversubscription = v.number("oversubscription", 1.0);
  level.contention = v.number("contention", 1.0);
  return level;
}

// One path's figures on one level: {level, alpha, bandwidth | beta}.
PathLink readPathLink(const YamlValue& v) {
  v.requireKeys({"level", "alpha", "bandwidth", "beta"});
  PathLink link;
  link.level = v.at("level").text();
  link.alpha = v.at("alpha").quantity(Quantity::kSeconds);
  link.beta = readBeta(v);
  return link;
}

Implementation readImplementation(const YamlValue& v) {
  std::vector<std::string> keys{"source", "paths", "overlap", "wire_conversion", "skew", "skew_beside", "sync_wait", "sync_wait_beside",
                                "handoff_wait", "comm_thread_slice"};
  for (const ImplementationFactor& f : kImplementationFactors) keys.emplace_back(f.key);
  v.requireKeys(keys);
  Implementation i;
  i.source = v.text("source", "");
  for (const ImplementationFactor& f : kImplementationFactors) i.*f.field = v.number(f.key, 1.0);
  i.skew = v.number("skew", 0.0);
  i.skewBeside = v.number("skew_beside", 0.0);
  i.syncWait = v.number("sync_wait", 0.0);
  i.syncWaitBeside = v.number("sync_wait_beside", 0.0);
  i.handoffWait = v.number("handoff_wait", 0.0);
  if (auto slice = v.find("comm_thread_slice")) i.commThreadSlice = slice->quantity(Quantity::kSeconds);
  if (auto overlap = v.find("overlap")) {
    overlap->requireKeys({"hidden", "slowdown", "chunked", "forward"});
    i.overlap.hidden = overlap->number("hidden", 1.0);
    i.overlap.slowdown = overlap->number("slowdown", 1.0);
    if (overlap->find("chunked")) i.overlap.chunked = overlap->number("chunked", i.overlap.hidden);
    if (overlap->find("forward")) i.overlap.forward = overlap->number("forward", 1.0);
  }
  if (auto conversion = v.find("wire_conversion")) {
    conversion->requireKeys({"f16", "bf16"});
    if (auto f16 = conversion->find("f16")) i.wireConversion.f16 = f16->quantity(Quantity::kBytesPerSecond);
    if (auto bf16 = conversion->find("bf16")) i.wireConversion.bf16 = bf16->quantity(Quantity::kBytesPerSecond);
  }
  if (auto paths = v.find("paths")) {
    paths->requireKeys(std::vector<std::string>(std::begin(kCommPathKeys), std::end(kCommPathKeys)));
    for (int p = 0; p < kCommPaths; ++p) {
      if (auto links = paths->find(kCommPathKeys[p])) {
        for (const YamlValue& link : links->items()) i.paths[p].push_back(readPathLink(link));
      }
    }
  }
  return i;
}

Cluster buildFrom(const YamlValue& root, const std::string& source) {
  root.requireKeys({"name", "description", "device", "devices_per_node", "nodes", "network", "implementation"});
  Cluster c;
  c.name = root.at("name").text();
  c.description = root.text("description", "");
  const YamlValue perNode = root.at("devices_per_node");
  c.devicesPerNode = isAuto(perNode) ? hostCores() : perNode.integer(1);
  c.nodes = root.at("nodes").integer(1);
  c.device = readDevice(root.at("device"), c.devicesPerNode);
  for (const YamlValue& level : root.at("network").items()) {
    c.levels.push_back(readLevel(level, c.devicesPerNode, c.totalDevices()));
  }
  if (auto implementation = root.find("implementation")) c.implementation = readImplementation(*implementation);
  c.validate(source);
  c.device.prepare();
  return c;
}

}  // namespace

namespace {

// A YAML string that cannot end early: double quotes and newlines become single quotes.
std::string quoted(std::string s) {
  for (char& ch : s) {
    if (ch == '"' || ch == '\n') ch = '\'';
  }
  return "\"" + s + "\"";
}

std::string implementationSection(const Implementation& implementation) {
  std::string section = fmt::format("implementation:\n  source: {}\n", quoted(implementation.source));
  for (const ImplementationFactor& f : kImplementationFactors) {
    section += fmt::format("  {}: {:.4g}\n", f.key, implementation.*f.field);
  }
  if (!implementation.overlap.isIdentity()) {
    const Overlap& o = implementation.overlap;
    section += fmt::format("  overlap: {{hidden: {:.4g}, slowdown: {:.4g}{}{}}}\n", o.hidden, o.slowdown,
                           o.chunked ? fmt::format(", chunked: {:.4g}", *o.chunked) : "",
                           o.forward ? fmt::format(", forward: {:.4g}", *o.forward) : "");
  }
  if (implementation.skew != 0) section += fmt::format("  skew: {:.4g}\n", implementation.skew);
  if (implementation.skewBeside != 0) section += fmt::format("  skew_beside: {:.4g}\n", implementation.skewBeside);
  if (implementation.syncWait != 0) section += fmt::format("  sync_wait: {:.4g}\n", implementation.syncWait);
  if (implementation.syncWaitBeside != 0) {
    section += fmt::format("  sync_wait_beside: {:.4g}\n", implementation.syncWaitBeside);
  }
  if (implementation.handoffWait != 0) section += fmt::format("  handoff_wait: {:.4g}\n", implementation.handoffWait);
  if (implementation.commThreadSlice) {
    section += fmt::format("  comm_thread_slice: {:.4g}\n", *implementation.commThreadSlice);
  }
  if (!implementation.wireConversion.isIdentity()) {
    section += fmt::format("  wire_conversion: {{f16: {:.4g}, bf16: {:.4g}}}\n", implementation.wireConversion.f16,
                           implementation.wireConversion.bf16);
  }
  bool anyPath = false;
  for (int p = 0; p < kCommPaths; ++p) {
    if (implementation.paths[p].empty()) continue;
    if (!anyPath) section += "  paths:\n";
    anyPath = true;
    section += fmt::format("    {}:\n", kCommPathKeys[p]);
    for (const PathLink& l : implementation.paths[p]) {
      section += fmt::format("      - {{level: {}, alpha: {:.6g}, beta: {:.6g}}}\n", quoted(l.level), l.alpha, l.beta);
    }
  }
  return section;
}

}  // namespace

namespace {

std::string curveYaml(const char* key, const std::vector<EfficiencyPoint>& curve, const char* indent) {
  if (curve.empty()) return {};
  std::string y = fmt::format("{}{}:", indent, key);
  for (const EfficiencyPoint& p : curve) y += fmt::format("\n{}  - [{:.6g}, {:.6g}]", indent, p.flops, p.efficiency);
  return y + "\n";
}

// The device's `kernels:` section: the kernels with curves or shapes of their own.
std::string kernelsYaml(const Device& d) {
  std::string y;
  for (int k = 0; k < kKernels; ++k) {
    const KernelCurves& curves = d.kernels[k];
    if (curves.forward.empty() && curves.backward.empty() && curves.native.empty() && !hasShape(curves)) {
      continue;
    }
    if (y.empty()) y += "  kernels:\n";
    y += fmt::format("    {}:\n", kKernelKeys[k]);
    y += curveYaml("efficiency", curves.forward, "      ");
    y += curveYaml("backward_efficiency", curves.backward, "      ");
    if (!curves.native.empty()) y += curveYaml("native_efficiency", curves.native, "      ");
    for (const KernelFigure& f : kKernelFigures) {
      if (curves.*f.member != f.none) y += fmt::format("      {}: {:.6g}\n", f.key, curves.*f.member);
    }
  }
  return y;
}

// The device's `memory_efficiency:` section: the memory kinds off the bandwidth curve.
std::string memoryKindsYaml(const Device& d) {
  std::string y;
  for (int k = 0; k < kMemoryKinds; ++k) {
    const double* e = d.memoryEfficiency[k];
    const bool* flat = d.memoryEfficiency.flat[k];
    if (e[0] == 1 && e[1] == 1 && !flat[0] && !flat[1]) continue;
    if (y.empty()) y += "  memory_efficiency:\n";
    y += fmt::format("    {}: {{forward: {:.6g}, backward: {:.6g}{}{}}}\n", kMemoryKindKeys[k], e[0], e[1],
                     flat[0] ? ", forward_flat: true" : "", flat[1] ? ", backward_flat: true" : "");
  }
  return y;
}

}  // namespace

std::string clusterYaml(const Cluster& c) {
  std::string y = fmt::format("name: {}\ndescription: {}\ndevice:\n  name: {}\n  peak_flops: {{", quoted(c.name),
                              quoted(c.description), quoted(c.device.name));
  bool first = true;
  for (const auto& [dtype, peak] : c.device.peakFlops) {
    y += fmt::format("{}{}: {:.17g}", first ? "" : ", ", dtype, peak);
    first = false;
  }
  y += fmt::format("}}\n  memory: {:.17g}\n  memory_bandwidth: {:.17g}\n  layer_overhead: {:.17g}\n  channel_tile: {:.17g}\n",
                   c.device.memoryBytes, c.device.memoryBandwidth, c.device.callOverhead, c.device.channelTile);
  if (const WeightGradientTraffic& t = c.device.weightGradientTraffic; !t.once()) {
    y += fmt::format("  weight_gradient_traffic: {{per_pass: {:.6g}, per_sample: {:.6g}", t.perPass, t.perSample);
    y += t.oneSample >= 0 ? fmt::format(", one_sample: {:.6g}}}\n", t.oneSample) : std::string("}\n");
  }
  if (c.device.forwardWeightTraffic != 0) {
    y += fmt::format("  forward_weight_traffic: {:.6g}\n", c.device.forwardWeightTraffic);
  }
  if (c.device.nativeColumnTraffic != 0) {
    y += fmt::format("  native_column_traffic: {:.6g}\n", c.device.nativeColumnTraffic);
  }
  if (c.device.receivesByCopy) y += "  receives_by_copy: true\n";
  if (c.device.splitKeepsRate) y += "  split_keeps_rate: true\n";
  if (c.device.speedProbe > 0) y += fmt::format("  speed_probe: {:.6g}\n", c.device.speedProbe);
  if (c.device.cacheShare > 0) y += fmt::format("  cache_share: {:.17g}\n", c.device.cacheShare);
  if (!c.device.sharing.isIdentity()) {
    y += fmt::format("  sharing: {{ranks: {}, alone_speedup: {:.6g}}}\n", c.device.sharing.ranks, c.device.sharing.aloneSpeedup);
  }
  if (const TimeSharing& t = c.device.timeSharing; !t.isIdentity()) {
    y += fmt::format("  time_sharing: {{ranks: {}, shared: {:.6g}, slice: {:.6g}}}\n", t.ranks, t.shared,
                     t.slice);
  }
  y += curveYaml("efficiency", c.device.efficiency, "  ");
  y += curveYaml("backward_efficiency", c.device.backwardEfficiency, "  ");
  y += curveYaml("memory_bandwidth_curve", c.device.bandwidthCurve, "  ");
  y += kernelsYaml(c.device) + memoryKindsYaml(c.device);
  y += fmt::format("devices_per_node: {}\nnodes: {}\nnetwork:\n", c.devicesPerNode, c.nodes);
  for (const NetworkLevel& l : c.levels) {
    y += fmt::format("  - {{name: {}, alpha: {:.17g}, beta: {:.17g}, ranks: {}, links: {}, oversubscription: {:.17g}, contention: {:.17g}}}\n",
                     quoted(l.name), l.alpha, l.beta, l.ranks, l.links, l.oversubscription, l.contention);
  }
  // The slice is a record, not a term (isIdentity leaves it out), and is kept all the same.
  const bool none = c.implementation.isIdentity() && !c.implementation.commThreadSlice;
  return none ? y : y + implementationSection(c.implementation);
}

std::string withImplementation(const std::string& yaml, const Implementation& implementation) {
  std::string kept;
  bool inSection = false;
  std::size_t start = 0;
  while (start < yaml.size()) {
    std::size_t end = yaml.find('\n', start);
    end = end == std::string::npos ? yaml.size() : end + 1;
    const std::string line = yaml.substr(start, end - start);
    const bool topLevel = !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '\n' && line[0] != '#';
    if (topLevel) inSection = line.rfind("implementation:", 0) == 0;
    if (!inSection) kept += line;
    start = end;
  }
  if (!kept.empty() && kept.back() != '\n') kept += '\n';
  return kept + implementationSection(implementation);
}

Cluster loadClusterFile(const std::string& path) {
  try {
    return buildFrom(loadYamlFile(path), path);
  } catch (const YAML::Exception& e) {
    failOnYamlError(e, path);
  }
}

Cluster loadClusterText(const std::string& text, const std::string& name) {
  try {
    return buildFrom(loadYamlText(text, name), name);
  } catch (const YAML::Exception& e) {
    failOnYamlError(e, name);
  }
}

}  // namespace paraxis::hw
