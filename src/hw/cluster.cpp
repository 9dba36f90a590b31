#include "hw/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/error.hpp"
#include "core/thread_slice.hpp"

namespace paraxis::hw {

double Device::peak(const std::string& dtype) const {
  if (const auto it = peakFlops.find(dtype); it != peakFlops.end()) return it->second;
  std::vector<std::string> known;
  for (const auto& [name, value] : peakFlops) known.push_back(name);
  throw NotFoundError(fmt::format("device '{}' has no peak for data type '{}' (known: {})", name,
                                  dtype, fmt::join(known, ", ")));
}

namespace {

// Linear in log(flops) between the points of `curve`, whose logarithms are `logs`; clamped.
double interpolateLog(const std::vector<EfficiencyPoint>& curve, const std::vector<double>& logs, double logFlops) {
  if (curve.empty()) return 1.0;
  if (logFlops <= logs.front()) return curve.front().efficiency;
  if (logFlops >= logs.back()) return curve.back().efficiency;
  std::size_t i = 1;
  while (logFlops > logs[i]) ++i;
  const double t = (logFlops - logs[i - 1]) / (logs[i] - logs[i - 1]);
  return curve[i - 1].efficiency + t * (curve[i].efficiency - curve[i - 1].efficiency);
}

std::vector<double> logsOf(const std::vector<EfficiencyPoint>& curve) {
  std::vector<double> logs;
  for (const EfficiencyPoint& p : curve) logs.push_back(std::log(p.flops));
  return logs;
}

// `curve` at log(x), with the logarithms prepare() cached, or taken now if it has not run.
double curveAt(const std::vector<EfficiencyPoint>& curve, const std::vector<double>& logs, double logX) {
  return logs.size() == curve.size() ? interpolateLog(curve, logs, logX) : interpolateLog(curve, logsOf(curve), logX);
}

}  // namespace

double Device::efficiencyAtLog(double logFlops) const { return curveAt(efficiency, efficiencyLogs, logFlops); }

double Device::efficiencyAt(double flops) const {
  if (!(flops > 0)) return efficiency.empty() ? 1.0 : efficiency.front().efficiency;
  return efficiencyAtLog(std::log(flops));
}

double Device::efficiencyOf(int kernel, bool backward, double logFlops, bool native) const {
  const KernelCurves* k = kernel >= 0 ? &kernels[kernel] : nullptr;
  if (native && !backward && k != nullptr && !k->native.empty())
    return curveAt(k->native, kernelLogs[kernel][2], logFlops);
  if (backward && k != nullptr && !k->backward.empty()) return curveAt(k->backward, kernelLogs[kernel][1], logFlops);
  if (backward && !backwardEfficiency.empty()) return curveAt(backwardEfficiency, backwardEfficiencyLogs, logFlops);
  if (k != nullptr && !k->forward.empty()) return curveAt(k->forward, kernelLogs[kernel][0], logFlops);
  return efficiencyAtLog(logFlops);
}

double Device::secondsPerByte(double bytes) const {
  if (bandwidthCurve.empty() || bytes <= 0) return 1 / memoryBandwidth;
  return 1 / curveAt(bandwidthCurve, bandwidthLogs, std::log(bytes));
}

bool Device::backwardDiffers(int kernel, bool native) const {
  return !backwardEfficiency.empty() ||
         (kernel >= 0 && (!kernels[kernel].backward.empty() || (native && !kernels[kernel].native.empty())));
}

int Cluster::levelBetween(std::int64_t a, std::int64_t b) const {
  check(!levels.empty(), "cluster has network levels");
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (a / levels[i].ranks == b / levels[i].ranks) return static_cast<int>(i);
  }
  return static_cast<int>(levels.size()) - 1;
}

double CoreSharing::factor(std::int64_t running) const {
  if (isIdentity()) return 1;
  const double alone = 1 / aloneSpeedup;
  const double share = static_cast<double>(std::clamp<std::int64_t>(running, 1, ranks) - 1) / static_cast<double>(ranks - 1);
  return alone + (1 - alone) * share;
}

