#include "plan/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "plan/oracle.hpp"

namespace paraxis::plan {
namespace {

// p = a x b with a <= b as close as possible (a 2-D spatial grid).
std::pair<int, int> squareFactors(int p) {
  int a = static_cast<int>(std::sqrt(static_cast<double>(p)));
  while (a > 1 && p % a != 0) --a;
  return {a, p / a};
}

void setSpatial(Grid& g, int p, int rank) {
  if (rank == 3) {
    int d = static_cast<int>(std::cbrt(static_cast<double>(p)) + 1e-9);
    while (d > 1 && p % d != 0) --d;
    const auto [h, w] = squareFactors(p / d);
    g.depth = d;
    g.height = h;
    g.width = w;
  } else {
    const auto [h, w] = squareFactors(p);
    g.height = h;
    g.width = w;
  }
}

double objectiveValue(const Estimate& e, Objective o) {
  switch (o) {
    case Objective::kTimeToTrain: return e.timeToTrain;
    case Objective::kIteration: return e.time.iteration() / std::max<double>(1, e.strategy.globalBatch);
    case Objective::kMemory: return e.memory.total();
    case Objective::kCost: return e.deviceHours;
  }
  return 0;
}

}  // namespace

const std::vector<std::string>& strategyNames() {
  static const std::vector<std::string> names{"serial",       "data",         "spatial",       "filter",
                                              "channel",      "pipeline",     "placement",     "data+spatial",
                                              "data+filter",  "data+channel", "data+pipeline", "data+placement"};
  return names;
}

namespace {

// Pipelines: micro-batches per stage times the stages, at most the replica's samples, and a
// divisor of them.
int microBatchesFor(const Grid& g, std::int64_t globalBatch, const PlanRequest& r) {
  if (g.pipeline <= 1) return 1;
  const std::int64_t replica = globalBatch / std::max(1, g.data);
  int micro = static_cast<int>(std::max<std::int64_t>(
      1, std::min<std::int64_t>(replica, static_cast<std::int64_t>(r.microBatchesPerStage) * g.pipeline)));
  while (micro > 1 && replica % micro != 0) --micro;
  return micro;
}

}  // namespace

Strategy makeStrategy(const PlanInputs& in, const std::string& name, int gpus, std::int64_t globalBatch,
                      const PlanRequest& r) {
  const auto& names = strategyNames();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw ConfigError(fmt::format("unknown strategy '{}' (expected one of: {})", name, fmt::join(names, ", ")));
  }
  Strategy s;
  s.name = name;
  s.globalBatch = globalBatch;
  s.schedule = r.schedule;
  s.comm = r.comm;
  const bool hybrid = name.rfind("data+", 0) == 0;
  const std::string model = hybrid ? name.substr(5) : name;
  const std::int64_t group = r.modelParallel > 0 ? r.modelParallel : in.cluster->devicesPerNode;
  const int inner = hybrid ? static_cast<int>(std::min<std::int64_t>(gpus, group)) : gpus;
  Grid& g = s.grid;
  if (name == "serial") {
    s.globalBatch = globalBatch / std::max(1, gpus);
  } else if (model == "data") {
    g.data = gpus;
  } else {
    if (gpus % inner != 0) {
      throw ConfigError(fmt::format("{} on {} GPUs: {} does not divide into nodes of {}", name, gpus, gpus, inner));
    }
    g.data = hybrid ? gpus / inner : 1;
    if (model == "spatial") setSpatial(g, inner, in.model->inputShape().rank());
    if (model == "filter") g.filter = inner;
    if (model == "channel") g.channel = inner;
    if (model == "pipeline") g.pipeline = inner;
    if (model == "placement") g.place = inner;
  }
  s.microBatches = microBatchesFor(g, globalBatch, r);
  return s;
}

Strategy strategyOnGrid(const Grid& grid, std::int64_t globalBatch, const PlanRequest& r) {
  Strategy s;
  s.name = strategyNameOf(grid);
  s.grid = grid;
  s.globalBatch = globalBatch;
  s.schedule = r.schedule;
  s.comm = r.comm;
  s.microBatches = microBatchesFor(grid, globalBatch, r);
  return s;
}

