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
#include "calib/calibration.hpp"
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

// The measured runs shaped as they ran (tests/data/paradl_abci_resnet50_runs.csv: the grids,
// batches and no overlap of ChainerMN), in the table's order.
std::vector<calib::MeasuredRun> readRuns() {
  return calib::readMeasuredRuns(std::string(PARAXIS_TEST_DATA) + "/paradl_abci_resnet50_runs.csv");
}

// The measured ranking, filter ahead of channel included, at every GPU count.
void expectMeasuredRanking(const std::vector<Row>& table, const std::vector<calib::RunComparison>& predicted,
                           const char* model) {
  std::map<int, std::vector<std::pair<double, const Row*>>> byGpus;
  for (std::size_t i = 0; i < table.size(); ++i) byGpus[table[i].gpus].push_back({predicted[i].total, &table[i]});
  for (auto& [gpus, rows] : byGpus) {
    std::sort(rows.begin(), rows.end());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].second->measuredRank, static_cast<int>(i) + 1)
          << model << ": " << rows[i].second->strategy << " at " << gpus << " GPUs";
    }
  }
}

TEST_F(Abci, DefaultModelAgainstTheMeasuredComparison) {
  const std::vector<Row> table = readTable();
  const std::vector<calib::MeasuredRun> runs = readRuns();
  ASSERT_EQ(table.size(), 12U);
  ASSERT_EQ(runs.size(), table.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ASSERT_EQ(runs[i].label, table[i].strategy);
    ASSERT_EQ(runs[i].strategy.grid.total(), table[i].gpus);
    ASSERT_EQ(runs[i].total, table[i].measured);
  }
  // The hardware model alone (implementation factors 1).
  const std::vector<calib::RunComparison> hardware = calib::compareRuns(in, runs);

  // The implementation factors of ChainerMN/ChainerMNX, fitted on the 32- and 64-GPU runs
  // only; the 128- and 256-GPU runs are held out.
  std::vector<calib::MeasuredRun> fitting, heldOut;
  for (const calib::MeasuredRun& run : runs) (run.strategy.grid.total() <= 64 ? fitting : heldOut).push_back(run);
  const calib::ImplementationFit fit = calib::fitImplementation(in, fitting);
  hw::Cluster fitted = cluster;
  fitted.implementation = fit.implementation;
  PlanInputs withFit = in;
  withFit.cluster = &fitted;
  const std::vector<calib::RunComparison> calibrated = calib::compareRuns(withFit, runs);

  const hw::Implementation& f = fit.implementation;
  std::printf("implementation factors fitted on the %zu runs at 32 and 64 GPUs: spatial_compute %.3g, filter_compute %.3g, "
              "channel_compute %.3g, halo %.3g, spatial_gather %.3g, filter_collectives %.3g, channel_collectives %.3g, "
              "gradient_allreduce %.3g\n",
              fitting.size(), f.spatialCompute, f.filterCompute, f.channelCompute, f.halo, f.spatialGather,
              f.filterCollectives, f.channelCollectives, f.gradientAllreduce);
  std::printf("%-8s %5s %10s %10s %10s %10s %10s %10s %10s\n", "strategy", "GPUs", "measured", "ParaDL", "hardware",
              "fitted", "ParaDL err", "hw err", "fitted err");
  double paradlError = 0, heldOutError = 0;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const Row& row = table[i];
    const double theirs = std::fabs(row.paradl - row.measured) / row.measured;
    paradlError += theirs;
    if (row.gpus > 64) heldOutError += calibrated[i].error;
    std::printf("%-8s %5d %10.0f %10.0f %10.0f %10.0f %9.0f%% %9.0f%% %9.0f%%%s\n", row.strategy.c_str(), row.gpus,
                row.measured, row.paradl, hardware[i].total, calibrated[i].total, theirs * 100, hardware[i].error * 100,
                calibrated[i].error * 100, row.gpus > 64 ? "  (held out)" : "");
  }
  paradlError /= static_cast<double>(table.size());
  heldOutError /= static_cast<double>(heldOut.size());
  const double mae = calib::meanAbsoluteError(calibrated);
  std::printf("mean absolute error: ParaDL %.1f%%, paraxis hardware model %.1f%%, paraxis with the fitted "
              "implementation %.1f%% (held-out runs alone %.1f%%)\n",
              paradlError * 100, calib::meanAbsoluteError(hardware) * 100, mae * 100, heldOutError * 100);

  expectMeasuredRanking(table, hardware, "hardware model");
  expectMeasuredRanking(table, calibrated, "fitted");
  EXPECT_LE(mae, 0.20);           // issue #3's target (ParaDL's own: 27 % on these rows)
  EXPECT_LE(heldOutError, 0.20);  // and on runs the fit never saw
  EXPECT_LT(calib::meanAbsoluteError(hardware), 0.45);  // regression guard on the hardware model alone
}

