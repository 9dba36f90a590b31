// Fitting a path's alpha and beta per level: the topology model inverted on calls it predicted
// itself recovers the figures it was given.
#include "calib/link_fit.hpp"

#include <gtest/gtest.h>

#include "hw/cluster_yaml.hpp"

namespace paraxis::calib {
namespace {

// Two hosts of two ranks: shared memory inside, a 1 Gbit/s link between.
hw::Cluster twoHosts() {
  return hw::loadClusterText(R"(name: two
description: two hosts
device: {name: core, peak_flops: {fp32: 100 GFLOP/s}, memory: 4 GiB, memory_bandwidth: 10 GB/s}
devices_per_node: 2
nodes: 2
network:
  - {name: shm, alpha: 2 us, bandwidth: 4 GB/s, ranks: node}
  - {name: eth, alpha: 50 us, bandwidth: 1 Gbit/s, ranks: all}
)", "two");
}

std::vector<LinkSample> sweep(const hw::Cluster& truth) {
  std::vector<LinkSample> samples;
  using hw::CommPath;
  for (double bytes = 1024; bytes <= 16e6; bytes *= 4) {
    for (const cost::Placement& pair : {cost::Placement{2, 1}, cost::Placement{2, 2}}) {
      samples.push_back({CommPath::kPointToPoint, LinkOperation::kPointToPoint, pair, bytes, 0});
    }
    for (const cost::Placement& group : {cost::Placement{2, 1, CommPath::kGradientAllreduce},
                                         cost::Placement{4, 1, CommPath::kGradientAllreduce}}) {
      samples.push_back({CommPath::kGradientAllreduce, LinkOperation::kAllreduce, group, bytes, 0});
    }
    samples.push_back({CommPath::kCollectives, LinkOperation::kAllgather, {4, 1}, bytes, 0});
  }
  for (LinkSample& s : samples) s.seconds = predictSample(truth, s);
  return samples;
}

TEST(LinkFit, RecoversThePathsFiguresPerLevel) {
  hw::Cluster truth = twoHosts();
  using hw::CommPath;
  auto& paths = truth.implementation.paths;
  paths[static_cast<int>(CommPath::kPointToPoint)] = {{"shm", 1e-6, 1 / 6e9}, {"eth", 80e-6, 1 / 0.1e9}};
  paths[static_cast<int>(CommPath::kGradientAllreduce)] = {{"shm", 20e-6, 1 / 2e9}, {"eth", 300e-6, 1 / 0.09e9}};
  paths[static_cast<int>(CommPath::kCollectives)] = {{"eth", 150e-6, 1 / 0.11e9}};
  const std::vector<LinkSample> samples = sweep(truth);

  hw::Cluster fitted = twoHosts();
  const std::vector<PathLinkFit> fits = fitPathLinks(fitted, samples);
  ASSERT_EQ(fits.size(), 5u);  // p2p and gradient on both levels, collectives across hosts
  for (int p = 0; p < hw::kCommPaths; ++p) {
    for (const hw::PathLink& want : truth.implementation.paths[p]) {
      const hw::PathLink* got = fitted.implementation.pathLink(static_cast<CommPath>(p), want.level);
      ASSERT_NE(got, nullptr) << hw::kCommPathKeys[p] << " " << want.level;
      EXPECT_NEAR(got->alpha / want.alpha, 1, 0.02) << hw::kCommPathKeys[p] << " " << want.level;
      EXPECT_NEAR(got->beta / want.beta, 1, 0.02) << hw::kCommPathKeys[p] << " " << want.level;
    }
  }
  for (const PathLinkFit& f : fits) {
    EXPECT_LT(f.meanError, 0.01) << hw::kCommPathKeys[static_cast<int>(f.path)];
    EXPECT_EQ(f.samples.size(), f.fitted.size());
  }
  // The hardware figures alone are far off on the slow paths.
  double before = 0;
  for (const LinkSample& s : samples) before += std::abs(predictSample(twoHosts(), s) / s.seconds - 1);
  EXPECT_GT(before / static_cast<double>(samples.size()), 0.3);
}

}  // namespace
}  // namespace paraxis::calib
