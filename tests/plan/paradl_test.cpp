// ParaDL (HPDC 2021) on ABCI, ResNet-50: the reproduction mode against ParaDL's logged
// projections, and the default model against the measured strategy comparison
// (tests/data/paradl_abci_resnet50.csv, Table VIII of the ParaDL technical report).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "graph/zoo/zoo.hpp"
#include "hw/presets.hpp"
#include "plan/paradl.hpp"
#include "plan/planner.hpp"

namespace paraxis::plan {
namespace {

constexpr double kSampleSeconds = 0.0031195;  // ParaDL's measured ResNet-50 time per sample on a V100

class Abci : public ::testing::Test {
 protected:
  graph::Model model = graph::buildZooModel("resnet50");
  hw::Cluster cluster = hw::loadCluster("abci");
  PlanInputs in = [this] {
    PlanInputs p;
    p.model = &model;
    p.cluster = &cluster;
    p.datasetSamples = 1281167;
    return p;
  }();

  // ParaDL's equations on ParaDL's own ResNet-50 table (226x226, no projection shortcuts,
  // 1,280,000 samples), as its logs were produced.
  ParadlNetwork network = [] {
    ParadlNetwork n = readParadlNetwork(std::string(PARAXIS_TEST_DATA) + "/paradl_resnet50.net");
    shareCompute(n, kSampleSeconds);
    return n;
  }();
  ParadlPlatform platform = ParadlPlatform::forCluster(cluster);

  ParadlEpoch paradl(const ParadlNetwork& net, const std::string& name, int gpus, std::int64_t global) {
    PlanRequest r;
    const Strategy s = makeStrategy(in, name, gpus, global, r);
    return paradlEpoch(net, platform, s, net.samples > 0 ? net.samples : in.datasetSamples);
  }
};

TEST_F(Abci, ParadlNetworkFileReadsAsParadlSummarisesIt) {
  // ParaDL's log: 166 layers, total |w| 22,734,016 items, 1,280,000 samples.
  EXPECT_EQ(network.layers.size(), 166U);
  EXPECT_EQ(network.totalWeight(), 22734016);
  EXPECT_EQ(network.samples, 1280000);
  // Its compute share of CONV_1: 1.0152806185e-4 s of the 3.119502e-3 s per sample.
  EXPECT_NEAR(network.layers.front().comp / 1.0152806185e-4, 1, 1e-5);
}

TEST_F(Abci, ParadlVariantMatchesItsLoggedProjections) {
  // ParaDL's logs (ResNet-50, 64 samples per GPU): seconds per epoch.
  const struct {
    const char* strategy;
    int gpus;
    std::int64_t global;
    double logged;
  } data[] = {{"serial", 1, 64, 3993}, {"data", 2, 128, 2015}, {"data", 64, 4096, 68.1},
              {"data", 1024, 65536, 5.46}, {"data", 2048, 131072, 3.36}};
  for (const auto& row : data) {
    const double ours = paradl(network, row.strategy, row.gpus, row.global).total();
    std::printf("ParaDL variant %s %d GPUs: %.2f s/epoch (ParaDL's log %.2f)\n", row.strategy, row.gpus, ours,
                row.logged);
    EXPECT_NEAR(ours / row.logged, 1, 0.02) << row.strategy << " " << row.gpus;
  }
  // data+filter, 64 GPUs (16 groups x 4 filters, 64 samples per group).
  const ParadlEpoch df = paradl(network, "data+filter", 64, 1024);
  std::printf("ParaDL variant data+filter 64 GPUs: compute %.1f s (log 71.9), communication %.1f s (log 159.1)\n",
              df.compute, df.communication);
  EXPECT_NEAR(df.compute / 71.9, 1, 0.02);
  EXPECT_NEAR(df.communication / 159.1, 1, 0.02);
}

TEST_F(Abci, ParadlVariantOnTheTorchvisionResNet50) {
  // paraxis's ResNet-50 is torchvision's (224x224, projection shortcuts): more weights and
  // activations than ParaDL's table, so its projections differ from the logs by that much.
  ParadlNetwork ours = paradlNetworkOf(model);
  shareCompute(ours, kSampleSeconds);
  EXPECT_EQ(ours.totalWeight(), 25502912);  // conv and FC kernels, no biases or batch norms
  const double data64 = paradl(ours, "data", 64, 4096).total();
  const ParadlEpoch df = paradl(ours, "data+filter", 64, 1024);
  std::printf("ParaDL variant on torchvision's ResNet-50: data 64 GPUs %.2f s/epoch; data+filter compute %.1f s, "
              "communication %.1f s\n", data64, df.compute, df.communication);
  EXPECT_NEAR(data64 / 68.1, 1, 0.05);
  EXPECT_GT(df.communication, 159.1);  // more output channels to gather (the projections)
}

struct Row {
  std::string strategy;
  int gpus;
  double measured;
  int measuredRank;
  double paradl;
};

std::vector<Row> readTable() {
  std::ifstream in(std::string(PARAXIS_TEST_DATA) + "/paradl_abci_resnet50.csv");
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("model", 0) == 0) continue;
    std::vector<std::string> f;
    std::stringstream fields(line);
    std::string cell;
    while (std::getline(fields, cell, ',')) f.push_back(cell);
    rows.push_back({f[2], std::stoi(f[1]), std::stod(f[5]), std::stoi(f[6]), std::stod(f[7])});
  }
  return rows;
}

