#include "hw/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/error.hpp"

namespace paraxis::hw {

double Device::peak(const std::string& dtype) const {
  if (const auto it = peakFlops.find(dtype); it != peakFlops.end()) return it->second;
  std::vector<std::string> known;
  for (const auto& [name, value] : peakFlops) known.push_back(name);
  throw NotFoundError(fmt::format("device '{}' has no peak for data type '{}' (known: {})", name,
                                  dtype, fmt::join(known, ", ")));
}

double Device::efficiencyAt(double flops) const {
  if (efficiency.empty()) return 1.0;
  if (flops <= efficiency.front().flops) return efficiency.front().efficiency;
  if (flops >= efficiency.back().flops) return efficiency.back().efficiency;
  for (std::size_t i = 1; i < efficiency.size(); ++i) {
    const EfficiencyPoint& hi = efficiency[i];
    if (flops > hi.flops) continue;
    const EfficiencyPoint& lo = efficiency[i - 1];
    // log(a/b) for both ratios: one log for the query, the segment's from the cached table.
    const double t = efficiencyLogs.size() == efficiency.size()
                         ? (std::log(flops) - efficiencyLogs[i - 1]) / (efficiencyLogs[i] - efficiencyLogs[i - 1])
                         : std::log(flops / lo.flops) / std::log(hi.flops / lo.flops);
    return lo.efficiency + t * (hi.efficiency - lo.efficiency);
  }
  return efficiency.back().efficiency;
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

}  // namespace

double Device::efficiencyAtLog(double logFlops) const {
  if (efficiencyLogs.size() != efficiency.size()) return efficiencyAt(std::exp(logFlops));
  return interpolateLog(efficiency, efficiencyLogs, logFlops);
}

double Device::backwardEfficiencyAtLog(double logFlops) const {
  if (backwardEfficiency.empty()) return efficiencyAtLog(logFlops);
  if (backwardEfficiencyLogs.size() != backwardEfficiency.size()) {
    return interpolateLog(backwardEfficiency, logsOf(backwardEfficiency), logFlops);
  }
  return interpolateLog(backwardEfficiency, backwardEfficiencyLogs, logFlops);
}

double Device::efficiencyOf(int kernel, bool backward, double logFlops) const {
  if (kernel >= 0) {
    const KernelCurves& k = kernels[kernel];
    const std::vector<double>(&logs)[2] = kernelLogs[kernel];
    if (backward && !k.backward.empty()) {
      return interpolateLog(k.backward, logs[1].size() == k.backward.size() ? logs[1] : logsOf(k.backward), logFlops);
    }
    if (!k.forward.empty() && !(backward && !backwardEfficiency.empty())) {
      return interpolateLog(k.forward, logs[0].size() == k.forward.size() ? logs[0] : logsOf(k.forward), logFlops);
    }
  }
  return backward ? backwardEfficiencyAtLog(logFlops) : efficiencyAtLog(logFlops);
}

double Device::secondsPerByte(double bytes) const {
  if (bandwidthCurve.empty() || bytes <= 0) return 1 / memoryBandwidth;
  if (bandwidthLogs.size() != bandwidthCurve.size()) {
    return 1 / interpolateLog(bandwidthCurve, logsOf(bandwidthCurve), std::log(bytes));
  }
  return 1 / interpolateLog(bandwidthCurve, bandwidthLogs, std::log(bytes));
}

bool Device::backwardDiffers(int kernel) const {
  return !backwardEfficiency.empty() || (kernel >= 0 && !kernels[kernel].backward.empty());
}

int Cluster::levelBetween(std::int64_t a, std::int64_t b) const {
  check(!levels.empty(), "cluster has network levels");
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (a / levels[i].ranks == b / levels[i].ranks) return static_cast<int>(i);
  }
  return static_cast<int>(levels.size()) - 1;
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
    curves.push_back(&kernels[k].forward);
    curves.push_back(&kernels[k].backward);
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
  return overlap.isIdentity();
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

void Cluster::validate(const std::string& source) const {
  auto fail = [&](const std::string& key, const std::string& what) {
    throw ConfigError(fmt::format("{}: {}: {}", source, key, what));
  };
  // Every figure is finite: a bandwidth of 0 would make beta infinite and every time inf.
  const auto finite = [&](double value, const std::string& key) {
    if (!std::isfinite(value)) fail(key, fmt::format("expected a finite value, found {}", value));
  };
  // Physical ranges, wide enough for any machine: a denormal bandwidth is positive and finite
  // but makes every time infinite.
  const auto within = [&](double value, double low, double high, const std::string& key) {
    if (!(value >= low && value <= high)) fail(key, fmt::format("expected a value in [{:g}, {:g}], found {:g}", low, high, value));
  };
  if (device.peakFlops.empty()) fail("device.peak_flops", "expected at least one data type");
  for (const auto& [dtype, value] : device.peakFlops) within(value, 1e6, 1e21, "device.peak_flops." + dtype);
  within(device.memoryBytes, 1 << 20, 1e18, "device.memory");
  within(device.memoryBandwidth, 1e3, 1e16, "device.memory_bandwidth");
  within(device.callOverhead, 0, 1, "device.layer_overhead");
  within(device.channelTile, 1, 1e6, "device.channel_tile");
  for (const auto& [dtype, value] : device.peakFlops) {
    if (!(value > 0)) fail("device.peak_flops." + dtype, fmt::format("expected > 0, found {}", value));
  }
  if (!(device.memoryBytes > 0)) fail("device.memory", "expected > 0");
  if (!(device.memoryBandwidth > 0)) fail("device.memory_bandwidth", "expected > 0");
  if (device.callOverhead < 0) fail("device.layer_overhead", "expected >= 0");
  if (!(device.channelTile >= 1)) fail("device.channel_tile", fmt::format("expected >= 1, found {}", device.channelTile));
  std::vector<std::pair<std::string, const std::vector<EfficiencyPoint>*>> curves{
      {"efficiency", &device.efficiency}, {"backward_efficiency", &device.backwardEfficiency}};
  for (int k = 0; k < kKernels; ++k) {
    curves.emplace_back(fmt::format("kernels.{}.efficiency", kKernelKeys[k]), &device.kernels[k].forward);
    curves.emplace_back(fmt::format("kernels.{}.backward_efficiency", kKernelKeys[k]), &device.kernels[k].backward);
  }
  for (std::size_t i = 0; i < device.bandwidthCurve.size(); ++i) {
    const EfficiencyPoint& p = device.bandwidthCurve[i];
    const std::string key = fmt::format("device.memory_bandwidth_curve[{}]", i);
    within(p.flops, 1, 1e18, key + " bytes");
    within(p.efficiency, 1e3, 1e16, key + " bandwidth");
    if (i > 0 && !(p.flops > device.bandwidthCurve[i - 1].flops)) fail(key, "expected bytes to increase along the curve");
  }
  for (const auto& [key, curve] : curves) {
    for (std::size_t i = 0; i < curve->size(); ++i) {
      const EfficiencyPoint& p = (*curve)[i];
      if (!(p.flops > 0 && p.flops <= 1e30) || !(p.efficiency >= 1e-6) || p.efficiency > 1) {
        fail(fmt::format("device.{}[{}]", key, i), "expected 0 < flops <= 1e30 and 1e-6 <= efficiency <= 1");
      }
      if (i > 0 && !(p.flops > (*curve)[i - 1].flops)) {
        fail(fmt::format("device.{}[{}]", key, i), "expected flops to increase along the curve");
      }
    }
  }
  for (const ImplementationFactor& f : kImplementationFactors) {
    const double factor = implementation.*f.field;
    if (!(factor > 0 && factor <= 1e6)) {
      fail(std::string("implementation.") + f.key, fmt::format("expected a factor in (0, 1e6], found {}", factor));
    }
  }
  within(implementation.overlap.hidden, 0, 1, "implementation.overlap.hidden");
  within(implementation.overlap.slowdown, 1, 100, "implementation.overlap.slowdown");
  if (levels.empty()) fail("network", "expected at least one level");
  for (int p = 0; p < kCommPaths; ++p) {
    for (const PathLink& link : implementation.paths[p]) {
      const std::string key = fmt::format("implementation.paths.{} ({})", kCommPathKeys[p], link.level);
      if (std::none_of(levels.begin(), levels.end(), [&](const NetworkLevel& l) { return l.name == link.level; })) {
        fail(key, "expected the name of one of the network's levels");
      }
      if (implementation.pathLink(static_cast<CommPath>(p), link.level) != &link) fail(key, "level given twice");
      within(link.alpha, 0, 1, key + " alpha");
      within(link.beta, 1e-16, 1e-3, key + " beta (1 / bandwidth)");
    }
  }
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const NetworkLevel& level = levels[i];
    const std::string key = fmt::format("network[{}] ({})", i, level.name);
    if (!(level.alpha >= 0 && level.alpha <= 1)) fail(key, fmt::format("alpha must be in [0, 1] s, found {}", level.alpha));
    if (!(level.beta > 0 && level.beta <= 1e-3)) {
      fail(key, fmt::format("bandwidth must be at least 1 KB/s and finite (beta in (0, 1e-3] s/B), found beta {}", level.beta));
    }
    finite(level.oversubscription, key + " oversubscription");
    finite(level.contention, key + " contention");
    if (level.oversubscription < 1) fail(key, "oversubscription must be >= 1");
    if (level.links < 1 || level.links > 1'000'000) fail(key, fmt::format("links must be in [1, 1000000], found {}", level.links));
    if (level.contention < 1) fail(key, "contention must be >= 1");
    if (i > 0 && (level.ranks <= levels[i - 1].ranks || level.ranks % levels[i - 1].ranks != 0)) {
      fail(key, fmt::format("spans {} ranks; expected a multiple of the previous level's {}",
                            level.ranks, levels[i - 1].ranks));
    }
  }
  if (levels.back().ranks < totalDevices()) {
    fail(fmt::format("network[{}] ({})", levels.size() - 1, levels.back().name),
         fmt::format("the outermost level spans {} ranks but the cluster has {} devices",
                     levels.back().ranks, totalDevices()));
  }
}

}  // namespace paraxis::hw
