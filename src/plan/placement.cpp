#include "plan/placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "core/units.hpp"

namespace paraxis::plan {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// When an operation's inputs have all arrived on `device`.
double readyOn(const OpGraph& g, const std::vector<int>& inEdges, const std::vector<double>& finish,
               const std::vector<int>& unitDevice, int device) {
  double ready = 0;
  for (int e : inEdges) {
    const OpEdge& edge = g.edges[e];
    const bool crosses = unitDevice[g.ops[edge.from].unit] != device;
    ready = std::max(ready, finish[edge.from] + (crosses ? edge.seconds : 0));
  }
  return ready;
}

// The earliest start >= ready of a gap `length` long between a device's busy intervals
// (sorted by start).
double earliestGap(const std::vector<std::pair<double, double>>& busy, double ready, double length) {
  double candidate = ready;
  for (const auto& [from, to] : busy) {
    if (candidate + length <= from) return candidate;
    candidate = std::max(candidate, to);
  }
  return candidate;
}

std::vector<double> upwardRanks(const OpGraph& g) {
  const std::vector<std::vector<int>> out = g.outEdges();
  std::vector<double> rank(g.size(), 0);
  for (int i = g.size() - 1; i >= 0; --i) {
    double tail = 0;
    for (int e : out[i]) tail = std::max(tail, g.edges[e].seconds + rank[g.edges[e].to]);
    rank[i] = g.ops[i].seconds + tail;
  }
  return rank;
}

double finishOf(const OpGraph& g, const OpPlacement& p) {
  double last = 0;
  for (int i = 0; i < g.size(); ++i) last = std::max(last, p.start[i] + g.ops[i].seconds);
  return last;
}

}  // namespace

double OpPlacement::gap() const {
  if (optimal) return 0;
  return lowerBound > 0 ? makespan / lowerBound - 1 : kInfinity;
}

double makespanLowerBound(const OpGraph& g, int devices) {
  const std::vector<std::vector<int>> in = g.inEdges();
  std::vector<double> finish(g.size(), 0);
  double path = 0;
  for (int i = 0; i < g.size(); ++i) {
    double ready = 0;
    for (int e : in[i]) ready = std::max(ready, finish[g.edges[e].from]);
    finish[i] = ready + g.ops[i].seconds;
    path = std::max(path, finish[i]);
  }
  return std::max(path, g.totalSeconds() / std::max(1, devices));
}

OpPlacement scheduleInOrder(const OpGraph& g, const std::vector<int>& device, const std::vector<int>& order) {
  const std::vector<std::vector<int>> in = g.inEdges();
  const int devices = device.empty() ? 1 : *std::max_element(device.begin(), device.end()) + 1;
  std::vector<double> free(devices, 0), finish(g.size(), 0);
  OpPlacement p;
  p.device = device;
  p.start.assign(g.size(), 0);
  for (int i : order) {
    const int d = device[g.ops[i].unit];
    p.start[i] = std::max(readyOn(g, in[i], finish, device, d), free[d]);
    finish[i] = p.start[i] + g.ops[i].seconds;
    free[d] = finish[i];
    p.makespan = std::max(p.makespan, finish[i]);
  }
  return p;
}

