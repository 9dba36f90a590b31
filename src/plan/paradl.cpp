#include "plan/paradl.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "plan/layer_split.hpp"

namespace paraxis::plan {
namespace {

// A ring over `ranks` consecutive devices: the start-up latency of a GPU transfer (the
// innermost level's α) plus the path's, and the bandwidth of the outermost level crossed.
cost::LinkParams paradlLink(const hw::Cluster& c, std::int64_t ranks) {
  const int level = ranks > 1 ? c.levelBetween(0, ranks - 1) : 0;
  const double alpha = c.levels[0].alpha + (level > 0 ? c.levels[level].alpha : 0.0);
  return {alpha, c.levels[level].beta, 0};
}

double ringSteps(std::int64_t p, double bytes, const cost::LinkParams& l) {
  return p <= 1 ? 0 : 2.0 * static_cast<double>(p - 1) * (l.alpha + bytes / static_cast<double>(p) * l.beta);
}

}  // namespace

ParadlEpoch paradlEpoch(const PlanInputs& in, const Strategy& s, double sampleSeconds) {
  const graph::Model& m = *in.model;
  const hw::Cluster& c = *in.cluster;
  const Grid& g = s.grid;
  const auto p = static_cast<std::int64_t>(g.total());
  const double iterations = std::ceil(in.datasetSamples / static_cast<double>(s.globalBatch));
  ParadlEpoch e;
  e.compute = in.datasetSamples * sampleSeconds / static_cast<double>(p);
  const double weights = static_cast<double>(m.totals().params) * m.bytesPerElement();
  if (g.modelParallel() == 1) {
    e.communication = iterations * ringSteps(p, weights, paradlLink(c, p));
    return e;
  }
  if (g.filter > 1 && g.modelParallel() == g.filter) {
    // 3(p2-1) Σ_l (α + B2|y_l|δβ/p2) inside the filter group, then the weight shards' allreduce
    // across the p1 groups.
    const cost::LinkParams inside = paradlLink(c, g.filter);
    const double groupBatch = static_cast<double>(s.globalBatch) / g.data;
    double layers = 0;
    for (const graph::Layer& layer : m.layers()) {
      if (!detail::isWeighted(layer)) continue;
      layers += inside.alpha + groupBatch * static_cast<double>(layer.output.elements()) * m.bytesPerElement() *
                                   inside.beta / g.filter;
    }
    const double perIteration = 3.0 * (g.filter - 1) * layers +
                                ringSteps(g.data, weights / g.filter, paradlLink(c, p));
    e.communication = iterations * perIteration;
    return e;
  }
  throw ConfigError(fmt::format("the paradl variant covers serial, data and data+filter; '{}' is not one of them",
                                s.name));
}

}  // namespace paraxis::plan
