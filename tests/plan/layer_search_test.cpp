// The per-layer search (dynamic programming) against brute force on small chains.
#include "plan/layer_search.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "plan_fixture.hpp"

namespace paraxis::plan {
namespace {

graph::Model chain(std::int64_t size) {
  graph::ModelBuilder b("chain", graph::TensorShape{8, {size, size}});
  int x = b.conv("c1", 0, {.filters = 16, .kernel = {3}, .padding = {1}});
  x = b.maxPool("p1", x, {.kernel = {2}});
  x = b.conv("c2", x, {.filters = 32, .kernel = {3}, .padding = {1}});
  x = b.globalAvgPool("gap", x);
  b.fc("fc", x, 10);
  return std::move(b).build();
}

TEST(LayerSearch, DynamicProgrammingEqualsBruteForce) {
  const hw::Cluster cluster = testing::toyCluster();
  for (std::int64_t size : {8, 64}) {
    for (std::int64_t batch : {2, 4, 16}) {
      const graph::Model model = chain(size);
      const PlanInputs in = testing::inputsFor(model, cluster);
      const LayerSearchResult dp = searchDistributions(in, 4, batch);
      const LayerSearchResult brute = bruteForceDistributions(in, 4, batch);
      EXPECT_NEAR(dp.totalSeconds, brute.totalSeconds, 1e-12 * brute.totalSeconds) << size << " " << batch;
      double sum = 0;
      for (int i = 0; i < model.size(); ++i) sum += dp.layerSeconds[i] + dp.shuffleSeconds[i];
      EXPECT_NEAR(sum, dp.totalSeconds, 1e-12 * sum);
    }
  }
}

TEST(LayerSearch, SmallBatchesPushLargeImagesToSpatialSplits) {
  const hw::Cluster cluster = testing::toyCluster();
  const graph::Model model = chain(64);
  const PlanInputs in = testing::inputsFor(model, cluster);
  // One sample cannot be split by samples: the first layers must split space.
  const LayerSearchResult r = searchDistributions(in, 4, 1);
  EXPECT_EQ(r.perLayer[1].sample, 1);
  EXPECT_EQ(r.perLayer[1].height * r.perLayer[1].width, 4);
  // Past the spatial layers nothing splits one sample four ways: those layers are replicated.
  EXPECT_EQ(r.perLayer[model.find("fc")].replicas, 4);
  EXPECT_EQ(searchDistributions(in, 4, 3).perLayer[model.find("fc")], (Distribution{1, 1, 1, 1, 4}));
}

// Every rank of a per-layer plan holds the whole model: a fully connected layer over few rows
// streams its weights, faster where the rank's working set leaves them in its cache, as the
// oracle prices a data-parallel step (estimator_test's AFullyConnectedLayersCachedWeightsStreamFaster).
TEST(LayerSearch, PricesTheWeightsARankKeepsInItsCache) {
  hw::Cluster cluster = testing::toyCluster();
  const int kernel = static_cast<int>(hw::Kernel::kFullyConnected);
  cluster.device.kernels[kernel].halfRateRows = 64;
  cluster.device.kernels[kernel].residentRowsShare = 0.5;
  cluster.device.prepare();
  const graph::Model model = chain(8);
  const PlanInputs in = testing::inputsFor(model, cluster);
  const int fc = model.find("fc");
  EXPECT_EQ(residentShareOfSearch(in, 4, 16), 0);  // no cache share measured
  const LayerSearchResult uncached = searchDistributions(in, 4, 16);
  cluster.device.cacheShare = 1 << 30;  // the whole working set
  EXPECT_EQ(residentShareOfSearch(in, 4, 16), 1);
  const LayerSearchResult cached = searchDistributions(in, 4, 16);
  ASSERT_EQ(cached.perLayer[fc], uncached.perLayer[fc]);
  EXPECT_LT(cached.layerSeconds[fc], uncached.layerSeconds[fc]);
  EXPECT_EQ(cached.layerSeconds[fc], layerSeconds(in, fc, cached.perLayer[fc], 16, 1));
  EXPECT_EQ(uncached.layerSeconds[fc], layerSeconds(in, fc, uncached.perLayer[fc], 16, 0));
  const int conv = model.find("c1");  // a convolution keeps its rate
  EXPECT_EQ(layerSeconds(in, conv, cached.perLayer[conv], 16, 1), layerSeconds(in, conv, cached.perLayer[conv], 16, 0));
  EXPECT_NEAR(bruteForceDistributions(in, 4, 16).totalSeconds, cached.totalSeconds, 1e-12 * cached.totalSeconds);
}

TEST(LayerSearch, CandidatesRespectExtentsAndBatch) {
  const graph::Model model = chain(8);
  for (const Distribution& d : layerCandidates(model.layer(1), 8, 4)) {
    EXPECT_EQ(d.ranks(), 8);
    EXPECT_LE(d.sample, 4);
    EXPECT_EQ(d.depth, 1);
  }
  EXPECT_EQ(layerCandidates(model.layer(model.find("fc")), 4, 8).size(), 1U);
}

}  // namespace
}  // namespace paraxis::plan