// The physical fit on the same 32- and 64-GPU runs: compute factors, each path's alpha and
// bandwidth per level. It must hold out as well, keep the ranking, and say something a systems
// engineer recognises about ChainerMN/ChainerMNX: a halo exchange inside a node paying
// milliseconds of start-up per message (not NVLink's microseconds), and a gradient allreduce
// across nodes well below the node's two EDR links.
TEST_F(Abci, PhysicalFitHoldsOutWithDefensibleFigures) {
  const std::vector<Row> table = readTable();
  const std::vector<calib::MeasuredRun> runs = readRuns();
  std::vector<calib::MeasuredRun> fitting;
  for (const calib::MeasuredRun& run : runs) {
    if (run.strategy.grid.total() <= 64) fitting.push_back(run);
  }
  const calib::ImplementationFit fit = calib::fitImplementation(in, fitting, calib::FitKind::kPhysical);
  hw::Cluster fitted = cluster;
  fitted.implementation = fit.implementation;
  PlanInputs withFit = in;
  withFit.cluster = &fitted;
  const std::vector<calib::RunComparison> calibrated = calib::compareRuns(withFit, runs);
  double heldOut = 0;
  int held = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (table[i].gpus > 64) heldOut += calibrated[i].error, ++held;
  }
  heldOut /= held;
  std::printf("physical fit: %.1f%% on the fitted runs, %.1f%% held out\n", fit.errorAfter * 100, heldOut * 100);
  EXPECT_LE(fit.errorAfter, 0.15);
  EXPECT_LE(heldOut, 0.20);
  expectMeasuredRanking(table, calibrated, "physical fit");
  const hw::PathLink* halo = fitted.implementation.pathLink(hw::CommPath::kPointToPoint, "nvlink");
  const hw::PathLink* gradient = fitted.implementation.pathLink(hw::CommPath::kGradientAllreduce, "rack");
  ASSERT_NE(halo, nullptr);
  ASSERT_NE(gradient, nullptr);
  EXPECT_GT(halo->alpha, 1e-3);                                      // ms per halo message
  EXPECT_LT(1 / gradient->beta, 0.5 * cluster.levels[1].bandwidth());  // below one EDR link
  // The comm factors are not used: the paths carry the communication.
  EXPECT_EQ(fit.implementation.halo, 1);
  EXPECT_EQ(fit.implementation.gradientAllreduce, 1);
}

TEST_F(Abci, LeaveOneOutPredictsEachMeasuredRun) {
  // Each run predicted by factors fitted on the other eleven.
  const std::vector<Row> table = readTable();
  const std::vector<calib::MeasuredRun> runs = readRuns();
  double error = 0;
  for (std::size_t out = 0; out < runs.size(); ++out) {
    std::vector<calib::MeasuredRun> others = runs;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(out));
    hw::Cluster fitted = cluster;
    fitted.implementation = calib::fitImplementation(in, others).implementation;
    PlanInputs withFit = in;
    withFit.cluster = &fitted;
    const calib::RunComparison row = calib::compareRuns(withFit, {runs[out]}).front();
    std::printf("%-8s %5d measured %8.0f predicted %8.0f error %4.0f%%\n", table[out].strategy.c_str(), table[out].gpus,
                runs[out].total, row.total, row.error * 100);
    error += row.error;
  }
  error /= static_cast<double>(runs.size());
  std::printf("leave-one-out mean absolute error %.1f%%\n", error * 100);
  EXPECT_LE(error, 0.30);
}

}  // namespace
}  // namespace paraxis::plan