TimeSharing TimeSharing::at(std::int64_t running) const {
  if (isIdentity() || ranks <= 1 || running >= ranks) return *this;
  TimeSharing t = *this;
  const double share =
      static_cast<double>(std::max<std::int64_t>(running, 1) - 1) / static_cast<double>(ranks - 1);
  t.shared = 1 + (shared - 1) * share;
  return t;
}

double TimeSharing::factor(double span) const {
  if (isIdentity() || span <= 0) return 1;
  return 1 + (shared - 1) * -std::expm1(-span / slice);
}

Device Device::slowedBy(double factor) const {
  Device d = *this;
  for (auto& [dtype, peak] : d.peakFlops) peak /= factor;
  d.memoryBandwidth /= factor;
  for (EfficiencyPoint& p : d.bandwidthCurve) p.efficiency /= factor;  // {bytes, bytes/s}
  d.callOverhead *= factor;
  d.speedProbe *= factor;
  d.prepare();
  return d;
}

void Device::prepare() {
  efficiencyLogs = logsOf(efficiency);
  backwardEfficiencyLogs = logsOf(backwardEfficiency);
  bandwidthLogs = logsOf(bandwidthCurve);
  efficiencyFloor = 1.0;
  std::vector<const std::vector<EfficiencyPoint>*> curves{&efficiency, &backwardEfficiency};
  for (int k = 0; k < kKernels; ++k) {
    kernelLogs[k][0] = logsOf(kernels[k].forward);
    kernelLogs[k][1] = logsOf(kernels[k].backward);
    kernelLogs[k][2] = logsOf(kernels[k].native);
    for (const auto* curve : {&kernels[k].forward, &kernels[k].backward, &kernels[k].native})
      curves.push_back(curve);
  }
  for (const auto* curve : curves) {
    for (const EfficiencyPoint& p : *curve) efficiencyFloor = std::min(efficiencyFloor, p.efficiency);
  }
}

bool Implementation::isIdentity() const {
  for (const ImplementationFactor& f : kImplementationFactors) {
    if (this->*f.field != 1) return false;
  }
  for (const std::vector<PathLink>& links : paths) {
    if (!links.empty()) return false;
  }
  return overlap.isIdentity() && wireConversion.isIdentity() && skew == 0 && skewBeside == 0 && syncWait == 0 && syncWaitBeside == 0 &&
         handoffWait == 0;
}

const PathLink* Implementation::pathLink(CommPath path, const std::string& level) const {
  for (const PathLink& link : paths[static_cast<int>(path)]) {
    if (link.level == level) return &link;
  }
  return nullptr;
}

double Cluster::alphaOn(CommPath path, int level) const {
  const PathLink* link = implementation.pathLink(path, levels.at(level).name);
  return link != nullptr ? link->alpha : levels[level].alpha;
}

double Cluster::betaOn(CommPath path, int level) const {
  const PathLink* link = implementation.pathLink(path, levels.at(level).name);
  return link != nullptr ? link->beta : levels[level].beta;
}

namespace {

// The checks of validate(): each failure names the file (`source`) and the key.
struct Checker {
  const std::string& source;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ConfigError(fmt::format("{}: {}: {}", source, key, what));
  }
  // Every figure is finite: a bandwidth of 0 would make beta infinite and every time inf.
  void finite(double value, const std::string& key) const {
    if (!std::isfinite(value)) fail(key, fmt::format("expected a finite value, found {}", value));
  }
  // Physical ranges, wide enough for any machine: a denormal bandwidth is positive and finite
  // but makes every time infinite.
  void within(double value, double low, double high, const std::string& key) const {
    if (!(value >= low && value <= high)) fail(key, fmt::format("expected a value in [{:g}, {:g}], found {:g}", low, high, value));
  }
  // Points increasing in x (named `x`: flops, bytes) with 0 < x <= highX and y in [lowY, highY].
  void curve(const std::vector<EfficiencyPoint>& points, const std::string& key, const char* x, double highX,
             const char* y, double lowY, double highY) const {
    for (std::size_t i = 0; i < points.size(); ++i) {
      const std::string at = fmt::format("{}[{}]", key, i);
      const EfficiencyPoint& p = points[i];
      if (!(p.flops > 0 && p.flops <= highX) || !(p.efficiency >= lowY && p.efficiency <= highY)) {
        fail(at, fmt::format("expected 0 < {} <= {:g} and {:g} <= {} <= {:g}, found {:g} and {:g}", x, highX, lowY, y,
                             highY, p.flops, p.efficiency));
      }
      if (i > 0 && !(p.flops > points[i - 1].flops)) fail(at, fmt::format("expected {} to increase along the curve", x));
    }
  }
};