std::vector<std::string> placementViolations(const OpGraph& g, const PlacementLimits& limits, const OpPlacement& p,
                                             double slack) {
  std::vector<std::string> problems;
  if (static_cast<int>(p.device.size()) != g.units() || static_cast<int>(p.start.size()) != g.size()) {
    return {fmt::format("{} devices for {} units, {} starts for {} operations", p.device.size(), g.units(),
                        p.start.size(), g.size())};
  }
  const double tolerance = slack * std::max(1.0, p.makespan);
  std::vector<double> used(limits.devices, 0);
  for (int u = 0; u < g.units(); ++u) {
    if (p.device[u] < 0 || p.device[u] >= limits.devices) {
      problems.push_back(fmt::format("unit '{}' on device {}, outside 0..{}", g.unitNames[u], p.device[u], limits.devices - 1));
      return problems;
    }
    used[p.device[u]] += g.unitBytes[u];
  }
  for (int i = 0; i < g.size(); ++i) {
    if (!(std::isfinite(p.start[i]) && p.start[i] >= -tolerance)) {
      problems.push_back(fmt::format("operation '{}' starts at {} s", g.ops[i].name, p.start[i]));
    }
  }
  for (const OpEdge& e : g.edges) {
    const bool crosses = p.device[g.ops[e.from].unit] != p.device[g.ops[e.to].unit];
    const double arrives = p.start[e.from] + g.ops[e.from].seconds + (crosses ? e.seconds : 0);
    if (p.start[e.to] < arrives - tolerance) {
      problems.push_back(fmt::format("operation '{}' starts at {:.9g} s, before its input from '{}' arrives at {:.9g} s",
                                     g.ops[e.to].name, p.start[e.to], g.ops[e.from].name, arrives));
    }
  }
  for (int d = 0; d < limits.devices; ++d) {
    std::vector<int> on;
    for (int i = 0; i < g.size(); ++i) {
      if (p.device[g.ops[i].unit] == d) on.push_back(i);
    }
    // By start, then end: an operation of no length may start where another starts.
    std::sort(on.begin(), on.end(), [&](int a, int b) {
      return std::make_pair(p.start[a], g.ops[a].seconds) < std::make_pair(p.start[b], g.ops[b].seconds);
    });
    for (std::size_t k = 1; k < on.size(); ++k) {
      const int a = on[k - 1], b = on[k];
      if (p.start[b] < p.start[a] + g.ops[a].seconds - tolerance) {
        problems.push_back(fmt::format("device {}: operations '{}' and '{}' overlap", d, g.ops[a].name, g.ops[b].name));
      }
    }
    if (limits.memoryPerDevice > 0 && used[d] > limits.memoryPerDevice) {
      problems.push_back(fmt::format("device {}: its units hold {}, more than its {}", d, units::formatBytes(used[d]),
                                     units::formatBytes(limits.memoryPerDevice)));
    }
  }
  if (std::abs(finishOf(g, p) - p.makespan) > tolerance) {
    problems.push_back(fmt::format("makespan {:.9g} s, but the last operation finishes at {:.9g} s", p.makespan, finishOf(g, p)));
  }
  return problems;
}

OpPlacement listSchedule(const OpGraph& g, const PlacementLimits& limits) {
  const std::vector<double> rank = upwardRanks(g);
  std::vector<int> order(g.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return rank[a] > rank[b]; });
  const std::vector<std::vector<int>> in = g.inEdges();
  std::vector<std::vector<std::pair<double, double>>> busy(limits.devices);
  std::vector<double> used(limits.devices, 0), finish(g.size(), 0);
  OpPlacement p;
  p.device.assign(g.units(), -1);
  p.start.assign(g.size(), 0);
  for (int i : order) {
    const OpNode& op = g.ops[i];
    const int fixed = p.device[op.unit];  // a backward operation goes where its forward went
    int best = -1;
    double bestStart = kInfinity;
    for (int d = 0; d < limits.devices; ++d) {
      if (fixed >= 0 && d != fixed) continue;
      if (fixed < 0 && limits.memoryPerDevice > 0 && used[d] + g.unitBytes[op.unit] > limits.memoryPerDevice) continue;
      const double start = earliestGap(busy[d], readyOn(g, in[i], finish, p.device, d), op.seconds);
      if (start < bestStart) best = d, bestStart = start;
    }
    if (best < 0) {
      throw InfeasibleError(fmt::format("unit '{}' needs {}, and no device has that much of its {} left",
                                        g.unitNames[op.unit], units::formatBytes(g.unitBytes[op.unit]),
                                        units::formatBytes(limits.memoryPerDevice)));
    }
    if (fixed < 0) used[best] += g.unitBytes[op.unit];
    p.device[op.unit] = best;
    p.start[i] = bestStart;
    finish[i] = bestStart + op.seconds;
    auto& intervals = busy[best];
    intervals.insert(std::upper_bound(intervals.begin(), intervals.end(), std::make_pair(bestStart, finish[i])),
                     {bestStart, finish[i]});
  }
  p.makespan = finishOf(g, p);
  p.lowerBound = makespanLowerBound(g, limits.devices);
  p.method = "list scheduling";
  return p;
}

}  // namespace paraxis::plan
