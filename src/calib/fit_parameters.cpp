#include "calib/fit_parameters.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace paraxis::calib {
namespace {

using plan::Grid;
using hw::CommPath;

std::int64_t replicas(const Grid& g) { return static_cast<std::int64_t>(g.data) * g.spatial(); }

bool exercises(const Grid& g, const hw::ImplementationFactor& f) {
  const double hw::Implementation::*field = f.field;
  // Runs with a model-parallel axis also have unsplit layers, but too few to pin this factor.
  if (field == &hw::Implementation::compute) return g.modelParallel() == 1;
  if (field == &hw::Implementation::spatialCompute || field == &hw::Implementation::halo ||
      field == &hw::Implementation::spatialGather) {
    return g.spatial() > 1;
  }
  if (field == &hw::Implementation::filterCompute || field == &hw::Implementation::filterCollectives) return g.filter > 1;
  if (field == &hw::Implementation::channelCompute || field == &hw::Implementation::channelCollectives) {
    return g.channel > 1;
  }
  return replicas(g) > 1;
}

bool isCompute(const hw::ImplementationFactor& f) {
  return f.field == &hw::Implementation::compute || f.field == &hw::Implementation::spatialCompute ||
         f.field == &hw::Implementation::filterCompute || f.field == &hw::Implementation::channelCompute;
}

bool exercises(const Grid& g, CommPath path) {
  switch (path) {
    case CommPath::kPointToPoint: return g.spatial() > 1 || g.pipeline > 1;
    case CommPath::kCollectives: return g.spatial() > 1 || g.filter > 1 || g.channel > 1;
    case CommPath::kGradientAllreduce: return replicas(g) > 1;
  }
  return false;
}

// Per path, the outermost level any run exercising it spans (-1: none).
std::vector<int> outermostLevels(const hw::Cluster& cluster, const std::vector<MeasuredRun>& runs) {
  std::vector<int> outer(hw::kCommPaths, -1);
  for (const MeasuredRun& run : runs) {
    const Grid& g = run.strategy.grid;
    if (g.total() < 2) continue;
    const int level = cluster.levelBetween(0, g.total() - 1);
    for (int p = 0; p < hw::kCommPaths; ++p) {
      if (exercises(g, static_cast<CommPath>(p))) outer[p] = std::max(outer[p], level);
    }
  }
  return outer;
}

void addPathParameters(hw::Cluster& cluster, const std::vector<MeasuredRun>& runs, std::vector<FitParameter>& out) {
  const std::vector<int> outer = outermostLevels(cluster, runs);
  for (int p = 0; p < hw::kCommPaths; ++p) {  // every entry first: the vectors must not move under the pointers
    for (int l = 0; l <= outer[p]; ++l) {
      const hw::NetworkLevel& level = cluster.levels[l];
      if (cluster.implementation.pathLink(static_cast<CommPath>(p), level.name) == nullptr) {
        cluster.implementation.paths[p].push_back({level.name, level.alpha, level.beta});
      }
    }
  }
  for (int p = 0; p < hw::kCommPaths; ++p) {
    for (hw::PathLink& link : cluster.implementation.paths[p]) {
      const auto at = std::find_if(cluster.levels.begin(), cluster.levels.end(),
                                   [&](const hw::NetworkLevel& l) { return l.name == link.level; });
      if (at - cluster.levels.begin() > outer[p]) continue;
      const std::string key = fmt::format("paths.{}.{}", hw::kCommPathKeys[p], link.level);
      out.push_back({key + ".alpha", &link.alpha, link.alpha, 0, 1});
      out.push_back({key + ".beta", &link.beta, link.beta, 1e-16, 1e-3});
    }
  }
}

}  // namespace

void FitParameter::apply() const { *value = std::clamp(base * scale, low, high); }

namespace {

// Whether a fit of `kind` frees factor `f` (where some run exercises it): every factor, the
// physical fit the compute ones (the paths carry the communication), the communication fit none.
bool freesFactor(FitKind kind, const hw::ImplementationFactor& f) {
  switch (kind) {
    case FitKind::kFactors: return true;
    case FitKind::kPhysical: return isCompute(f);
    case FitKind::kCommunication: return false;
  }
  return false;
}

}  // namespace

std::string_view whyUnfitted(FitKind kind, const hw::ImplementationFactor& f) {
  if (freesFactor(kind, f)) return "no run exercises it";
  return isCompute(f) ? "compute as the device gives it" : "the paths carry it";
}

std::vector<FitParameter> fitParameters(hw::Cluster& cluster, const std::vector<MeasuredRun>& runs, FitKind kind) {
  std::vector<FitParameter> out;
  for (const hw::ImplementationFactor& f : hw::kImplementationFactors) {
    if (!freesFactor(kind, f)) continue;
    const bool used = std::any_of(runs.begin(), runs.end(), [&](const MeasuredRun& r) { return exercises(r.strategy.grid, f); });
    if (used) out.push_back({f.key, &(cluster.implementation.*f.field), 1, 1e-6, 1e6});
  }
  if (kind == FitKind::kFactors) return out;
  addPathParameters(cluster, runs, out);
  const bool overlaps = std::any_of(runs.begin(), runs.end(), [](const MeasuredRun& r) {
    return r.strategy.comm.overlap && replicas(r.strategy.grid) > 1 && r.strategy.grid.pipeline == 1;
  });
  if (overlaps) {
    hw::Overlap& o = cluster.implementation.overlap;
    out.push_back({"overlap.hidden", &o.hidden, o.hidden, 0, 1});
    out.push_back({"overlap.slowdown", &o.slowdown, o.slowdown, 1, 100});
    o.chunked = o.whileChunked();  // fitted apart from hidden: the engine's chunks beside backward
    out.push_back({"overlap.chunked", &*o.chunked, *o.chunked, 0, 1});
  }
  return out;
}

}  // namespace paraxis::calib