void validateDevice(const Device& device, const Checker& c) {
  if (device.peakFlops.empty()) c.fail("device.peak_flops", "expected at least one data type");
  for (const auto& [dtype, value] : device.peakFlops) c.within(value, 1e6, 1e21, "device.peak_flops." + dtype);
  c.within(device.memoryBytes, 1 << 20, 1e18, "device.memory");
  c.within(device.memoryBandwidth, 1e3, 1e16, "device.memory_bandwidth");
  c.within(device.callOverhead, 0, 1, "device.layer_overhead");
  c.within(device.channelTile, 1, 1e6, "device.channel_tile");
  c.within(device.weightGradientTraffic.perPass, 0, 64, "device.weight_gradient_traffic.per_pass");
  c.within(device.weightGradientTraffic.perSample, 0, 64, "device.weight_gradient_traffic.per_sample");
  c.within(device.weightGradientTraffic.oneSample, -1, 64, "device.weight_gradient_traffic.one_sample");
  c.within(device.forwardWeightTraffic, 0, 64, "device.forward_weight_traffic");
  c.within(device.nativeColumnTraffic, 0, 64, "device.native_column_traffic");
  c.within(device.speedProbe, 0, Device::kMaxSpeedProbe, "device.speed_probe");
  c.within(device.cacheShare, 0, 1e15, "device.cache_share");
  c.within(static_cast<double>(device.sharing.ranks), 1, 1e6, "device.sharing.ranks");
  c.within(device.sharing.aloneSpeedup, 1, 64, "device.sharing.alone_speedup");
  c.within(static_cast<double>(device.timeSharing.ranks), 1, 1e6, "device.time_sharing.ranks");
  c.within(device.timeSharing.shared, 1, 64, "device.time_sharing.shared");
  if (!device.timeSharing.isIdentity())
    c.within(device.timeSharing.slice, 1e-6, 10, "device.time_sharing.slice");
  const auto efficiency = [&](const std::vector<EfficiencyPoint>& points, const std::string& key) {
    c.curve(points, key, "flops", 1e30, "efficiency", kLowestEfficiency, 1);
  };
  efficiency(device.efficiency, "device.efficiency");
  efficiency(device.backwardEfficiency, "device.backward_efficiency");
  for (int k = 0; k < kKernels; ++k) {
    efficiency(device.kernels[k].forward, fmt::format("device.kernels.{}.efficiency", kKernelKeys[k]));
    efficiency(device.kernels[k].backward, fmt::format("device.kernels.{}.backward_efficiency", kKernelKeys[k]));
    efficiency(device.kernels[k].native, fmt::format("device.kernels.{}.native_efficiency", kKernelKeys[k]));
    for (const KernelFigure& f : kKernelFigures) {
      const double value = device.kernels[k].*f.member;
      if (value != f.none) {
        c.within(value, f.low, f.high, fmt::format("device.kernels.{}.{}", kKernelKeys[k], f.key));
      }
    }
  }
  c.curve(device.bandwidthCurve, "device.memory_bandwidth_curve", "bytes", 1e18, "bandwidth", 1e3, 1e16);
  for (int k = 0; k < kMemoryKinds; ++k) {
    c.within(device.memoryEfficiency[k][0], 1e-4, 100, fmt::format("device.memory_efficiency.{}.forward", kMemoryKindKeys[k]));
    c.within(device.memoryEfficiency[k][1], 1e-4, 100, fmt::format("device.memory_efficiency.{}.backward", kMemoryKindKeys[k]));
  }
}

