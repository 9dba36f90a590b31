// Implementation factors: what they scale in an estimate, reading measured runs, and fitting
// the factors back from runs the model itself produced with known ones.
#include "calib/calibration.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/error.hpp"
#include "graph/zoo/zoo.hpp"
#include "hw/cluster_yaml.hpp"
#include "hw/presets.hpp"
#include "plan/estimator.hpp"
#include "plan/planner.hpp"
#include "plan/plan_fixture.hpp"

namespace paraxis::plan {
namespace {

Strategy shaped(const std::string& name, const std::string& grid, std::int64_t batch, bool overlap = false) {
  Strategy s;
  s.name = name;
  s.grid = parseGrid(grid);
  s.globalBatch = batch;
  s.comm.overlap = overlap;
  s.comm.order = overlap ? ReduceOrder::kForwardPriority : ReduceOrder::kFifo;
  return s;
}

TEST(Grid, ParsesWhatStrPrints) {
  for (const char* text : {"data=8xh=4", "data=16xfilter=4", "channel=32", "data=2xpipeline=2xd=2xh=2xw=2", "1",
                           "data=2xh=2xhead=filter"}) {
    EXPECT_EQ(parseGrid(text).str(), text);
  }
  EXPECT_TRUE(parseGrid("h=2xw=2xhead=filter").filterHead);
  EXPECT_FALSE(parseGrid("h=2xhead=samples").filterHead);
  // A filter head splits over spatial ranks, alone with the data axis.
  EXPECT_THROW(parseGrid("data=4xhead=filter"), ConfigError);
  EXPECT_THROW(parseGrid("filter=2xh=2xhead=filter"), ConfigError);
  EXPECT_THROW(parseGrid("h=2xhead=filters"), ConfigError);
  EXPECT_THROW(parseGrid("data=8xq=4"), ConfigError);
  EXPECT_THROW(parseGrid("data=0"), ConfigError);
  EXPECT_THROW(parseGrid("data=8x"), ConfigError);
  EXPECT_THROW(parseGrid("data=8h"), ConfigError);
}

TEST(Implementation, EachFactorScalesItsOwnTerm) {
  const graph::Model m = graph::buildZooModel("resnet50");
  hw::Cluster cl = hw::loadCluster("abci");
  PlanInputs in = testing::inputsFor(m, cl);
  const Strategy ds = shaped("data+spatial", "data=2xh=4", 64);
  const Strategy df = shaped("data+filter", "data=2xfilter=4", 64);
  const Strategy ch = shaped("channel", "channel=4", 16);
  const Estimate ds1 = estimate(in, ds), df1 = estimate(in, df), ch1 = estimate(in, ch);
  cl.implementation.halo = 3;
  cl.implementation.spatialCompute = 2;
  cl.implementation.filterCollectives = 5;
  cl.implementation.gradientAllreduce = 1.5;
  cl.implementation.channelCollectives = 7;
  const Estimate ds2 = estimate(in, ds), df2 = estimate(in, df), ch2 = estimate(in, ch);
  EXPECT_NEAR(ds2.time.halo, 3 * ds1.time.halo, 1e-12);
  EXPECT_GT(ds1.time.halo, 0);
  // Every layer before the split point runs spatially split; the rest (pooling, FC) do not.
  EXPECT_GT(ds2.time.compute(), 1.5 * ds1.time.compute());
  EXPECT_LT(ds2.time.compute(), 2 * ds1.time.compute());
  EXPECT_NEAR(df2.time.layerCollectives, 5 * df1.time.layerCollectives, 1e-12);
  EXPECT_NEAR(df2.time.gradientAllreduce, 1.5 * df1.time.gradientAllreduce, 1e-12);
  EXPECT_NEAR(df2.time.compute(), df1.time.compute(), 1e-15);  // filter compute untouched
  EXPECT_NEAR(ch2.time.layerCollectives, 7 * ch1.time.layerCollectives, 1e-12);
}

TEST(ChannelTile, WasteByHand) {
  // 64 filters split 4 ways leave 16 < 32: the kernels run a whole tile, twice the FLOPs.
  EXPECT_DOUBLE_EQ(cost::channelTileWaste(32, 256, 64, 1, 0.25), 2);
  // Both dimensions at least a tile: no waste.
  EXPECT_DOUBLE_EQ(cost::channelTileWaste(32, 256, 256, 1, 0.25), 1);
  // A layer already narrower than a tile (16) split in 2: 8 local, waste 4 over the whole's 2.
  EXPECT_DOUBLE_EQ(cost::channelTileWaste(32, 16, 16, 0.5, 1), 2);
  // No tile, no waste.
  EXPECT_DOUBLE_EQ(cost::channelTileWaste(1, 16, 16, 0.5, 0.5), 1);
}

TEST(ChannelTile, WideningTheSplitStopsPaying) {
  // Strong-scaled filter parallelism: past the point where layers drop below a tile, compute
  // stops falling (the effect ParaDL misses).
  const graph::Model m = graph::buildZooModel("resnet50");
  const hw::Cluster cl = hw::loadCluster("abci");
  ASSERT_EQ(cl.device.channelTile, 32);
  hw::Cluster flat = cl;
  flat.device.channelTile = 1;
  const PlanInputs tiled = testing::inputsFor(m, cl), untiled = testing::inputsFor(m, flat);
  const Strategy f4 = shaped("filter", "filter=4", 32), f64 = shaped("filter", "filter=64", 32);
  // Four-way, only the 64-filter layers drop below a tile.
  EXPECT_NEAR(estimate(tiled, f4).time.compute() / estimate(untiled, f4).time.compute(), 1, 0.15);
  const double f64tiled = estimate(tiled, f64).time.compute();
  EXPECT_GT(f64tiled, 2 * estimate(untiled, f64).time.compute());
  EXPECT_GT(f64tiled, 0.5 * estimate(tiled, f4).time.compute());
}

class Fit : public ::testing::Test {
 protected:
  graph::Model model = graph::buildZooModel("resnet50");
  hw::Cluster cluster = hw::loadCluster("abci");
  PlanInputs in = [this] {
    PlanInputs p = testing::inputsFor(model, cluster);
    p.datasetSamples = 1281167;
    return p;
  }();

