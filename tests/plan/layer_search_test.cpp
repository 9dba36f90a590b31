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
