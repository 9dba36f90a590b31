// The placement as an integer program (DLPlacer's formulation, with a unit's forward and
// backward on one device). Times are scaled so that the serial bound H (all operations and
// all transfers one after another, which no semi-active schedule exceeds) is 1000: solvers'
// tolerances are absolute, and a step's seconds are small numbers.
//
//   x[u][d] in {0,1}   unit u on device d; sum_d x[u][d] = 1; x[u][d] = 0 for d > u (devices
//                      are identical: number them in order of first use)
//   s[i] in [0, H]     start of operation i;   C >= s[i] + p[i];   minimise C
//   z[e] in [0,1]      edge e crosses devices: z[e] >= x[from][d] - x[to][d] for every d
//                      s[to] >= s[from] + p[from] + c[e] z[e]
//   w[u][v] in [0,1]   units u, v share a device: w >= x[u][d] + x[v][d] - 1 for every d
//   y[i][j] in {0,1}   for operations no path orders: i before j; with M = 2H,
//                      s[j] >= s[i] + p[i] - M (1 - y) - M (1 - w)
//                      s[i] >= s[j] + p[j] - M y - M (1 - w)
//   sum_u bytes[u] x[u][d] <= capacity for every d
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "core/error.hpp"
#include "plan/milp.hpp"
#include "plan/placement.hpp"