// How the report's runs were shaped: ds and df hybrids inside a node with 256 and 64 samples
// per node; filter and channel strong-scaled (the batch is not given; 32 assumed).
// The runs' software, ChainerMN 7, reduces every gradient after backward (its multi-node
// optimizer; no overlap, no priority order).
Strategy measuredShape(const PlanInputs& in, const Row& row) {
  PlanRequest r;
  Strategy s = row.strategy == "ds"   ? makeStrategy(in, "data+spatial", row.gpus, 64LL * row.gpus, r)
               : row.strategy == "df" ? makeStrategy(in, "data+filter", row.gpus, 16LL * row.gpus, r)
                                      : makeStrategy(in, row.strategy, row.gpus, 32, r);
  s.comm.overlap = false;
  s.comm.priority = false;
  return s;
}

TEST_F(Abci, DefaultModelAgainstTheMeasuredComparison) {
  const std::vector<Row> rows = readTable();
  ASSERT_EQ(rows.size(), 12U);
  std::map<int, std::vector<std::pair<double, const Row*>>> byGpus;
  double paradlError = 0;
  double ourError = 0;
  std::printf("%-8s %5s %10s %10s %10s %9s %9s\n", "strategy", "GPUs", "measured", "ParaDL", "paraxis", "ParaDL err",
              "paraxis err");
  for (const Row& row : rows) {
    const Estimate e = estimate(in, measuredShape(in, row), false);
    ASSERT_TRUE(e.feasible) << e.infeasibleReason;
    const double epoch = e.epochSeconds;
    const double ours = std::fabs(epoch - row.measured) / row.measured;
    const double theirs = std::fabs(row.paradl - row.measured) / row.measured;
    ourError += ours;
    paradlError += theirs;
    std::printf("%-8s %5d %10.0f %10.0f %10.0f %8.0f%% %8.0f%%\n", row.strategy.c_str(), row.gpus, row.measured,
                row.paradl, epoch, theirs * 100, ours * 100);
    byGpus[row.gpus].push_back({epoch, &row});
  }
  ourError /= static_cast<double>(rows.size());
  paradlError /= static_cast<double>(rows.size());
  std::printf("mean absolute error: ParaDL %.0f%%, paraxis %.0f%%\n", paradlError * 100, ourError * 100);
  // The measured ranking, filter ahead of channel included, holds at every GPU count.
  for (auto& [gpus, predicted] : byGpus) {
    std::sort(predicted.begin(), predicted.end());
    for (std::size_t i = 0; i < predicted.size(); ++i) {
      EXPECT_EQ(predicted[i].second->measuredRank, static_cast<int>(i) + 1)
          << predicted[i].second->strategy << " at " << gpus << " GPUs";
    }
  }
  // Regression guard at today's accuracy; the target of issue #3 is 20 %.
  EXPECT_LT(ourError, 0.45);
}

}  // namespace
}  // namespace paraxis::plan
