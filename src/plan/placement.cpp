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

// An operation's ready time and busy seconds were it on `device`: its inputs arrive at their
// producers' finish, plus the transfer where they cross devices, which on receiver-copy hosts
// occupies the device instead (OpGraph::receiverCopies).
struct Fit {
  double ready = 0, busy = 0;
};

Fit fitOn(const OpGraph& g, int op, const std::vector<int>& inEdges, const std::vector<double>& finish,
          const std::vector<int>& unitDevice, int device) {
  Fit f{0, g.ops[op].seconds};
  for (int e : inEdges) {
    const OpEdge& edge = g.edges[e];
    const double transfer = unitDevice[g.ops[edge.from].unit] != device ? edge.seconds : 0;
    f.ready = std::max(f.ready, finish[edge.from] + (g.receiverCopies ? 0 : transfer));
    if (g.receiverCopies) f.busy += transfer;
  }
  return f;
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

std::vector<double> busyOf(const OpGraph& g, const OpPlacement& p) {
  const std::vector<std::vector<int>> in = g.inEdges();
  std::vector<double> busy(g.size());
  for (int i = 0; i < g.size(); ++i) busy[i] = g.busySeconds(i, in[i], p.device);
  return busy;
}

double finishOf(const OpGraph& g, const OpPlacement& p) {
  const std::vector<double> busy = busyOf(g, p);
  double last = 0;
  for (int i = 0; i < g.size(); ++i) last = std::max(last, p.start[i] + busy[i]);
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
    const Fit f = fitOn(g, i, in[i], finish, device, d);
    p.start[i] = std::max(f.ready, free[d]);
    finish[i] = p.start[i] + f.busy;
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
  const std::vector<double> busy = busyOf(g, p);
  for (int k = 0; k < static_cast<int>(g.edges.size()); ++k) {
    const OpEdge& e = g.edges[k];
    const double arrives = g.arrival(k, p.start[e.from] + busy[e.from], p.device);
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
      return std::make_pair(p.start[a], busy[a]) < std::make_pair(p.start[b], busy[b]);
    });
    for (std::size_t k = 1; k < on.size(); ++k) {
      const int a = on[k - 1], b = on[k];
      if (p.start[b] < p.start[a] + busy[a] - tolerance) {
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
    double bestStart = kInfinity, bestFinish = kInfinity;
    for (int d = 0; d < limits.devices; ++d) {
      if (fixed >= 0 && d != fixed) continue;
      if (fixed < 0 && limits.memoryPerDevice > 0 && used[d] + g.unitBytes[op.unit] > limits.memoryPerDevice) continue;
      const Fit f = fitOn(g, i, in[i], finish, p.device, d);
      const double start = earliestGap(busy[d], f.ready, f.busy);
      if (start + f.busy < bestFinish) best = d, bestStart = start, bestFinish = start + f.busy;
    }
    if (best < 0) {
      throw InfeasibleError(fmt::format("unit '{}' needs {}, and no device has that much of its {} left",
                                        g.unitNames[op.unit], units::formatBytes(g.unitBytes[op.unit]),
                                        units::formatBytes(limits.memoryPerDevice)));
    }
    if (fixed < 0) used[best] += g.unitBytes[op.unit];
    p.device[op.unit] = best;
    p.start[i] = bestStart;
    finish[i] = bestFinish;
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