namespace {

std::int64_t largestFittingBatch(Oracle& oracle, const std::string& name, int gpus, const PlanRequest& r) {
  auto fits = [&](std::int64_t perGpu) {
    const Strategy s = makeStrategy(oracle.inputs(), name, gpus, perGpu * gpus, r);
    const Estimate e = oracle.estimate(s, false);
    return e.feasible && e.fits;
  };
  if (!fits(1)) return 0;
  std::int64_t lo = 1;
  std::int64_t hi = 2;
  while (hi < (1 << 20) && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

std::int64_t maxBatchPerGpu(const PlanInputs& in, const std::string& name, int gpus, const PlanRequest& r) {
  Oracle oracle(in);
  return largestFittingBatch(oracle, name, gpus, r);
}

namespace {

// The data replicas of strategy `name` on `gpus` (serial: each GPU a replica of its own).
std::int64_t replicasOf(const PlanInputs& in, const std::string& name, int gpus, const PlanRequest& r) {
  if (name == "serial") return gpus;
  return makeStrategy(in, name, gpus, gpus, r).grid.data;
}

}  // namespace

std::vector<Estimate> planAll(const PlanInputs& in, const PlanRequest& r) {
  Oracle oracle(in);
  std::vector<Estimate> out;
  for (int gpus : r.gpus) {
    for (const std::string& name : r.strategies) {
      std::int64_t perGpu = r.batchPerGpu;
      if (r.globalBatch == 0 && perGpu == 0) perGpu = std::max<std::int64_t>(1, largestFittingBatch(oracle, name, gpus, r));
      std::int64_t global = r.globalBatch > 0 ? r.globalBatch : perGpu * gpus;
      Strategy s;
      try {
        if (r.batchPerReplica > 0) global = r.batchPerReplica * replicasOf(in, name, gpus, r);
        s = makeStrategy(in, name, gpus, global, r);
      } catch (const ConfigError& e) {
        Estimate bad;
        bad.strategy.name = name;
        bad.strategy.globalBatch = global;
        bad.feasible = false;
        bad.infeasibleReason = e.what();
        bad.bottleneck = "infeasible: " + bad.infeasibleReason;
        out.push_back(bad);
        continue;
      }
      // A hybrid with one data replica is its model-parallel strategy: one row, by that name.
      if (s.grid.data == 1 && s.name.starts_with("data+")) s.name = s.name.substr(5);
      const std::string grid = s.grid.str();
      const auto same = [&](const Estimate& e) {
        return e.feasible && e.strategy.name == s.name && e.strategy.globalBatch == s.globalBatch &&
               e.strategy.grid.str() == grid;
      };
      if (std::any_of(out.begin(), out.end(), same)) continue;
      out.push_back(oracle.estimate(s));
    }
  }
  std::stable_sort(out.begin(), out.end(), [&](const Estimate& a, const Estimate& b) {
    const bool ga = a.feasible && a.fits;
    const bool gb = b.feasible && b.fits;
    if (ga != gb) return ga;
    return objectiveValue(a, r.objective) < objectiveValue(b, r.objective);
  });
  return out;
}

std::vector<int> parseGpuList(const std::string& text) {
  std::vector<int> out;
  auto number = [&](const std::string& s) {
    try {
      std::size_t used = 0;
      const int v = std::stoi(s, &used);
      if (used != s.size() || v < 1) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      throw ConfigError(fmt::format("--gpus: expected a count, a range like 8..1024 or a list like 8,16,32, found '{}'", text));
    }
  };
  if (const auto dots = text.find(".."); dots != std::string::npos) {
    const int lo = number(text.substr(0, dots));
    const int hi = number(text.substr(dots + 2));
    if (hi < lo) throw ConfigError(fmt::format("--gpus: range {} is empty", text));
    for (long v = lo; v <= hi; v *= 2) out.push_back(static_cast<int>(v));
    return out;
  }
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) out.push_back(number(part));
  if (out.empty()) throw ConfigError("--gpus: expected at least one GPU count");
  return out;
}

}  // namespace paraxis::plan