  // Runs as the model predicts them on a cluster whose implementation is `truth`.
  std::vector<calib::MeasuredRun> synthetic(const hw::Implementation& truth, const std::vector<Strategy>& shapes) {
    hw::Cluster real = cluster;
    real.implementation = truth;
    PlanInputs measuredOn = in;
    measuredOn.cluster = &real;
    std::vector<calib::MeasuredRun> runs;
    for (const Strategy& s : shapes) {
      calib::MeasuredRun run;
      run.label = s.name;
      run.strategy = s;
      run.line = static_cast<int>(runs.size()) + 1;
      runs.push_back(run);
    }
    for (const calib::RunComparison& row : calib::compareRuns(measuredOn, runs)) {
      calib::MeasuredRun& run = runs[row.run->line - 1];
      run.total = row.total;
      if (run.strategy.grid.filter == 1) {  // some runs give the split, some only the total
        run.compute = row.compute;
        run.communication = row.communication;
      }
    }
    return runs;
  }
};

TEST_F(Fit, RecoversTheFactorsThatMadeTheRuns) {
  hw::Implementation truth;
  truth.spatialCompute = 0.6;
  truth.halo = 40;
  truth.filterCompute = 2.5;
  truth.filterCollectives = 0.7;
  truth.gradientAllreduce = 3;
  const std::vector<calib::MeasuredRun> runs =
      synthetic(truth, {shaped("data+spatial", "data=8xh=4", 2048), shaped("data+spatial", "data=32xh=4", 8192),
                        shaped("data+spatial", "data=16xh=2xw=2", 1024), shaped("data+filter", "data=8xfilter=4", 512),
                        shaped("data+filter", "data=64xfilter=4", 4096), shaped("filter", "filter=16", 32),
                        shaped("data", "data=64", 4096)});
  const calib::ImplementationFit fit = calib::fitImplementation(in, runs);
  EXPECT_GT(fit.errorBefore, 0.2);  // the factors matter: a fit that returned 1s would fail below
  EXPECT_LT(fit.errorAfter, 0.01);
  const hw::Implementation& got = fit.implementation;
  EXPECT_NEAR(got.spatialCompute / truth.spatialCompute, 1, 0.02);
  EXPECT_NEAR(got.halo / truth.halo, 1, 0.05);
  EXPECT_NEAR(got.filterCompute / truth.filterCompute, 1, 0.02);
  EXPECT_NEAR(got.filterCollectives / truth.filterCollectives, 1, 0.05);
  EXPECT_NEAR(got.gradientAllreduce / truth.gradientAllreduce, 1, 0.05);
  // No run splits channels: those factors are not fitted and stay 1.
  EXPECT_EQ(got.channelCompute, 1);
  EXPECT_EQ(got.channelCollectives, 1);
  EXPECT_EQ(std::count(fit.fitted.begin(), fit.fitted.end(), "channel_compute"), 0);
  EXPECT_EQ(std::count(fit.fitted.begin(), fit.fitted.end(), "halo"), 1);
}

// A cluster measured by calibrate --quick keeps its paths and overlap through a fit of the
// factors on top, and the runs made with them are fitted with factors near 1.
TEST_F(Fit, KeepsWhatWasMeasured) {
  cluster.implementation.paths[static_cast<int>(hw::CommPath::kGradientAllreduce)] = {{"rack", 30e-6, 1 / 5e9}};
  cluster.implementation.overlap = {.hidden = 0.5, .slowdown = 1.2};
  const hw::Implementation measured = cluster.implementation;
  const std::vector<calib::MeasuredRun> runs =
      synthetic(measured, {shaped("data", "data=64", 4096), shaped("data+filter", "data=8xfilter=4", 512)});
  const calib::ImplementationFit fit = calib::fitImplementation(in, runs);
  EXPECT_LT(fit.errorBefore, 1e-9);
  ASSERT_EQ(fit.implementation.paths[static_cast<int>(hw::CommPath::kGradientAllreduce)].size(), 1u);
  EXPECT_EQ(fit.implementation.overlap.hidden, 0.5);
  EXPECT_NEAR(fit.implementation.gradientAllreduce, 1, 0.01);
}

// The communication fit moves each path's alpha and bandwidth and the overlap, never compute:
// runs made with a slower halo path and the compute as the device gives it are fitted back to
// within a per cent by the paths alone, every compute factor left at 1 and unnamed.
TEST_F(Fit, CommunicationFitLeavesComputeAsTheDeviceGivesIt) {
  hw::Implementation truth;
  truth.paths[static_cast<int>(hw::CommPath::kPointToPoint)] = {{"nvlink", 200e-6, 1 / 2e9}};
  const std::vector<calib::MeasuredRun> runs =
      synthetic(truth, {shaped("data+spatial", "data=8xh=4", 2048), shaped("data+spatial", "data=16xh=2xw=2", 1024),
                        shaped("spatial", "h=4", 32), shaped("data+filter", "data=8xfilter=4", 512)});
  const calib::ImplementationFit fit = calib::fitImplementation(in, runs, calib::FitKind::kCommunication);
  EXPECT_GT(fit.errorBefore, 0.05);
  EXPECT_LT(fit.errorAfter, 0.01);
  for (const hw::ImplementationFactor& f : hw::kImplementationFactors) {
    EXPECT_EQ(fit.implementation.*f.field, 1) << f.key;
    EXPECT_EQ(std::count(fit.fitted.begin(), fit.fitted.end(), f.key), 0) << f.key;
  }
  EXPECT_EQ(std::count(fit.fitted.begin(), fit.fitted.end(), "paths.point_to_point.nvlink.alpha"), 1);
  // The physical fit on the same runs frees the compute factors the runs exercise.
  const calib::ImplementationFit physical = calib::fitImplementation(in, runs, calib::FitKind::kPhysical);
  EXPECT_EQ(std::count(physical.fitted.begin(), physical.fitted.end(), "spatial_compute"), 1);
}

TEST(MeasuredRuns, ReadsTheFormat) {
  const std::vector<calib::MeasuredRun> runs = calib::readMeasuredRuns(std::string(PARAXIS_TEST_DATA) + "/paradl_abci_resnet50_runs.csv");
  ASSERT_EQ(runs.size(), 12U);
  EXPECT_EQ(runs[0].label, "ds");
  EXPECT_EQ(runs[0].strategy.name, "data+spatial");
  EXPECT_EQ(runs[0].strategy.grid.str(), "data=8xh=4");
  EXPECT_EQ(runs[0].strategy.globalBatch, 2048);
  EXPECT_FALSE(runs[0].strategy.comm.overlap);
  EXPECT_EQ(runs[0].compute, 65);
  EXPECT_EQ(runs[0].communication, 416);
  EXPECT_EQ(runs[0].total, 481);
}

TEST(MeasuredRuns, ReadsATrainReport) {
  const std::string path = ::testing::TempDir() + "/report.json";
  std::ofstream(path) << R"({"model": "small-cnn", "ranks": 2, "global_batch": 64, "samples_per_second": 800,
    "measured_iterations": 20,
    "time": {"forward": 0.02, "backward": 0.04, "update": 0.001, "gradient_exposed": 0.003, "gradient_total": 0.02,
             "data_loading": 0.0},
    "strategy": {"version": 1, "name": "data", "global_batch": 64, "micro_batches": 1, "schedule": "1f1b",
      "grid": {"data": 2, "pipeline": 1, "channel": 1, "filter": 1, "spatial_d": 1, "spatial_h": 1, "spatial_w": 1},
      "comm": {"overlap": true, "grouping": "fusion", "fusion_bytes": 4194304, "first_bucket_bytes": 1048576,
               "groups": 4, "negotiation": "none", "cycle_seconds": 0, "fp16": false, "density": 1,
               "order": "priority"}}})";
  const std::vector<calib::MeasuredRun> runs = calib::readMeasuredRuns(path);
  ASSERT_EQ(runs.size(), 1U);
  const calib::MeasuredRun& run = runs.front();
  EXPECT_EQ(run.model, "small-cnn");
  EXPECT_TRUE(run.perIteration);
  EXPECT_EQ(run.strategy.grid.data, 2);
  EXPECT_DOUBLE_EQ(run.total, 64.0 / 800);
  EXPECT_DOUBLE_EQ(run.compute, 0.061);
  EXPECT_DOUBLE_EQ(run.communication, 0.003);
  // Predicted per iteration too, and only for the model it ran.
  const graph::Model m = graph::buildZooModel("small-cnn");
  const hw::Cluster cl = hw::loadCluster("local");
  const PlanInputs in = testing::inputsFor(m, cl);
  const calib::RunComparison row = calib::compareRuns(in, runs).front();
  EXPECT_DOUBLE_EQ(row.total, row.estimate.time.iteration());
  const graph::Model other = graph::buildZooModel("lenet");
  EXPECT_THROW(calib::compareRuns(testing::inputsFor(other, cl), runs), ConfigError);
}

