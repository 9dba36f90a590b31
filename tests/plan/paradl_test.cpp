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

  double paradl(const std::string& name, int gpus, std::int64_t perGpu) {
    PlanRequest r;
    const Strategy s = makeStrategy(in, name, gpus, perGpu * gpus, r);
    return paradlEpoch(in, s, kSampleSeconds).total();
  }
};

TEST_F(Abci, ParadlVariantMatchesItsDataParallelLog) {
  // ParaDL's logs: sequential epoch ~3993 s; 2 GPUs 2015 s; 64 GPUs 68.1 s (64 samples per GPU).
  EXPECT_NEAR(paradl("serial", 1, 64) / 3993, 1, 0.02);
  EXPECT_NEAR(paradl("data", 2, 64) / 2015, 1, 0.02);
  EXPECT_NEAR(paradl("data", 64, 64) / 68.1, 1, 0.02);
}

TEST_F(Abci, ParadlVariantAtScaleAndForDataFilterIsReported) {
  // Not yet within 2 % (see the closing note of issue #3): printed, not asserted.
  const std::pair<const char*, double> logged[] = {{"data 1024", 5.46}, {"data 2048", 3.36}};
  std::printf("ParaDL variant vs ParaDL's log (s/epoch): data 1024: %.2f vs %.2f; data 2048: %.2f vs %.2f\n",
              paradl("data", 1024, 64), logged[0].second, paradl("data", 2048, 64), logged[1].second);
  PlanRequest r;
  const Strategy df = makeStrategy(in, "data+filter", 64, 16 * 64, r);
  const ParadlEpoch e = paradlEpoch(in, df, kSampleSeconds);
  std::printf("ParaDL variant data+filter 64 GPUs: compute %.1f s (log 71.9), communication %.1f s (log 159.1)\n",
              e.compute, e.communication);
  EXPECT_GT(e.communication, 0);
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
Strategy measuredShape(const PlanInputs& in, const Row& row) {
  PlanRequest r;
  if (row.strategy == "ds") return makeStrategy(in, "data+spatial", row.gpus, 64LL * row.gpus, r);
  if (row.strategy == "df") return makeStrategy(in, "data+filter", row.gpus, 16LL * row.gpus, r);
  return makeStrategy(in, row.strategy, row.gpus, 32, r);
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
  EXPECT_LT(ourError, 0.5);
}

}  // namespace
}  // namespace paraxis::plan