namespace paraxis::plan {
namespace {

constexpr double kScale = 1000;

struct Formulation {
  Milp program;
  std::vector<std::vector<int>> x;             // [unit][device]
  std::vector<int> s, z;                       // per operation, per edge (-1: within a unit)
  int makespan = -1;
  std::map<std::pair<int, int>, int> w;        // unit pair -> variable
  std::vector<std::pair<std::pair<int, int>, int>> y;  // (i, j) -> variable
  double unit = 1;                             // seconds per scaled time unit
  // Per operation, on receiver-copy hosts: the copies of its crossing inputs, (z, seconds):
  // its busy time is its own plus these.
  std::vector<std::vector<std::pair<int, double>>> extra;
};

// `terms` plus `sign` x each of `extra`.
std::vector<std::pair<int, double>> withExtra(std::vector<std::pair<int, double>> terms,
                                              const std::vector<std::pair<int, double>>& extra, double sign) {
  for (const auto& [variable, coefficient] : extra) terms.emplace_back(variable, sign * coefficient);
  return terms;
}

std::vector<std::pair<int, int>> unorderedPairs(const OpGraph& g) {
  const std::vector<std::vector<bool>> reaches = g.reachability();
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < g.size(); ++i) {
    for (int j = i + 1; j < g.size(); ++j) {
      if (!reaches[i][j] && !reaches[j][i] && g.ops[i].unit != g.ops[j].unit) pairs.emplace_back(i, j);
    }
  }
  return pairs;
}

void addAssignment(Formulation& f, const OpGraph& g, const PlacementLimits& limits) {
  Milp& m = f.program;
  f.x.assign(g.units(), std::vector<int>(limits.devices));
  for (int u = 0; u < g.units(); ++u) {
    std::vector<std::pair<int, double>> one;
    for (int d = 0; d < limits.devices; ++d) {
      f.x[u][d] = m.add({0, d > u ? 0.0 : 1.0, 0, true});
      one.emplace_back(f.x[u][d], 1);
    }
    m.equal(one, 1);
  }
  if (limits.memoryPerDevice <= 0) return;
  for (int d = 0; d < limits.devices; ++d) {
    std::vector<std::pair<int, double>> held;
    for (int u = 0; u < g.units(); ++u) held.emplace_back(f.x[u][d], g.unitBytes[u] / limits.memoryPerDevice);
    m.atMost(held, 1);
  }
}

void addTiming(Formulation& f, const OpGraph& g, int devices) {
  Milp& m = f.program;
  f.makespan = m.add({0, kScale, 1, false});
  for (int i = 0; i < g.size(); ++i) f.s.push_back(m.add({0, kScale, 0, false}));
  f.extra.assign(g.size(), {});
  for (const OpEdge& e : g.edges) {
    const int from = g.ops[e.from].unit, to = g.ops[e.to].unit;
    const double p = g.ops[e.from].seconds / f.unit;
    if (from == to) {
      f.z.push_back(-1);
      m.atLeast({{f.s[e.to], 1}, {f.s[e.from], -1}}, p);
      continue;
    }
    const int z = m.add({0, 1, 0, false});
    f.z.push_back(z);
    for (int d = 0; d < devices; ++d) m.atLeast({{z, 1}, {f.x[from][d], -1}, {f.x[to][d], 1}}, 0);
    if (g.receiverCopies) {
      f.extra[e.to].emplace_back(z, e.seconds / f.unit);  // the copy occupies the consumer
      m.atLeast(withExtra({{f.s[e.to], 1}, {f.s[e.from], -1}}, f.extra[e.from], -1), p);
    } else {
      m.atLeast({{f.s[e.to], 1}, {f.s[e.from], -1}, {z, -e.seconds / f.unit}}, p);
    }
  }
  for (int i = 0; i < g.size(); ++i) {
    m.atLeast(withExtra({{f.makespan, 1}, {f.s[i], -1}}, f.extra[i], -1), g.ops[i].seconds / f.unit);
  }
}

void addDisjunctions(Formulation& f, const OpGraph& g, int devices, const std::vector<std::pair<int, int>>& pairs) {
  Milp& m = f.program;
  const double big = 2 * kScale;
  for (const auto& [i, j] : pairs) {
    const int u = std::min(g.ops[i].unit, g.ops[j].unit), v = std::max(g.ops[i].unit, g.ops[j].unit);
    auto [it, added] = f.w.try_emplace({u, v}, -1);
    if (added) {
      it->second = m.add({0, 1, 0, false});
      for (int d = 0; d < devices; ++d) m.atLeast({{it->second, 1}, {f.x[u][d], -1}, {f.x[v][d], -1}}, -1);
    }
    const int w = it->second;
    const int y = m.add({0, 1, 0, true});
    f.y.push_back({{i, j}, y});
    m.atLeast(withExtra({{f.s[j], 1}, {f.s[i], -1}, {y, -big}, {w, -big}}, f.extra[i], -1),
              g.ops[i].seconds / f.unit - 2 * big);
    m.atLeast(withExtra({{f.s[i], 1}, {f.s[j], -1}, {y, big}, {w, -big}}, f.extra[j], -1),
              g.ops[j].seconds / f.unit - big);
  }
}

// The incumbent as values of the program's variables, its devices renumbered in order of
// first use (the program's symmetry breaking).
std::vector<double> startValues(const Formulation& f, const OpGraph& g, const OpPlacement& p) {
  std::vector<int> rename(f.x.empty() ? 0 : f.x[0].size(), -1);
  int next = 0;
  std::vector<int> device(g.units());
  for (int u = 0; u < g.units(); ++u) {
    if (rename[p.device[u]] < 0) rename[p.device[u]] = next++;
    device[u] = rename[p.device[u]];
  }
  std::vector<double> v(f.program.variables.size(), 0);
  for (int u = 0; u < g.units(); ++u) v[f.x[u][device[u]]] = 1;
  v[f.makespan] = p.makespan / f.unit;
  for (int i = 0; i < g.size(); ++i) v[f.s[i]] = p.start[i] / f.unit;
  for (int e = 0; e < static_cast<int>(g.edges.size()); ++e) {
    if (f.z[e] >= 0) v[f.z[e]] = device[g.ops[g.edges[e].from].unit] != device[g.ops[g.edges[e].to].unit] ? 1 : 0;
  }
  for (const auto& [pair, w] : f.w) v[w] = device[pair.first] == device[pair.second] ? 1 : 0;
  for (const auto& [pair, y] : f.y) v[y] = p.start[pair.first] <= p.start[pair.second] ? 1 : 0;
  return v;
}

// The solver's devices, and its operations in order of start, scheduled semi-actively (which
// can only tighten the solver's times; ties keep the topological numbering).
OpPlacement decode(const Formulation& f, const OpGraph& g, const std::vector<double>& values) {
  std::vector<int> device(g.units(), 0);
  for (int u = 0; u < g.units(); ++u) {
    for (int d = 0; d < static_cast<int>(f.x[u].size()); ++d) {
      if (values[f.x[u][d]] > values[f.x[u][device[u]]]) device[u] = d;
    }
  }
  // Starts rounded to the solver's tolerance, so that a successor the solver put a rounding
  // error before its zero-length predecessor still follows it.
  std::vector<long long> key(g.size());
  for (int i = 0; i < g.size(); ++i) key[i] = std::llround(values[f.s[i]] * 1e6);
  std::vector<int> order(g.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key[a] < key[b]; });
  return scheduleInOrder(g, device, order);
}

}  // namespace

