// Placement of operations (issue #16): the integer program against enumeration on small
// graphs (equal optimal makespans), every method's answer through the independent checker,
// the checker itself against broken placements, and the training graph of a real model.
#include "plan/placement.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.hpp"
#include "graph/zoo/zoo.hpp"
#include "hw/presets.hpp"
#include "plan/estimator.hpp"
#include "plan/milp.hpp"
#include "plan/op_graph.hpp"
#include "plan/plan_fixture.hpp"
#include "plan/planner.hpp"
#include "plan/strategy_json.hpp"

namespace paraxis::plan {
namespace {

// A random DAG of `n` operations, each its own unit: durations 1..10, edges i -> j (i < j)
// with probability 0.4 and transfers 0..6, unit memory 1..4.
OpGraph randomGraph(std::mt19937& random, int n) {
  std::uniform_real_distribution<double> duration(1, 10), transfer(0, 6), bytes(1, 4), coin(0, 1);
  std::vector<double> seconds, unitBytes;
  std::vector<OpEdge> edges;
  for (int i = 0; i < n; ++i) {
    seconds.push_back(duration(random));
    unitBytes.push_back(bytes(random));
    for (int j = 0; j < i; ++j) {
      if (coin(random) < 0.4) edges.push_back({j, i, 1, transfer(random)});
    }
  }
  return explicitGraph(seconds, edges, unitBytes);
}

void expectFeasible(const OpGraph& g, const PlacementLimits& limits, const OpPlacement& p) {
  const std::vector<std::string> problems = placementViolations(g, limits, p, 1e-7);
  EXPECT_TRUE(problems.empty()) << p.method << ": " << (problems.empty() ? "" : problems.front());
}

TEST(Placement, TheIntegerProgramFindsTheOptimumEnumerationFinds) {
  ASSERT_FALSE(milpSolverName().empty()) << "this build has no ILP solver (make setup installs libglpk-dev)";
  std::mt19937 random(16);
  for (int trial = 0; trial < 24; ++trial) {
    const int n = 4 + trial % 5;
    OpGraph g = randomGraph(random, n);
    g.receiverCopies = trial % 4 >= 2;  // half the graphs: transfers copied by the receiving device
    PlacementLimits limits;
    limits.devices = 2 + trial % 2;
    // Every third graph: memory for about half the units per device.
    if (trial % 3 == 0) limits.memoryPerDevice = 2.5 * n / 2 + 4;
    const OpPlacement exact = exhaustivePlacement(g, limits);
    const OpPlacement list = listSchedule(g, limits);
    const OpPlacement ilp = placementIlp(g, limits, list, {.timeLimitSeconds = 30});
    expectFeasible(g, limits, exact);
    expectFeasible(g, limits, list);
    expectFeasible(g, limits, ilp);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": " << n << " operations, " << g.edges.size() << " edges, "
                                    << limits.devices << " devices");
    EXPECT_TRUE(ilp.optimal) << ilp.method;
    EXPECT_NEAR(ilp.makespan, exact.makespan, 1e-6 * exact.makespan);
    EXPECT_GE(list.makespan, exact.makespan - 1e-9);
    EXPECT_LE(makespanLowerBound(g, limits.devices), exact.makespan + 1e-9);
  }
}

TEST(Placement, TheCheckerNamesEachBrokenConstraint) {
  // a -> b with a transfer of 5 s; c independent; memory 2 per unit.
  const OpGraph g = explicitGraph({4, 3, 2}, {{0, 1, 1, 5}}, {2, 2, 2});
  const PlacementLimits limits{.devices = 2, .memoryPerDevice = 4};
  OpPlacement p;
  p.device = {0, 0, 1};
  p.start = {0, 4, 0};
  p.makespan = 7;
  EXPECT_TRUE(placementViolations(g, limits, p).empty());
  OpPlacement crossing = p;
  crossing.device = {0, 1, 1};
  crossing.start = {0, 4, 0};
  const auto early = placementViolations(g, limits, crossing);
  ASSERT_FALSE(early.empty());
  EXPECT_NE(early.front().find("before its input from 'op0' arrives at 9"), std::string::npos) << early.front();
  OpPlacement overlap = p;
  overlap.device = {0, 0, 0};
  EXPECT_NE(placementViolations(g, {.devices = 2, .memoryPerDevice = 8}, overlap).front().find("device 0: operations"),
            std::string::npos);
  EXPECT_NE(placementViolations(g, {.devices = 2, .memoryPerDevice = 3}, p).front().find("device 0: its units hold"),
            std::string::npos);
  OpPlacement outside = p;
  outside.device[2] = 2;
  EXPECT_NE(placementViolations(g, limits, outside).front().find("outside 0..1"), std::string::npos);
  OpPlacement wrongEnd = p;
  wrongEnd.makespan = 6;
  EXPECT_NE(placementViolations(g, limits, wrongEnd).front().find("makespan 6 s"), std::string::npos);
}

TEST(Placement, OnReceiverCopyHostsATransferOccupiesTheConsumer) {
  // a -> b with a transfer of 5 s, b on the other device: b waits for nothing but copies for 5 s.
  OpGraph g = explicitGraph({4, 3}, {{0, 1, 1, 5}}, {1, 1});
  g.receiverCopies = true;
  const PlacementLimits limits{.devices = 2};
  OpPlacement p;
  p.device = {0, 1};
  p.start = {0, 4};
  p.makespan = 12;  // 4 + 5 + 3
  EXPECT_TRUE(placementViolations(g, limits, p).empty()) << placementViolations(g, limits, p).front();
  EXPECT_DOUBLE_EQ(scheduleInOrder(g, {0, 1}, {0, 1}).makespan, 12);
  g.receiverCopies = false;  // a DMA host: the same transfer delays b instead
  EXPECT_DOUBLE_EQ(scheduleInOrder(g, {0, 1}, {0, 1}).makespan, 12);
  EXPECT_DOUBLE_EQ(scheduleInOrder(g, {0, 1}, {0, 1}).start[1], 9);
  EXPECT_NE(placementViolations(g, limits, p).front().find("before its input from 'op0' arrives at 9"), std::string::npos);
}

TEST(Placement, AUnitTooLargeForEveryDeviceIsNamed) {
  const OpGraph g = explicitGraph({1, 1}, {}, {1, 10});
  try {
    listSchedule(g, {.devices = 2, .memoryPerDevice = 4});
    FAIL() << "placed a unit larger than a device";
  } catch (const InfeasibleError& e) {
    EXPECT_NE(std::string(e.what()).find("unit 'op1' needs"), std::string::npos) << e.what();
  }
}

TEST(Placement, EachMethodByNameGivesAFeasiblePlacementNoWorseThanTheListSchedule) {
  std::mt19937 random(7);
  const OpGraph g = randomGraph(random, 6);
  const PlacementLimits limits{.devices = 2};
  const OpPlacement list = listSchedule(g, limits);
  EXPECT_DOUBLE_EQ(placeBy("list", g, limits, 1).makespan, list.makespan);
  std::vector<std::string> methods{"list", "exhaustive", "auto"};
  if (!milpSolverName().empty()) methods.push_back("ilp");
  for (const std::string& method : methods) {
    const OpPlacement p = placeBy(method, g, limits, 5);
    expectFeasible(g, limits, p);
    EXPECT_LE(p.makespan, list.makespan + 1e-9) << method;
  }
  if (!milpSolverName().empty()) {  // the program is exact on 6 operations
    EXPECT_DOUBLE_EQ(placeBy("exhaustive", g, limits, 1).makespan, placeBy("auto", g, limits, 5).makespan);
  }
  EXPECT_TRUE(isPlacementMethod("ilp"));
  EXPECT_FALSE(isPlacementMethod("heft"));
  EXPECT_THROW(placeBy("heft", g, limits, 1), ConfigError);
}

// A branching model small enough to enumerate: two convolution branches joined by a concat.
graph::Model twoBranches() {
  graph::ModelBuilder b("branches", graph::TensorShape{8, {16, 16}});
  const int stem = b.conv("stem", 0, {.filters = 16, .kernel = {3}, .padding = {1}});
  const int left = b.conv("left", stem, {.filters = 32, .kernel = {3}, .padding = {1}});
  const int right = b.conv("right", stem, {.filters = 32, .kernel = {5}, .padding = {2}});
  const int joined = b.concat("join", {left, right});
  b.fc("fc", joined, 10);
  return std::move(b).build();
}

TEST(Placement, ATrainingGraphKeepsEachUnitsPassesTogetherAndPlacesBranchesApart) {
  const graph::Model model = twoBranches();
  const hw::Cluster cluster = testing::toyCluster();
  const OpGraph g = trainingGraph(model, cluster, 64, 2, 2);
  // Units: input+stem, left, right, join+fc; a forward and a backward operation each.
  ASSERT_EQ(g.units(), 4);
  ASSERT_EQ(g.size(), 8);
  EXPECT_EQ(g.unitNames[0], "input..stem");
  EXPECT_EQ(g.ops[7].name, "bwd input..stem");
  const std::vector<std::vector<bool>> reaches = g.reachability();
  for (int u = 0; u < g.units(); ++u) EXPECT_TRUE(reaches[u][2 * g.units() - 1 - u]) << g.unitNames[u];
  EXPECT_FALSE(reaches[1][2]) << "the branches are independent";
  const PlacementLimits limits{.devices = 2};
  const OpPlacement exact = exhaustivePlacement(g, limits);
  const OpPlacement ilp = placementIlp(g, limits, listSchedule(g, limits), {.timeLimitSeconds = 30});
  expectFeasible(g, limits, ilp);
  EXPECT_TRUE(ilp.optimal);
  EXPECT_NEAR(ilp.makespan, exact.makespan, 1e-6 * exact.makespan);
  EXPECT_LT(exact.makespan, g.totalSeconds()) << "the branches run at the same time";
  EXPECT_NE(exact.device[1], exact.device[2]);
}

TEST(Placement, InceptionV3OnTwoDevicesBeatsEveryPipelineSplitWithoutMicroBatches) {
  // Without micro-batches a pipeline's stages run one after another: no split finishes a step
  // sooner than the whole model's work on one device. A placement runs branches side by side.
  const graph::Model model = graph::buildZooModel("inception-v3");
  const hw::Cluster cluster = hw::loadCluster("dgx1-v100");
  const OpGraph g = trainingGraph(model, cluster, 32, 2, 2);
  const PlacementLimits limits{.devices = 2, .memoryPerDevice = cluster.device.memoryBytes};
  const OpPlacement list = listSchedule(g, limits);
  expectFeasible(g, limits, list);
  EXPECT_LT(list.makespan, 0.95 * g.totalSeconds()) << g.units() << " units";
  EXPECT_GE(list.makespan, list.lowerBound);
}

// The oracle's data+placement: a replica's compute is the list schedule's makespan on its
// devices, the busiest device's own work as compute and the rest of the makespan as bubble;
// each device holds (and reduces) only its units' weights.
TEST(PlacementStrategy, TheReplicaTakesTheListSchedulesMakespan) {
  const graph::Model model = twoBranches();
  const hw::Cluster cluster = testing::toyCluster();
  const PlanInputs in = testing::inputsFor(model, cluster);
  const Strategy s{"data+placement", parseGrid("data=2xplace=2"), 128};
  ASSERT_EQ(limitViolation(in, s), "");
  const Estimate e = estimate(in, s, false);
  ASSERT_TRUE(e.feasible) << e.infeasibleReason;
  const OpPlacement p = listSchedule(trainingGraph(model, cluster, 64, 4, 2), {.devices = 2});
  const TimeBreakdown& t = e.time;
  EXPECT_NEAR(t.forward + t.backwardData + t.backwardWeight + t.bubble, p.makespan, 1e-9 * p.makespan);
  EXPECT_GT(t.bubble, 0);
  EXPECT_LT(e.memory.weights, model.totals().params * 4.0);
  const Estimate data = estimate(in, {"data", Grid{.data = 2}, 128}, false);
  EXPECT_LT(t.forward + t.backwardData + t.backwardWeight + t.bubble,
            data.time.forward + data.time.backwardData + data.time.backwardWeight);
}

// A device that waits for another's tensor waits as a pipeline stage does: with a handoff wait
// every transfer between devices takes that much longer, in the graph `paraxis place` schedules
// and in the strategy's makespan alike.
TEST(PlacementStrategy, HandoffWaitsLengthenTheTransfersBetweenDevices) {
  const graph::Model model = twoBranches();
  hw::Cluster cluster = testing::toyCluster();
  const PlanInputs in = testing::inputsFor(model, cluster);
  const Strategy s{"data+placement", parseGrid("data=2xplace=2"), 128};
  const Estimate quiet = estimate(in, s, false);
  const double quietEdge = trainingGraph(model, cluster, 64, 2, 2).edges.front().seconds;
  cluster.implementation.handoffWait = 1e-3;
  const Estimate waiting = estimate(in, s, false);
  const OpGraph g = trainingGraph(model, cluster, 64, 2, 2);
  EXPECT_DOUBLE_EQ(g.edges.front().seconds, quietEdge + 1e-3);
  const TimeBreakdown& t = waiting.time;
  EXPECT_NEAR(t.forward + t.backwardData + t.backwardWeight + t.bubble, listSchedule(g, {.devices = 2}).makespan,
              1e-9 * t.iteration());
  // Waits that outweigh the branches' overlap leave the list schedule on one device: a longer step.
  const TimeBreakdown& q = quiet.time;
  EXPECT_GT(t.forward + t.backwardData + t.backwardWeight + t.bubble,
            q.forward + q.backwardData + q.backwardWeight + q.bubble);
}

// The graph `paraxis place` schedules runs its layers at the pace of the ranks that compute on a
// node at once (device.sharing), as the oracle's estimate does: one rank alone at the alone
// rate, a node's worth at the figures; the oracle's makespan stays the schedule's.
TEST(PlacementStrategy, TheGraphsLayersRunAtThePaceOfTheRanksOnANode) {
  const graph::Model model = twoBranches();
  hw::Cluster cluster = testing::toyCluster();
  const OpGraph figures = trainingGraph(model, cluster, 64, 2, 2);
  cluster.device.sharing = {.ranks = 2, .aloneSpeedup = 1.6};
  const OpGraph alone = trainingGraph(model, cluster, 64, 1, 2);
  const OpGraph crowded = trainingGraph(model, cluster, 64, 2, 2);
  ASSERT_EQ(alone.size(), figures.size());
  for (int i = 0; i < figures.size(); ++i) {
    EXPECT_NEAR(alone.ops[i].seconds, figures.ops[i].seconds / 1.6, 1e-12) << figures.ops[i].name;
    EXPECT_DOUBLE_EQ(crowded.ops[i].seconds, figures.ops[i].seconds) << figures.ops[i].name;
  }
  EXPECT_DOUBLE_EQ(alone.edges.front().seconds, figures.edges.front().seconds) << "transfers are no compute";
  const PlanInputs in = testing::inputsFor(model, cluster);
  const Estimate e = estimate(in, {"data+placement", parseGrid("data=2xplace=2"), 128}, false);
  const TimeBreakdown& t = e.time;
  EXPECT_NEAR(t.forward + t.backwardData + t.backwardWeight + t.bubble,
              listSchedule(trainingGraph(model, cluster, 64, 4, 2), {.devices = 2}).makespan,
              1e-9 * t.iteration());
}

// Where the ranks time-share the cores (device.time_sharing), each device's share of the forward,
// then of the backward, is a span stretched by the curve at its length, in the graph `paraxis
// place` schedules as in the oracle's placement: the oracle's makespan stays the schedule's.
TEST(PlacementStrategy, TheGraphsSpansStretchWhereTheRanksTimeShareTheCores) {
  const graph::Model model = twoBranches();
  hw::Cluster cluster = testing::toyCluster();
  const OpGraph figures = trainingGraph(model, cluster, 64, 4, 2);
  const int units = figures.units();
  double forward = 0, backward = 0;
  for (int i = 0; i < figures.size(); ++i) (i < units ? forward : backward) += figures.ops[i].seconds;
  cluster.device.timeSharing = {
      .ranks = 2, .shared = 2, .slice = forward / 2};  // a device's forward: 2 - 1/e
  const OpGraph shared = trainingGraph(model, cluster, 64, 4, 2);
  const double forwardFactor = 2 - std::exp(-1.0), backwardFactor = 2 - std::exp(-backward / forward);
  ASSERT_EQ(shared.size(), figures.size());
  for (int i = 0; i < figures.size(); ++i) {
    EXPECT_NEAR(shared.ops[i].seconds, figures.ops[i].seconds * (i < units ? forwardFactor : backwardFactor),
                1e-12)
        << figures.ops[i].name;
  }
  EXPECT_DOUBLE_EQ(shared.edges.front().seconds, figures.edges.front().seconds) << "transfers are no compute";
  // A job of one rank a node shares no core.
  const OpGraph alone = trainingGraph(model, cluster, 64, 1, 1);
  EXPECT_DOUBLE_EQ(alone.ops.front().seconds,
                   trainingGraph(model, testing::toyCluster(), 64, 1, 1).ops.front().seconds);
  const PlanInputs in = testing::inputsFor(model, cluster);
  const Estimate e = estimate(in, {"data+placement", parseGrid("data=2xplace=2"), 128}, false);
  const TimeBreakdown& t = e.time;
  EXPECT_NEAR(t.forward + t.backwardData + t.backwardWeight + t.bubble,
              listSchedule(shared, {.devices = 2}).makespan, 1e-9 * t.iteration());
}

TEST(PlacementStrategy, APlacementGoesWithTheDataAxisOnly) {
  const graph::Model model = twoBranches();
  const hw::Cluster cluster = testing::toyCluster();
  const PlanInputs in = testing::inputsFor(model, cluster);
  EXPECT_EQ(limitViolation(in, {"placement+filter", parseGrid("place=2xfilter=2"), 4}),
            "a placement (place=2) goes with the data axis only, not with filter=2");
}

TEST(PlacementStrategy, TheGridAxisReadsWritesAndRoundTrips) {
  const Grid g = parseGrid("data=4xplace=2");
  EXPECT_EQ(g.place, 2);
  EXPECT_EQ(g.str(), "data=4xplace=2");
  EXPECT_EQ(strategyNameOf(g), "data+placement");
  EXPECT_EQ(g.strideData(), 2);
  const Strategy s{"data+placement", g, 64};
  EXPECT_EQ(strategyFromJson(strategyJson(s), "x.json").grid.place, 2);
  nlohmann::json old = strategyJson(s);
  old["grid"].erase("place");  // files written before placement
  EXPECT_EQ(strategyFromJson(old, "old.json").grid.place, 1);
}

TEST(PlacementStrategy, ABatchPerReplicaGrowsTheGlobalBatchWithReplicasNotGpus) {
  const graph::Model model = twoBranches();
  hw::Cluster cluster = testing::toyCluster();
  const PlanInputs in = testing::inputsFor(model, cluster);
  PlanRequest r;
  r.strategies = {"data", "data+placement"};
  r.gpus = {4};
  r.batchPerReplica = 16;
  r.modelParallel = 2;
  for (const Estimate& e : planAll(in, r)) {
    ASSERT_TRUE(e.feasible) << e.strategy.name << ": " << e.infeasibleReason;
    EXPECT_EQ(e.strategy.globalBatch, 16 * e.strategy.grid.data) << e.strategy.name;
    if (e.strategy.name == "data+placement") EXPECT_EQ(e.strategy.grid.str(), "data=2xplace=2");
  }
}

}  // namespace
}  // namespace paraxis::plan
