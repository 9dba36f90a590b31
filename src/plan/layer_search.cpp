#include "plan/layer_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "cost/compute.hpp"
#include "cost/topology.hpp"

namespace paraxis::plan {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

std::vector<int> splitsOf(const Distribution& d, int rank) {
  if (rank == 3) return {d.depth, d.height, d.width};
  return {d.height, d.width};
}

double incomingShuffles(const PlanInputs& in, int layer, const Distribution& from, const Distribution& to,
                        std::int64_t batch) {
  const graph::Model& m = *in.model;
  double seconds = 0;
  for (int input : m.layer(layer).inputs) {
    seconds += shuffleSeconds(in, static_cast<double>(m.layer(input).counts.activationBytes), from, to, batch);
  }
  return seconds;
}

}  // namespace

std::vector<Distribution> layerCandidates(const graph::Layer& layer, int ranks, std::int64_t batch) {
  const graph::TensorShape& y = layer.output;
  // Splits of `parts` ranks over samples and space; `replicas` ranks repeat each block.
  auto enumerate = [&](int parts, int replicas, std::vector<Distribution>& out) {
    for (int n : divisors(parts)) {
      if (n > batch || batch % n != 0) continue;
      const int rest = parts / n;
      if (y.rank() < 2) {
        if (rest == 1) out.push_back({n, 1, 1, 1, replicas});
        continue;
      }
      for (int d : divisors(rest)) {
        if (y.rank() == 2 && d > 1) continue;
        for (int h : divisors(rest / d)) {
          const Distribution c{n, d, h, rest / d / h, replicas};
          const std::vector<int> splits = splitsOf(c, y.rank());
          bool fits = true;
          for (int i = 0; i < y.rank(); ++i) fits = fits && splits[i] <= y.spatial[i];
          if (fits) out.push_back(c);
        }
      }
    }
  };
  std::vector<Distribution> out;
  enumerate(ranks, 1, out);
  if (out.empty()) {  // the largest split that works, the other ranks repeating it
    const std::vector<int> all = divisors(ranks);
    for (auto it = all.rbegin(); it != all.rend() && out.empty(); ++it) {
      if (*it != ranks) enumerate(*it, ranks / *it, out);
    }
  }
  return out;
}

double residentShareOfSearch(const PlanInputs& in, int ranks, std::int64_t batch) {
  const graph::Model& m = *in.model;
  return cost::wholeModelResidentShare(m, cost::profileLayers(m), in.cluster->device,
                                       static_cast<double>(batch) / ranks, in.optimizerStatesPerWeight);
}

double layerSeconds(const PlanInputs& in, int index, const Distribution& d, std::int64_t batch, double weightsResident) {
  const graph::Model& m = *in.model;
  const graph::Layer& layer = m.layer(index);
  const hw::Cluster& c = *in.cluster;
  const graph::TensorShape& x = layer.inputs.empty() ? layer.output : m.layer(layer.inputs.front()).output;
  cost::LocalShare share;
  share.samples = static_cast<double>(batch) / d.sample;
  share.weightsResident = weightsResident;
  if (layer.output.rank() >= 2) {
    cost::applySpatialSplit(layer, x, splitsOf(d, layer.output.rank()), share);
  }
  const double inElems = static_cast<double>(x.elements());
  const cost::LayerTimes t = cost::layerTimes(c.device, c.device.peak(in.dtype),
                                              cost::layerWork(layer, inElems, share, m.bytesPerElement(), c.device, 0,
                                                                              cost::nativeKernelRule(layer, x)));
  const double sharing = c.sharingFactor(d.ranks());
  double seconds = sharing * (t.forward + t.backwardData + t.backwardWeight);
  // Halo exchange forward and backward along every split dimension.
  if (x.rank() >= 2 && x.rank() == layer.output.rank()) {
    const std::vector<int> splits = splitsOf(d, x.rank());
    std::int64_t stride = 1;
    for (int i = x.rank() - 1; i >= 0; --i) {
      const double halo = layer.counts.halo.size() > static_cast<std::size_t>(i) ? static_cast<double>(layer.counts.halo[i]) : 0;
      if (splits[i] > 1 && halo > 0) {
        double face = static_cast<double>(x.channels) * halo * share.samples;
        for (int o = 0; o < x.rank(); ++o) {
          if (o != i) face *= std::ceil(static_cast<double>(x.spatial[o]) / splits[o]);
        }
        seconds += 2 * cost::pointToPointOn(c, stride, face * m.bytesPerElement(), in.congestion).seconds;
      }
      stride *= splits[i];
    }
  }
  if (layer.counts.params > 0) {
    seconds += cost::allreduceOn(c, {d.ranks(), 1, hw::CommPath::kGradientAllreduce},
                                 static_cast<double>(layer.counts.params) * 4, in.congestion).seconds;
  }
  return seconds;
}