OpPlacement placementIlp(const OpGraph& g, const PlacementLimits& limits, const OpPlacement& incumbent,
                         const IlpOptions& options) {
  double serial = g.totalSeconds();
  for (const OpEdge& e : g.edges) serial += e.seconds;
  const std::vector<std::pair<int, int>> pairs = unorderedPairs(g);
  if (serial <= 0 || static_cast<int>(pairs.size()) > options.maxOrderPairs) {
    OpPlacement kept = incumbent;
    if (serial > 0) kept.method += fmt::format(" (the ILP would need {} order variables, above its {})", pairs.size(), options.maxOrderPairs);
    return kept;
  }
  Formulation f;
  f.unit = serial / kScale;
  addAssignment(f, g, limits);
  addTiming(f, g, limits.devices);
  addDisjunctions(f, g, limits.devices, pairs);
  const MilpResult r = solveMilp(f.program, startValues(f, g, incumbent), options.timeLimitSeconds);
  if (r.status == MilpResult::Status::kInfeasible) {
    throw InfeasibleError(fmt::format("no placement on {} devices fits: the units' memory exceeds what the devices hold",
                                      limits.devices));
  }
  OpPlacement best = incumbent;
  bool improved = false;
  if (!r.values.empty()) {
    OpPlacement solved = decode(f, g, r.values);
    improved = solved.makespan < incumbent.makespan;
    if (solved.makespan <= incumbent.makespan) best = std::move(solved);
  }
  best.lowerBound = std::max(makespanLowerBound(g, limits.devices), r.values.empty() ? 0.0 : r.bound * f.unit);
  best.optimal = r.status == MilpResult::Status::kOptimal;
  if (best.optimal) best.lowerBound = best.makespan;
  const std::string solver = milpSolverName();
  if (best.optimal) {
    best.method = fmt::format("ilp ({}, optimal)", solver);
  } else if (improved) {
    best.method = fmt::format("ilp ({}, stopped at its {:g} s limit)", solver, options.timeLimitSeconds);
  } else {
    best.method = fmt::format("list scheduling (the ILP, {}, found nothing better in its {:g} s limit)", solver,
                              options.timeLimitSeconds);
  }
  return best;
}

bool isPlacementMethod(const std::string& method) {
  return method == "auto" || method == "ilp" || method == "list" || method == "exhaustive";
}

OpPlacement placeBy(const std::string& method, const OpGraph& g, const PlacementLimits& limits,
                    double timeLimitSeconds) {
  if (!isPlacementMethod(method)) {
    throw ConfigError(fmt::format("placement method: expected auto, ilp, list or exhaustive, found '{}'", method));
  }
  if (method == "exhaustive") return exhaustivePlacement(g, limits);
  OpPlacement list = listSchedule(g, limits);
  if (method == "list") return list;
  if (method == "auto" && milpSolverName().empty()) {
    list.method += " (this build has no ILP solver: apt-get install libglpk-dev and rebuild)";
    return list;
  }
  IlpOptions ilp;
  ilp.timeLimitSeconds = timeLimitSeconds;
  return placementIlp(g, limits, list, ilp);
}

}  // namespace paraxis::plan
