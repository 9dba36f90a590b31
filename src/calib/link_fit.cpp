#include "calib/link_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "calib/coordinate_search.hpp"

namespace paraxis::calib {
namespace {

int outermostLevel(const hw::Cluster& cluster, const LinkSample& s) {
  return cluster.levelBetween(0, (std::max<std::int64_t>(s.group.size, 2) - 1) * s.group.stride);
}

// The path's figures on `level`, added at the level's own when the path has none there yet.
hw::PathLink& pathLinkOn(hw::Cluster& cluster, hw::CommPath path, int level) {
  std::vector<hw::PathLink>& links = cluster.implementation.paths[static_cast<int>(path)];
  const hw::NetworkLevel& l = cluster.levels.at(level);
  for (hw::PathLink& link : links) {
    if (link.level == l.name) return link;
  }
  links.push_back({l.name, l.alpha, l.beta});
  return links.back();
}

}  // namespace

double predictSample(const hw::Cluster& cluster, const LinkSample& s) {
  constexpr auto kExpected = cost::Congestion::kExpected;
  switch (s.operation) {
    case LinkOperation::kPointToPoint:
      return cost::pointToPointOn(cluster, s.group.stride, s.bytes, kExpected).seconds;
    case LinkOperation::kAllreduce:
      return cost::allreduceOn(cluster, s.group, s.bytes, kExpected).seconds;
    case LinkOperation::kAllgather:
      return cost::allgatherOn(cluster, s.group, s.bytes, kExpected).seconds;
  }
  return 0;
}

std::vector<PathLinkFit> fitPathLinks(hw::Cluster& cluster, const std::vector<LinkSample>& samples) {
  // (level, path) in the order fitted: inner levels first.
  std::map<std::pair<int, int>, std::vector<const LinkSample*>> groups;
  for (const LinkSample& s : samples) {
    if (s.seconds > 0 && s.bytes > 0) groups[{outermostLevel(cluster, s), static_cast<int>(s.path)}].push_back(&s);
  }
  std::vector<PathLinkFit> fits;
  for (const auto& [key, mine] : groups) {
    const auto path = static_cast<hw::CommPath>(key.second);
    const hw::NetworkLevel& level = cluster.levels[key.first];
    hw::PathLink& link = pathLinkOn(cluster, path, key.first);
    double alphaScale = 1, betaScale = 1;
    auto objective = [&] {
      link.alpha = level.alpha * alphaScale;
      link.beta = level.beta * betaScale;
      double sum = 0;
      for (const LinkSample* s : mine) {
        const double r = std::log(std::max(predictSample(cluster, *s), 1e-15) / s->seconds);
        sum += r * r;
      }
      return sum;
    };
    double best = objective();
    for (int sweep = 0; sweep < 20; ++sweep) {
      const double before = best;
      minimiseCoordinate(alphaScale, objective);
      best = minimiseCoordinate(betaScale, objective);
      if (before - best < 1e-12) break;
    }
    PathLinkFit fit{.path = path, .link = link};
    for (const LinkSample* s : mine) {
      fit.samples.push_back(*s);
      fit.fitted.push_back(predictSample(cluster, *s));
      fit.meanError += std::abs(fit.fitted.back() / s->seconds - 1);
    }
    fit.meanError /= static_cast<double>(mine.size());
    fits.push_back(fit);
  }
  return fits;
}

}  // namespace paraxis::calib