double shuffleSeconds(const PlanInputs& in, double bytesPerSample, const Distribution& from, const Distribution& to,
                      std::int64_t batch) {
  if (from == to) return 0;
  // Blocks that nest keep min/max of each axis's split in place; the rest moves, forward
  // (the activation) and backward (its gradient).
  double staying = 1;
  const std::pair<int, int> axes[] = {{from.sample, to.sample}, {from.depth, to.depth},
                                      {from.height, to.height}, {from.width, to.width},
                                      {from.replicas, to.replicas}};
  for (const auto& [a, b] : axes) staying *= static_cast<double>(std::min(a, b)) / std::max(a, b);
  const int ranks = to.ranks();
  const double local = bytesPerSample * static_cast<double>(batch) / ranks;
  const double moved = local * (1 - staying);
  return 2 * cost::alltoallOn(*in.cluster, {ranks, 1}, moved, in.congestion).seconds;
}

LayerSearchResult searchDistributions(const PlanInputs& in, int ranks, std::int64_t batch) {
  const graph::Model& m = *in.model;
  const int n = m.size();
  const double resident = residentShareOfSearch(in, ranks, batch);
  std::vector<std::vector<Distribution>> cand(n);
  std::vector<std::vector<double>> own(n), best(n);
  std::vector<std::vector<int>> from(n);
  for (int i = 0; i < n; ++i) {
    cand[i] = layerCandidates(m.layer(i), ranks, batch);
    if (cand[i].empty()) {
      throw InfeasibleError(fmt::format("layer '{}' ({}) admits no distribution over {} ranks with batch {}",
                                        m.layer(i).name, m.layer(i).output.str(), ranks, batch));
    }
    own[i].resize(cand[i].size());
    best[i].assign(cand[i].size(), kInfinity);
    from[i].assign(cand[i].size(), -1);
    for (std::size_t k = 0; k < cand[i].size(); ++k) own[i][k] = layerSeconds(in, i, cand[i][k], batch, resident);
  }
  for (std::size_t k = 0; k < cand[0].size(); ++k) best[0][k] = own[0][k];
  for (int i = 1; i < n; ++i) {
    for (std::size_t k = 0; k < cand[i].size(); ++k) {
      for (std::size_t j = 0; j < cand[i - 1].size(); ++j) {
        const double total = best[i - 1][j] + incomingShuffles(in, i, cand[i - 1][j], cand[i][k], batch) + own[i][k];
        if (total < best[i][k]) {
          best[i][k] = total;
          from[i][k] = static_cast<int>(j);
        }
      }
    }
  }
  LayerSearchResult r;
  int k = static_cast<int>(std::min_element(best[n - 1].begin(), best[n - 1].end()) - best[n - 1].begin());
  r.totalSeconds = best[n - 1][k];
  r.perLayer.resize(n);
  r.layerSeconds.resize(n);
  r.shuffleSeconds.assign(n, 0);
  for (int i = n - 1; i >= 0; --i) {
    r.perLayer[i] = cand[i][k];
    r.layerSeconds[i] = own[i][k];
    if (i > 0) {
      const int j = from[i][k];
      r.shuffleSeconds[i] = incomingShuffles(in, i, cand[i - 1][j], cand[i][k], batch);
      k = j;
    }
  }
  return r;
}

LayerSearchResult bruteForceDistributions(const PlanInputs& in, int ranks, std::int64_t batch) {
  const graph::Model& m = *in.model;
  const int n = m.size();
  std::vector<std::vector<Distribution>> cand(n);
  for (int i = 0; i < n; ++i) cand[i] = layerCandidates(m.layer(i), ranks, batch);
  const double resident = residentShareOfSearch(in, ranks, batch);
  std::vector<int> choice(n, 0);
  LayerSearchResult best;
  best.totalSeconds = kInfinity;
  while (true) {
    double total = 0;
    for (int i = 0; i < n; ++i) {
      total += layerSeconds(in, i, cand[i][choice[i]], batch, resident);
      if (i > 0) total += incomingShuffles(in, i, cand[i - 1][choice[i - 1]], cand[i][choice[i]], batch);
    }
    if (total < best.totalSeconds) {
      best.totalSeconds = total;
      best.perLayer.clear();
      for (int i = 0; i < n; ++i) best.perLayer.push_back(cand[i][choice[i]]);
    }
    int i = 0;
    while (i < n && ++choice[i] == static_cast<int>(cand[i].size())) choice[i++] = 0;
    if (i == n) break;
  }
  return best;
}

}  // namespace paraxis::plan