void validateImplementation(const Implementation& implementation, const std::vector<NetworkLevel>& levels,
                            const Checker& c) {
  for (const ImplementationFactor& f : kImplementationFactors) {
    const double factor = implementation.*f.field;
    if (!(factor > 0 && factor <= 1e6)) {
      c.fail(std::string("implementation.") + f.key, fmt::format("expected a factor in (0, 1e6], found {}", factor));
    }
  }
  c.within(implementation.overlap.hidden, 0, 1, "implementation.overlap.hidden");
  c.within(implementation.overlap.slowdown, 1, 100, "implementation.overlap.slowdown");
  c.within(implementation.overlap.whileChunked(), 0, 1, "implementation.overlap.chunked");
  if (implementation.overlap.forward) c.within(*implementation.overlap.forward, 1e-4, 1, "implementation.overlap.forward");
  c.within(implementation.skew, 0, 1, "implementation.skew");
  c.within(implementation.skewBeside, 0, 1, "implementation.skew_beside");
  c.within(implementation.syncWait, 0, 1, "implementation.sync_wait");
  c.within(implementation.syncWaitBeside, 0, 1, "implementation.sync_wait_beside");
  c.within(implementation.handoffWait, 0, 1, "implementation.handoff_wait");
  if (implementation.commThreadSlice) {
    c.within(*implementation.commThreadSlice, 0, core::kLongestThreadSlice, "implementation.comm_thread_slice");
  }
  for (auto [rate, key] : {std::pair{implementation.wireConversion.f16, "f16"}, std::pair{implementation.wireConversion.bf16, "bf16"}}) {
    if (rate != 0) c.within(rate, 1e6, 1e15, fmt::format("implementation.wire_conversion.{} (bytes/s)", key));
  }
  for (int p = 0; p < kCommPaths; ++p) {
    for (const PathLink& link : implementation.paths[p]) {
      const std::string key = fmt::format("implementation.paths.{} ({})", kCommPathKeys[p], link.level);
      if (std::none_of(levels.begin(), levels.end(), [&](const NetworkLevel& l) { return l.name == link.level; })) {
        c.fail(key, "expected the name of one of the network's levels");
      }
      if (implementation.pathLink(static_cast<CommPath>(p), link.level) != &link) c.fail(key, "level given twice");
      c.within(link.alpha, 0, 1, key + " alpha");
      c.within(link.beta, 1e-16, 1e-3, key + " beta (1 / bandwidth)");
    }
  }
}

void validateNetwork(const std::vector<NetworkLevel>& levels, std::int64_t devices, const Checker& c) {
  if (levels.empty()) c.fail("network", "expected at least one level");
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const NetworkLevel& level = levels[i];
    const std::string key = fmt::format("network[{}] ({})", i, level.name);
    if (!(level.alpha >= 0 && level.alpha <= 1)) c.fail(key, fmt::format("alpha must be in [0, 1] s, found {}", level.alpha));
    if (!(level.beta > 0 && level.beta <= 1e-3)) {
      c.fail(key, fmt::format("bandwidth must be at least 1 KB/s and finite (beta in (0, 1e-3] s/B), found beta {}", level.beta));
    }
    c.finite(level.oversubscription, key + " oversubscription");
    c.finite(level.contention, key + " contention");
    if (level.oversubscription < 1) c.fail(key, "oversubscription must be >= 1");
    if (level.links < 1 || level.links > 1'000'000) c.fail(key, fmt::format("links must be in [1, 1000000], found {}", level.links));
    if (level.contention < 1) c.fail(key, "contention must be >= 1");
    if (i > 0 && (level.ranks <= levels[i - 1].ranks || level.ranks % levels[i - 1].ranks != 0)) {
      c.fail(key, fmt::format("spans {} ranks; expected a multiple of the previous level's {}", level.ranks,
                              levels[i - 1].ranks));
    }
  }
  if (levels.back().ranks < devices) {
    c.fail(fmt::format("network[{}] ({})", levels.size() - 1, levels.back().name),
           fmt::format("the outermost level spans {} ranks but the cluster has {} devices", levels.back().ranks, devices));
  }
}

}  // namespace

void Cluster::validate(const std::string& source) const {
  const Checker checker{source};
  validateDevice(device, checker);
  validateNetwork(levels, totalDevices(), checker);
  validateImplementation(implementation, levels, checker);
}

}  // namespace paraxis::hw