std::string errorOf(const std::string& text) {
  const std::string path = ::testing::TempDir() + "/runs.csv";
  std::ofstream(path) << text;
  try {
    calib::readMeasuredRuns(path);
  } catch (const ConfigError& e) {
    return std::string(e.what()).substr(path.size());
  }
  return "no error";
}

TEST(MeasuredRuns, BadFilesNameTheLineAndColumn) {
  EXPECT_EQ(errorOf("strategy,grid,global_batch,total,speed\n"),
            ":1: unknown column 'speed' (expected some of: label, strategy, grid, global_batch, overlap, compute, "
            "communication, total)");
  EXPECT_EQ(errorOf("strategy,grid,total\n"), ":1: the header lacks the column 'global_batch'");
  EXPECT_EQ(errorOf("# c\nstrategy,grid,global_batch,total\ndata,data=4,64\n"), ":3: 3 cells; the header has 4");
  EXPECT_EQ(errorOf("strategy,grid,global_batch,total\ndata,data=4,64,fast\n"),
            ":2: column 'total': expected seconds per epoch in (0, 3.2e7], found 'fast'");
  EXPECT_EQ(errorOf("strategy,grid,global_batch,total\ndata,data=4,6.5,10\n"),
            ":2: column 'global_batch': expected a positive integer below 2^31, found '6.5'");
  EXPECT_EQ(errorOf("strategy,grid,global_batch,total\nsample,data=4,64,10\n").substr(0, 44),
            ":2: column 'strategy': unknown strategy 'sam");
  EXPECT_NE(errorOf("strategy,grid,global_batch,total\ndata,data=four,64,10\n").find(":2: column 'grid': grid 'data=four'"),
            std::string::npos);
  EXPECT_EQ(errorOf("strategy,grid,global_batch,overlap,total\ndata,data=4,64,maybe,10\n"),
            ":2: column 'overlap': expected yes or no, found 'maybe'");
  EXPECT_EQ(errorOf("strategy,grid,global_batch,total\n"), ": no measured runs");
}

TEST(ClusterText, ImplementationSectionRoundTrips) {
  hw::Implementation im;
  im.source = "fitted \"here\"";
  im.halo = 150.5;
  im.filterCompute = 2.53;
  const std::string once = hw::withImplementation(hw::clusterText("abci"), im);
  const hw::Cluster c = hw::loadClusterText(once, "fitted");
  EXPECT_EQ(c.implementation.halo, 150.5);
  EXPECT_EQ(c.implementation.filterCompute, 2.53);
  EXPECT_EQ(c.implementation.spatialCompute, 1);
  EXPECT_EQ(c.implementation.source, "fitted 'here'");
  EXPECT_EQ(c.device.channelTile, 32);
  // Replacing keeps one section.
  im.halo = 2;
  const std::string twice = hw::withImplementation(once, im);
  EXPECT_EQ(hw::loadClusterText(twice, "fitted").implementation.halo, 2);
  EXPECT_EQ(twice.find("implementation:"), twice.rfind("implementation:"));
}

TEST(ClusterText, BadFactorsNameTheKey) {
  const std::string text = hw::clusterText("abci") + "implementation: {halo: 0}\n";
  try {
    hw::loadClusterText(text, "x.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "x.yaml: implementation.halo: expected a factor in (0, 1e6], found 0");
  }
  EXPECT_THROW(hw::loadClusterText(hw::clusterText("abci") + "implementation: {speed: 2}\n", "x.yaml"), ConfigError);
}

// A run's speed probe ran on its host's ranks at once: against a device measured with 2 ranks
// a node at once, one rank alone 1.25x as fast, a 1-rank run's probe is held to the alone
// figure, a 2-rank run's to the device's, and a report that does not say its ranks to the device's.
TEST(RunMachine, SlowdownHoldsTheProbeToItsRanksAtOnce) {
  hw::Device device;
  device.speedProbe = 0.010;
  device.sharing = {2, 1.25};
  calib::RunMachine run;
  run.speedProbe = 0.008;
  run.ranksPerHost = 1;
  EXPECT_DOUBLE_EQ(run.slowdownAgainst(device), 1.0);
  run.ranksPerHost = 2;
  EXPECT_DOUBLE_EQ(run.slowdownAgainst(device), 0.8);
  run.ranksPerHost = 0;
  EXPECT_DOUBLE_EQ(run.slowdownAgainst(device), 0.8);
  device.speedProbe = 0;
  EXPECT_EQ(run.slowdownAgainst(device), 0);
}

}  // namespace
}  // namespace paraxis::plan
