// Strategy estimates on a three-layer model, term by term, computed by hand.
#include "plan/estimator.hpp"
#include "plan/layer_split.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "cost/collective_cost.hpp"
#include "cost/topology.hpp"
#include "graph/zoo/zoo.hpp"
#include "hw/presets.hpp"
#include "plan/oracle.hpp"
#include "plan/pipeline_partition.hpp"
#include "plan/pipeline_schedule.hpp"
#include "plan/planner.hpp"
#include "plan_fixture.hpp"

namespace paraxis::plan {
namespace {

using testing::inputsFor;

const double kPeak = 1e12;
const double kBandwidth = 100e9;
const cost::LinkParams kNode{1e-6, 1.0 / 10e9, 3.0 / 100e9};

// Roofline of one pass: max(FLOPs / peak, bytes / bandwidth).
double pass(double flops, double bytes) { return std::max(flops / kPeak, bytes / kBandwidth); }

class ThreeLayers : public ::testing::Test {
 protected:
  graph::Model model = testing::threeLayers();
  hw::Cluster cluster = testing::toyCluster();
  PlanInputs in = inputsFor(model, cluster);

  // The halo and layer-collective seconds `s` waits with a 1 ms wait beside the gradient
  // engine's reductions, over none.
  double waitsBeside(const Strategy& s) {
    cluster.implementation.syncWaitBeside = 1e-3;
    const Estimate e = estimate(in, s);
    cluster.implementation.syncWaitBeside = 0;
    const Estimate none = estimate(in, s);
    return syncs(e) - syncs(none);
  }
  // What a step's synchronisations take: halos, layer collectives and the split's closing gather.
  static double syncs(const Estimate& e) { return e.time.halo + e.time.layerCollectives + e.time.shuffle; }
};

TEST_F(ThreeLayers, DataParallelComputeAndGradientAllreduceByHand) {
  const Strategy s{"data", Grid{.data = 2}, 8};
  const Estimate e = estimate(in, s);
  ASSERT_TRUE(e.feasible) << e.infeasibleReason;
  // Each rank runs 4 samples. conv: 2*4*9*8*64 FLOPs per sample; in 4x8x8, out 8x8x8, 288 weights.
  const double conv = 2.0 * 4 * 9 * 8 * 64 * 4;
  const double convBytes = (4 * 64 + 8 * 64) * 4 * 4.0 + 288 * 4;
  const double relu = 8 * 64 * 4.0;
  const double reluBytes = 2 * 8 * 64 * 4 * 4.0;
  const double fc = (2.0 * 512 * 10 + 10) * 4;
  const double fcBytes = (512 + 10) * 4 * 4.0 + 5130 * 4;
  EXPECT_NEAR(e.time.forward, pass(conv, convBytes) + pass(relu, reluBytes) + pass(fc, fcBytes), 1e-15);
  // The whole gradient (5418 fp32 values) in one bucket, reduced after backward on the node link.
  const double bytes = (288 + 5130) * 4.0;
  const double reduce = cost::bestFlatAllreduce(2, bytes, kNode).seconds;
  EXPECT_NEAR(e.time.gradientAllreduce, reduce, 1e-15);
  EXPECT_NEAR(e.time.gradientExposed, reduce, 1e-12);  // the conv layer's gradient comes last
  EXPECT_EQ(e.time.halo, 0);
  EXPECT_EQ(e.time.bubble, 0);
  // Memory: weights, gradients and momentum of 5418 values, activations of 4 samples.
  EXPECT_DOUBLE_EQ(e.memory.weights, bytes);
  EXPECT_DOUBLE_EQ(e.memory.optimizer, bytes);
  EXPECT_DOUBLE_EQ(e.memory.activations, model.totals().activationBytes * 4.0);
  EXPECT_TRUE(e.fits);
  EXPECT_NEAR(e.samplesPerSecond, 8 / e.time.iteration(), 1e-9);
  EXPECT_DOUBLE_EQ(e.epochs, 10);
  EXPECT_NEAR(e.timeToTrain, 10 * 100 * e.time.iteration(), 1e-12);
}

// An fp16 wire halves the bytes and pays the casts: at the cluster's measured conversion rate
// where it has one, else two passes at memory bandwidth.
TEST_F(ThreeLayers, AnF16WireChargesTheConversionAtTheMeasuredRate) {
  Strategy s{"data", Grid{.data = 2}, 8};
  s.comm.overlap = false;
  s.comm.wire = WireFormat::kF16;
  const double bytes = (288 + 5130) * 4.0;
  const double wire = cost::bestFlatAllreduce(2, bytes / 2, kNode).seconds;
  EXPECT_NEAR(estimate(in, s).time.gradientAllreduce, wire + 2 * bytes / kBandwidth, 1e-15);
  cluster.implementation.wireConversion = {.f16 = 1e9, .bf16 = 0};
  EXPECT_NEAR(estimate(in, s).time.gradientAllreduce, wire + bytes / 1e9, 1e-15);
  s.comm.wire = WireFormat::kBF16;  // not measured for bf16: the bandwidth estimate again
  EXPECT_NEAR(estimate(in, s).time.gradientAllreduce, wire + 2 * bytes / kBandwidth, 1e-15);
}

// Ranks that drift apart by `skew` of their compute: a data-parallel step's reduction waits for
// the slower rank's whole forward and backward (exposed time; the reduction's own work is the
// same); with four ranks the slowest lags further.
TEST_F(ThreeLayers, SkewIsWaitedForAtEverySynchronisation) {
  Strategy s{"data", Grid{.data = 2}, 8};
  s.comm.overlap = false;
  const Estimate even = estimate(in, s);
  cluster.implementation.skew = 0.1;
  const Estimate skewed = estimate(in, s);
  const double compute = even.time.forward + even.time.backwardData + even.time.backwardWeight;
  EXPECT_NEAR(skewed.time.gradientExposed - even.time.gradientExposed, 0.1 * compute, 1e-15);
  EXPECT_DOUBLE_EQ(skewed.time.gradientAllreduce, even.time.gradientAllreduce);  // the reduction's own work
  EXPECT_DOUBLE_EQ(skewed.time.forward, even.time.forward);
  s.grid = Grid{.data = 4};
  s.globalBatch = 16;
  const Estimate four = estimate(in, s);
  EXPECT_NEAR(four.time.gradientExposed - estimate(inputsFor(model, testing::toyCluster()), s).time.gradientExposed,
              0.1 * std::sqrt(2.0) * compute, 1e-12);
  // A filter split synchronises at its layers' collectives: the waits land there, and without a
  // gradient reduction the step's last compute is waited for at the next step's first one.
  const Strategy filter{"filter", Grid{.filter = 2}, 4};
  cluster.implementation.skew = 0;
  const Estimate split = estimate(in, filter);
  cluster.implementation.skew = 0.1;
  const Estimate splitSkewed = estimate(in, filter);
  const double splitCompute = split.time.forward + split.time.backwardData + split.time.backwardWeight;
  EXPECT_NEAR(splitSkewed.time.layerCollectives - split.time.layerCollectives, 0.1 * splitCompute, 1e-12);
  EXPECT_EQ(splitSkewed.time.gradientExposed, 0);
}

// A fixed wait per synchronisation, whatever the compute before it: once at a data-parallel
// step's reduction; at a filter split's layer with collectives (the fc's allreduce of its
// partial output) once on the way forward and once back, as the skew's waits.
TEST_F(ThreeLayers, SyncWaitIsWaitedOnceAtEachSynchronisation) {
  Strategy s{"data", Grid{.data = 2}, 8};
  s.comm.overlap = false;
  const Estimate even = estimate(in, s);
  cluster.implementation.syncWait = 1e-3;
  EXPECT_NEAR(estimate(in, s).time.gradientExposed - even.time.gradientExposed, 1e-3, 1e-15);
  const Strategy filter{"filter", Grid{.filter = 2}, 4};
  cluster.implementation.syncWait = 0;
  const Estimate split = estimate(in, filter);
  cluster.implementation.syncWait = 1e-3;
  const Estimate waited = estimate(in, filter);
  EXPECT_NEAR(waited.time.layerCollectives - split.time.layerCollectives, 2 * 1e-3, 1e-12);
  EXPECT_EQ(waited.time.gradientExposed, 0);
  // Replicated twice, the split layer still synchronises its own two ranks: the same waits
  // there (the reduction over all four waits sqrt(log2 4) of them).
  Strategy hybrid{"data+filter", Grid{.data = 2, .filter = 2}, 8};
  hybrid.comm.overlap = false;
  cluster.implementation.syncWait = 0;
  const Estimate hybridQuiet = estimate(in, hybrid);
  cluster.implementation.syncWait = 1e-3;
  const Estimate hybridWaited = estimate(in, hybrid);
  EXPECT_NEAR(hybridWaited.time.layerCollectives - hybridQuiet.time.layerCollectives, 2 * 1e-3, 1e-12);
  EXPECT_NEAR(hybridWaited.time.gradientExposed - hybridQuiet.time.gradientExposed, std::sqrt(2.0) * 1e-3, 1e-12);
}

// The wait beside the gradient engine's reductions replaces the quiet one where they are in
// flight: at a data-parallel step's reduction when it overlaps backward, and under forward
// priority once more per group the next forward awaits (beyond what it waits there for the
// reductions); never at a filter split's collectives (nothing replicated, no reduction) nor
// without overlap.
TEST_F(ThreeLayers, SyncWaitBesideIsWaitedWhereTheEngineReducesBeside) {
  Strategy s{"data", Grid{.data = 2}, 8};
  s.comm.order = ReduceOrder::kFifo;
  const Estimate quiet = estimate(in, s);
  cluster.implementation.syncWaitBeside = 1e-3;
  EXPECT_NEAR(estimate(in, s).time.gradientExposed - quiet.time.gradientExposed, 1e-3, 1e-15);
  s.comm.order = ReduceOrder::kForwardPriority;
  cluster.implementation.syncWaitBeside = 0;
  const Estimate priority = estimate(in, s);
  cluster.implementation.syncWaitBeside = 1e-3;
  // The reduction's wait and the one group (21.7 KB of gradients, under the first bucket's 1 MiB)
  // less the reductions' waited-for time, which holds that much of it.
  ASSERT_GT(priority.exposedParts.reductions, 0);
  EXPECT_NEAR(estimate(in, s).time.gradientExposed - priority.time.gradientExposed,
              2e-3 - priority.exposedParts.reductions, 1e-15);
  s.comm.overlap = false;  // reduced after backward: nothing beside, the quiet wait (0)
  cluster.implementation.syncWaitBeside = 0;
  const Estimate after = estimate(in, s);
  cluster.implementation.syncWaitBeside = 1e-3;
  EXPECT_DOUBLE_EQ(estimate(in, s).time.gradientExposed, after.time.gradientExposed);
  const Strategy filter{"filter", Grid{.filter = 2}, 4};
  cluster.implementation.syncWaitBeside = 0;
  const Estimate split = estimate(in, filter);
  cluster.implementation.syncWaitBeside = 1e-3;
  EXPECT_DOUBLE_EQ(estimate(in, filter).time.layerCollectives, split.time.layerCollectives);
}

// Beside the engine's reductions the ranks drift at skew_beside over the share of the step's
// compute the reductions are in flight, at the quiet skew over the rest: a data-parallel step's
// closing wait grows with it; without overlap (nothing beside) and where nothing is replicated
// (a filter split: no reduction) it changes nothing; unset, it is the quiet skew.
TEST_F(ThreeLayers, RanksDriftAtSkewBesideWhileTheReductionsAreInFlight) {
  Strategy s{"data", Grid{.data = 2}, 8};
  cluster.implementation.skew = 0.01;
  const Estimate quiet = estimate(in, s);
  cluster.implementation.skewBeside = 0.01;
  EXPECT_DOUBLE_EQ(estimate(in, s).time.gradientExposed, quiet.time.gradientExposed);
  cluster.implementation.skewBeside = 0.05;
  const Estimate beside = estimate(in, s);
  const double compute = quiet.time.forward + quiet.time.backwardData + quiet.time.backwardWeight;
  const double added = beside.time.gradientExposed - quiet.time.gradientExposed;
  EXPECT_GT(added, 0);
  EXPECT_LE(added, 0.04 * compute + 1e-15);  // at most all of the step beside the reductions
  cluster.implementation.skewBeside = 0.09;  // the added drift is linear in the difference
  EXPECT_NEAR(estimate(in, s).time.gradientExposed - quiet.time.gradientExposed, 2 * added, 1e-15);
  s.comm.overlap = false;
  cluster.implementation.skewBeside = 0;
  const Estimate after = estimate(in, s);
  cluster.implementation.skewBeside = 0.05;
  EXPECT_DOUBLE_EQ(estimate(in, s).time.gradientExposed, after.time.gradientExposed);
  const Strategy filter{"filter", Grid{.filter = 2}, 4};
  cluster.implementation.skewBeside = 0;
  const Estimate split = estimate(in, filter);
  cluster.implementation.skewBeside = 0.05;
  EXPECT_DOUBLE_EQ(estimate(in, filter).time.layerCollectives, split.time.layerCollectives);
}

// The exposed gradient time's parts add up to it, and each moves with what it prices: the ranks'
// drift with skew_beside, the groups' waits with sync_wait_beside (one group here) beyond the
// reductions' waited-for time, the reductions' own with the link; a reduction waited for longer
// than the await holds it whole.
TEST_F(ThreeLayers, TheExposedGradientTimesPartsAddUpAndEachMovesWithItsOwnFigure) {
  const Strategy s{"data", Grid{.data = 2}, 8};  // forward priority, overlap: the defaults
  cluster.implementation.skewBeside = 0.05;
  cluster.implementation.syncWaitBeside = 1e-3;
  const Estimate e = estimate(in, s);
  EXPECT_NEAR(e.exposedParts.total(), e.time.gradientExposed, 1e-15);
  EXPECT_GT(e.exposedParts.drift, 0);
  ASSERT_LT(e.exposedParts.reductions, 1e-3);
  EXPECT_NEAR(e.exposedParts.groupAwaits, 1e-3 - e.exposedParts.reductions, 1e-15);
  cluster.implementation.skewBeside = 0.1;
  const Estimate drifting = estimate(in, s);
  EXPECT_GT(drifting.exposedParts.drift, e.exposedParts.drift);
  EXPECT_DOUBLE_EQ(drifting.exposedParts.groupAwaits, e.exposedParts.groupAwaits);
  EXPECT_DOUBLE_EQ(drifting.exposedParts.reductions, e.exposedParts.reductions);
  for (hw::NetworkLevel& level : cluster.levels) level.beta *= 1000;  // the link 1000x slower
  const Estimate slow = estimate(in, s);
  EXPECT_GT(slow.exposedParts.reductions, drifting.exposedParts.reductions);
  EXPECT_NEAR(slow.exposedParts.total(), slow.time.gradientExposed, 1e-12);
  ASSERT_GT(slow.exposedParts.reductions, 1e-3);
  EXPECT_EQ(slow.exposedParts.groupAwaits, 0);
}

// The next forward awaits a group's reduction with the ranks that reduce it, those holding the
// same weights: on data=2 x filter=2 the two replicas of each filter slice (one of the slowest of
// two: the wait as measured), on data=4 all four (sqrt(log2 4) of it). The 2x2 netns hosts ranked
// LeNet's filter and channel splits against its h=2 hybrid while each await waited 1.4x.
TEST_F(ThreeLayers, AGroupIsAwaitedWithTheRanksThatReduceIt) {
  cluster.implementation.syncWaitBeside = 1e-3;
  const Estimate split = estimate(in, Strategy{"data+filter", Grid{.data = 2, .filter = 2}, 8});
  ASSERT_TRUE(split.feasible) << split.infeasibleReason;
  // One group (21.7 KB of gradients at most), beyond the reductions' waited-for time.
  EXPECT_NEAR(split.exposedParts.groupAwaits, 1e-3 - split.exposedParts.reductions, 1e-15);
  const Estimate data = estimate(in, Strategy{"data", Grid{.data = 4}, 8});
  EXPECT_NEAR(data.exposedParts.groupAwaits, 1e-3 * std::sqrt(2.0) - data.exposedParts.reductions, 1e-15);
}

// A spatial split's synchronisations wait beside the reductions, which keep moving meanwhile:
// the waits land on the halo exchanges and layer collectives, and the gradient's exposed time
// shrinks by as much (down to none) before the reduction's own wait and its group's are added.
TEST_F(ThreeLayers, WaitsBesideTheReductionsHideSomeOfTheirExposedTime) {
  const Strategy s{"spatial", Grid{.height = 2}, 2};
  const Estimate quiet = estimate(in, s);
  ASSERT_GT(quiet.time.halo, 0);
  ASSERT_GT(quiet.time.gradientExposed, 0);  // something to hide
  cluster.implementation.syncWaitBeside = 1e-3;
  const Estimate waited = estimate(in, s);
  const double waits = waited.time.halo + waited.time.layerCollectives - quiet.time.halo - quiet.time.layerCollectives;
  EXPECT_GE(waits, 2e-3 - 1e-15);  // at least the conv's exchange forward and back
  EXPECT_NEAR(std::fmod(waits + 1e-12, 1e-3), 0, 1e-9);  // whole waits, one per synchronisation
  EXPECT_NEAR(waited.time.gradientExposed, quiet.time.gradientExposed - std::min(quiet.time.gradientExposed, waits) + 2e-3,
              1e-12);
}

// Only the synchronisations that meet reductions in flight wait beside them: their share is
// the reductions' time at their pace beside compute over the step's compute. With compute far
// longer than the reductions, that pace halved doubles the waits.
TEST_F(ThreeLayers, WaitsBesideTheReductionsAreTheShareThatMeetsThem) {
  const Strategy s{"spatial", Grid{.height = 2}, 4096};  // compute far longer than 21.7 KB of reductions
  const Estimate quiet = estimate(in, s);
  const auto waits = [&](double hidden) {
    cluster.implementation.overlap.hidden = hidden;
    return waitsBeside(s);
  };
  ASSERT_GT(quiet.time.halo, 0);
  const double fast = waits(1.0);
  const double slow = waits(0.5);
  EXPECT_GT(fast, 0);
  EXPECT_LT(fast, 2e-3 * 0.5);  // well under a whole wait at each of the conv's two exchanges
  EXPECT_NEAR(slow / fast, 2, 1e-9);
}

// Under forward priority the reductions move chunk by chunk beside backward (overlap.chunked)
// and what is left beside the next forward at one call's pace: the engine's span sets the share
// of the synchronisations that meet them. Chunks that barely move keep it in flight all step, so
// every synchronisation waits the whole wait (and slower ones no more); chunks at one call's pace
// finish these 21.7 KB within backward, at the share their time is of the step's compute.
TEST_F(ThreeLayers, WaitsBesideFollowTheEnginesSpanUnderForwardPriority) {
  Strategy s{"spatial", Grid{.height = 2}, 4096};
  s.comm.order = ReduceOrder::kForwardPriority;
  const auto waits = [&](double chunked) {
    cluster.implementation.overlap.hidden = 1.0;
    cluster.implementation.overlap.chunked = chunked;
    return waitsBeside(s);
  };
  const double crawling = waits(1e-9);
  const double moving = waits(1.0);
  EXPECT_GE(crawling, 2e-3 - 1e-12);  // the conv's exchange forward and back at least
  EXPECT_NEAR(waits(1e-12), crawling, 1e-9);  // in flight all step already: no more to wait
  EXPECT_GT(moving, 0);
  EXPECT_LT(moving, 0.1 * crawling);
}

TEST_F(ThreeLayers, FilterParallelPairsTheFcWithTheConv) {
  const Strategy s{"filter", Grid{.filter = 2}, 4};
  const Estimate e = estimate(in, s);
  ASSERT_TRUE(e.feasible) << e.infeasibleReason;
  // conv splits its 8 filters (its input is the data: no gradient to complete), relu runs on
  // the 4-channel slice, fc takes the slice as its input features (channel-parallel) and
  // allreduces its partial output: 10 values x 4 samples, once forward.
  const double fcOutput = 10 * 4 * 4.0;
  EXPECT_NEAR(e.time.layerCollectives, cost::bestFlatAllreduce(2, fcOutput, kNode).seconds, 1e-15);
  EXPECT_EQ(e.time.gradientAllreduce, 0);  // no data axis: nothing is reduced across replicas
  // Each rank holds half of conv's and half of fc's weights.
  EXPECT_DOUBLE_EQ(e.memory.weights, (288 + 5130) * 4.0 / 2);
}

// The rule the oracle prices and train executes, on LeNet: filter layers and the channel-parallel
// layers they pair with alternate, and no slice is ever gathered.
TEST(LayerSplitRule, FilterAxisPairsLenetsLayers) {
  const graph::Model lenet = graph::buildZooModel("lenet");
  const std::vector<LayerSplit> s = splitLayers(lenet, Grid{.filter = 2});
  const auto at = [&](const char* name) { return s.at(static_cast<std::size_t>(lenet.find(name))); };
  EXPECT_TRUE(at("conv1").channelSplit);
  EXPECT_FALSE(at("conv1").completeInputGradient);  // reads the data
  EXPECT_TRUE(at("relu1").channelSplit && at("pool1").channelSplit);
  EXPECT_DOUBLE_EQ(at("pool1").share.inputChannels, 0.5);  // it reads conv1's slice
  EXPECT_TRUE(at("conv2").channelParallel && !at("conv2").sliceInput && !at("conv2").channelSplit);
  EXPECT_FALSE(at("flatten").channelSplit || at("flatten").gatherInput);
  EXPECT_TRUE(at("fc1").channelSplit && at("fc1").completeInputGradient);
  EXPECT_TRUE(at("dropout").channelSplit);
  EXPECT_TRUE(at("fc2").channelParallel);
  for (const LayerSplit& l : s) EXPECT_FALSE(l.gatherInput);
  // The channel axis: every weighted layer after the first slices its input.
  const std::vector<LayerSplit> c = splitLayers(lenet, Grid{.channel = 2});
  EXPECT_FALSE(c.at(static_cast<std::size_t>(lenet.find("conv1"))).channelParallel);
  for (const char* name : {"conv2", "fc1", "fc2"}) {
    EXPECT_TRUE(c.at(static_cast<std::size_t>(lenet.find(name))).sliceInput) << name;
  }
}

// A filter head on LeNet (h=2): the convolutions split spatially; from the split point the
// fully connected pair splits its filters over the same two ranks. fc1 reads the tensor gathered
// at the split point, whose backward sums the ranks' partial gradients: nothing to complete.
TEST(LayerSplitRule, AFilterHeadPairsTheHeadOverTheSpatialRanks) {
  const graph::Model lenet = graph::buildZooModel("lenet");
  const std::vector<LayerSplit> s = splitLayers(lenet, parseGrid("data=2xh=2xhead=filter"));
  const auto at = [&](const char* name) { return s.at(static_cast<std::size_t>(lenet.find(name))); };
  for (const char* name : {"conv1", "pool1", "conv2", "pool2"}) {
    EXPECT_TRUE(at(name).spatial && !at(name).channelSplit && !at(name).channelParallel) << name;
  }
  EXPECT_TRUE(at("flatten").gatherAtSplitPoint && !at("flatten").channelSplit);
  EXPECT_TRUE(at("fc1").channelSplit && !at("fc1").completeInputGradient);
  EXPECT_DOUBLE_EQ(at("fc1").share.outputChannels, 0.5);
  EXPECT_TRUE(at("dropout").channelSplit);
  EXPECT_TRUE(at("fc2").channelParallel && !at("fc2").sliceInput);
  // The oracle prices it: VGG-16's head (most of its weights) split in two costs less memory
  // and time than running it sample-parallel.
  const graph::Model vgg = graph::buildZooModel("vgg16", {.spatial = {32}});
  const hw::Cluster cl = hw::loadCluster("abci");
  const PlanInputs in = testing::inputsFor(vgg, cl);
  const Estimate samples = estimate(in, Strategy{"data+spatial", parseGrid("data=2xh=2"), 64});
  const Estimate head = estimate(in, Strategy{"data+spatial+filter-head", parseGrid("data=2xh=2xhead=filter"), 64});
  ASSERT_TRUE(samples.feasible && head.feasible) << head.infeasibleReason;
  EXPECT_LT(head.memory.weights, 0.6 * samples.memory.weights);
  EXPECT_LT(head.time.compute(), samples.time.compute());
}

TEST_F(ThreeLayers, ChannelParallelReducesPartialSums) {
  const Strategy s{"channel", Grid{.channel = 2}, 4};
  const Estimate e = estimate(in, s);
  ASSERT_TRUE(e.feasible) << e.infeasibleReason;
  // Only fc (not the first weighted layer) splits its input channels: allreduce of its output,
  // allgather of its input gradient, and the layout copies of the split input.
  const double out = 10 * 4 * 4.0;
  const double input = 512 * 4 * 4.0;
  EXPECT_NEAR(e.time.layerCollectives,
              cost::bestFlatAllreduce(2, out, kNode).seconds + cost::ringAllgather(2, input, kNode) +
                  4 * input / 2 / kBandwidth,
              1e-15);
}

TEST_F(ThreeLayers, SpatialSplitExchangesHalosUntilTheSplitPoint) {
  const Strategy s{"spatial", Grid{.height = 2}, 2};
  const Estimate e = estimate(in, s);
  ASSERT_TRUE(e.feasible) << e.infeasibleReason;
  // conv has a halo of 1 row: 4 channels x 1 row x 8 columns x 2 samples, forward and backward.
  const double face = 4 * 1 * 8 * 2 * 4.0;
  EXPECT_NEAR(e.time.halo, 2 * cost::pointToPoint(face, kNode), 1e-15);
  EXPECT_GT(e.time.shuffle, 0);  // the gather before fc: a redistribution, as train times it
  EXPECT_EQ(e.time.layerCollectives, 0);
  EXPECT_GT(e.time.gradientAllreduce, 0);  // the two ranks share every weight
}

// Reductions in flight beside backward stretch it; on a spatial split each synchronisation
// waits for the other rank's stretch since the one before, over at most one reduction call's
// time beside compute. Calls that slow beside compute (hidden near 0): all of the stretch.
// Data parallelism synchronises once, at the end, where the ranks' stretches even out.
TEST_F(ThreeLayers, SynchronisationsBesideReductionsWaitForTheOthersStretch) {
  Strategy s{"spatial", Grid{.height = 2}, 2};
  s.comm.grouping = Grouping::kPerLayer;  // fc's gradient goes out beside the conv's backward
  const Estimate quiet = estimate(in, s);
  cluster.implementation.overlap = {.hidden = 1e-3, .slowdown = 1.5};
  const Estimate busy = estimate(in, s);
  const double stretch = busy.time.backwardData - quiet.time.backwardData;
  ASSERT_GT(stretch, 0);
  EXPECT_NEAR(syncs(busy) - syncs(quiet), stretch, 1e-12);
  const Estimate data = estimate(in, Strategy{"data", Grid{.data = 2}, 8});
  EXPECT_EQ(syncs(data), 0);
}

TEST_F(ThreeLayers, PipelineBubbleIsTheRestOfTheSchedulesMakespan) {
  const Strategy s{"pipeline", Grid{.pipeline = 2}, 8, 4};
  const Estimate e = estimate(in, s);
  ASSERT_TRUE(e.feasible) << e.infeasibleReason;
  EXPECT_GT(e.time.bubble, 0);
  EXPECT_GT(e.time.pipelineP2P, 0);
  // The slowest stage's 4 micro-batches are the work; the bubble is the rest of the 1F1B
  // schedule's makespan: with its three layers cut unevenly, less than one step of the slowest
  // stage and at most one micro-batch through the other (together with one step of the slowest
  // stage, one micro-batch through the whole model on one device).
  const double slowest = (e.time.forward + e.time.backwardData + e.time.backwardWeight + e.time.layerCollectives) / 4;
  const Estimate one = estimate(in, {"one device", Grid{}, 2});
  ASSERT_TRUE(one.feasible) << one.infeasibleReason;
  const double whole = one.time.forward + one.time.backwardData + one.time.backwardWeight;
  EXPECT_LE(e.time.bubble + slowest, whole * (1 + 1e-12));
  EXPECT_LT(e.time.bubble, slowest);
}

// A handoff wait delays each pass that waits for its neighbour's tensor: with waits far longer
// than the toy passes, the step pays about one per micro-batch (less the passes that run
// meanwhile), never more than two per step of its schedule; the passes and the bubble stay.
TEST_F(ThreeLayers, PipelineHandoffWaitsLengthenTheTransfersAlone) {
  const Strategy s{"pipeline", Grid{.pipeline = 2}, 8, 4};
  const Estimate quiet = estimate(in, s);
  cluster.implementation.handoffWait = 1e-3;
  const Estimate waiting = estimate(in, s);
  ASSERT_TRUE(quiet.feasible && waiting.feasible) << waiting.infeasibleReason;
  const double added = waiting.time.pipelineP2P - quiet.time.pipelineP2P;
  EXPECT_GT(added, 0.9 * 4 * 1e-3);
  EXPECT_LE(added, 2 * (4 + 1) * 1e-3);
  EXPECT_NEAR(waiting.time.iteration(), quiet.time.iteration() + added, 1e-12);
  EXPECT_EQ(waiting.time.forward, quiet.time.forward);
  EXPECT_EQ(waiting.time.bubble, quiet.time.bubble);
  // Data parallelism hands nothing over.
  const double dataWaiting = estimate(in, {"data", Grid{.data = 2}, 8}).time.iteration();
  cluster.implementation.handoffWait = 0;
  EXPECT_EQ(estimate(in, {"data", Grid{.data = 2}, 8}).time.iteration(), dataWaiting);
}

// Device figures measured with 2 ranks of a node computing at once, one rank alone 1.6x
// faster: a 1-rank job computes (and updates) at the alone rate, a job filling the node's 2
// ranks at the figures, a 4-rank job on 2 nodes too; what crosses the wires is unchanged.
TEST_F(ThreeLayers, RanksComputingAloneRunAtTheAloneRate) {
  const Strategy one{"data", Grid{}, 8};
  const Strategy two{"data", Grid{.data = 2}, 8};
  const Strategy four{"data", Grid{.data = 4}, 8};
  const Estimate before[3] = {estimate(in, one), estimate(in, two), estimate(in, four)};
  cluster.device.sharing = {2, 1.6};
  const Estimate after[3] = {estimate(in, one), estimate(in, two), estimate(in, four)};
  EXPECT_NEAR(after[0].time.forward, before[0].time.forward / 1.6, 1e-15);
  EXPECT_NEAR(after[0].time.backwardWeight, before[0].time.backwardWeight / 1.6, 1e-15);
  EXPECT_NEAR(after[0].time.update, before[0].time.update / 1.6, 1e-15);
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(after[i].time.forward, before[i].time.forward);
    EXPECT_EQ(after[i].time.iteration(), before[i].time.iteration());
    EXPECT_EQ(after[i].time.gradientAllreduce, before[i].time.gradientAllreduce);
  }
  // Linear between: 2 of 3 ranks at once take half way from the alone rate to the figures.
  const hw::CoreSharing three{3, 2};
  EXPECT_DOUBLE_EQ(three.factor(1), 0.5);
  EXPECT_DOUBLE_EQ(three.factor(2), 0.75);
  EXPECT_DOUBLE_EQ(three.factor(3), 1);
  EXPECT_DOUBLE_EQ(three.factor(8), 1);
  EXPECT_DOUBLE_EQ(hw::CoreSharing{}.factor(1), 1);
}

// Ranks time-sharing the cores (hw::TimeSharing): a data-parallel step's whole pass is one span
// of compute between synchronisations, each pass and the update stretched by the factor at its
// length; a spatial split synchronises at the conv's halo and before fc, so its spans are
// shorter and stretch less. The wires are unchanged.
TEST_F(ThreeLayers, RanksTimeSharingTheCoresStretchEachSpanByItsLength) {
  const Strategy data{"data", Grid{.data = 2}, 8};
  const Strategy spatial{"spatial", Grid{.height = 2}, 2};
  const Estimate before[2] = {estimate(in, data), estimate(in, spatial)};
  const double pass = before[0].time.forward + before[0].time.backwardData + before[0].time.backwardWeight;
  cluster.device.timeSharing = {.ranks = 2, .shared = 2, .slice = pass};  // the whole pass at 2 - 1/e
  const Estimate after[2] = {estimate(in, data), estimate(in, spatial)};
  const double factor = 2 - std::exp(-1.0);
  EXPECT_DOUBLE_EQ(cluster.device.timeSharing.factor(pass), factor);
  EXPECT_NEAR(after[0].time.forward, before[0].time.forward * factor, 1e-15);
  EXPECT_NEAR(after[0].time.backwardData, before[0].time.backwardData * factor, 1e-15);
  EXPECT_NEAR(after[0].time.backwardWeight, before[0].time.backwardWeight * factor, 1e-15);
  EXPECT_NEAR(after[0].time.update, before[0].time.update * factor, 1e-15);
  EXPECT_EQ(after[0].time.gradientAllreduce, before[0].time.gradientAllreduce);
  const double spatialPass =
      before[1].time.forward + before[1].time.backwardData + before[1].time.backwardWeight;
  const double spatialAfter =
      after[1].time.forward + after[1].time.backwardData + after[1].time.backwardWeight;
  EXPECT_GT(spatialAfter, spatialPass);
  EXPECT_LT(spatialAfter, spatialPass * cluster.device.timeSharing.factor(spatialPass));
  EXPECT_EQ(after[1].time.halo, before[1].time.halo);
  // A pipeline's stage waits for each micro-batch forward and backward: its spans are its half of
  // one micro-batch's forward, and of its backward, through the whole model.
  const Strategy pipeline{"pipeline", Grid{.pipeline = 2}, 8, 4};
  cluster.device.timeSharing = {};
  const Estimate staged = estimate(in, pipeline);
  const Estimate micro = estimate(in, {"one device", Grid{}, 2});
  cluster.device.timeSharing = {.ranks = 2, .shared = 2, .slice = pass};
  const Estimate stagedAfter = estimate(in, pipeline);
  const hw::TimeSharing& t = cluster.device.timeSharing;
  EXPECT_NEAR(stagedAfter.time.forward, staged.time.forward * t.factor(micro.time.forward / 2), 1e-15);
  EXPECT_NEAR(stagedAfter.time.backwardData,
              staged.time.backwardData * t.factor((micro.time.backwardData + micro.time.backwardWeight) / 2),
              1e-15);
  // The curve: 1 at no compute, `shared` in the limit.
  const hw::TimeSharing curve{.shared = 1.9, .slice = 4e-3};
  EXPECT_DOUBLE_EQ(curve.factor(0), 1);
  EXPECT_NEAR(curve.factor(4e-3), 1 + 0.9 * (1 - std::exp(-1.0)), 1e-12);
  EXPECT_NEAR(curve.factor(1), 1.9, 1e-12);
  EXPECT_DOUBLE_EQ(hw::TimeSharing{}.factor(1), 1);
  // Measured with 2 ranks a node: a job of one rank (a node to itself) shares no core; with 3 of
  // 5 a node, half way.
  const Estimate alone = estimate(in, {"one", Grid{}, 8});
  cluster.device.timeSharing = {};
  EXPECT_EQ(estimate(in, {"one", Grid{}, 8}).time.forward, alone.time.forward);
  const hw::TimeSharing five{.ranks = 5, .shared = 3, .slice = 1e-3};
  EXPECT_DOUBLE_EQ(five.at(3).shared, 2);
  EXPECT_DOUBLE_EQ(five.at(1).shared, 1);
  EXPECT_DOUBLE_EQ(five.at(8).shared, 3);
  EXPECT_DOUBLE_EQ(five.at(3).slice, 1e-3);
}

// Under forward priority the next forward awaits each gradient group's reduction before the
// group's first layer, and the ranks leave the await at different moments: each await ends a span
// of compute. Per-layer groups here: conv's (layer 1) and fc's (layer 3); conv and relu's forward
// is one span, fc's forward with the whole backward another, and the update runs at the head of
// the first; one fused group leaves the whole pass one span.
TEST_F(ThreeLayers, TheForwardsAwaitOfEachGradientGroupEndsASpan) {
  Strategy perLayer{"data", Grid{.data = 2}, 8};
  perLayer.comm.grouping = Grouping::kPerLayer;
  const std::vector<LayerTime> before = Oracle(in).layerTimes(perLayer);
  const Estimate unshared = estimate(in, perLayer);
  double backward = 0;
  for (const LayerTime& t : before) backward += t.backward;
  const double head = before[1].forward + before[2].forward, tail = before[3].forward + backward;
  cluster.device.timeSharing = {.ranks = 2, .shared = 2, .slice = head};
  const hw::TimeSharing& t = cluster.device.timeSharing;
  const std::vector<LayerTime> after = Oracle(in).layerTimes(perLayer);
  EXPECT_NEAR(after[1].forward, before[1].forward * t.factor(head), 1e-15);
  EXPECT_NEAR(after[2].forward, before[2].forward * t.factor(head), 1e-15);
  EXPECT_NEAR(after[3].forward, before[3].forward * t.factor(tail), 1e-15);
  EXPECT_NEAR(after[1].backward, before[1].backward * t.factor(tail), 1e-15);
  EXPECT_NEAR(estimate(in, perLayer).time.update, unshared.time.update * t.factor(head), 1e-15);
  const Strategy fused{"data", Grid{.data = 2}, 8};
  const double pass = head + tail;
  EXPECT_NEAR(Oracle(in).layerTimes(fused)[1].forward, before[1].forward * t.factor(pass), 1e-15);
  // Without overlap nothing is in flight beside the next forward: no await, one span.
  Strategy blocking = perLayer;
  blocking.comm.overlap = false;
  EXPECT_NEAR(Oracle(in).layerTimes(blocking)[1].forward, before[1].forward * t.factor(pass), 1e-15);
}

// A fully connected layer over few rows streams its weights: where the rank's working set
// leaves them in its cache, at what is left of its half-rate rows for resident weights.
TEST_F(ThreeLayers, AFullyConnectedLayersCachedWeightsStreamFaster) {
  const int fc = static_cast<int>(hw::Kernel::kFullyConnected);
  cluster.device.kernels[fc].halfRateRows = 64;
  cluster.device.kernels[fc].residentRowsShare = 0.5;
  cluster.device.prepare();
  const Strategy two{"data", Grid{.data = 2}, 8};  // 4 samples a rank: 4 rows
  const double uncached = Oracle(in).layerTimes(two)[3].forward;
  cluster.device.cacheShare = 1 << 30;  // the whole working set
  const double cached = Oracle(in).layerTimes(two)[3].forward;
  EXPECT_NEAR(cached / uncached, (4.0 / (4 + 64)) / (4.0 / (4 + 32)), 1e-12);
  const double convCached = Oracle(in).layerTimes(two)[1].forward;
  cluster.device.cacheShare = 0;
  EXPECT_EQ(convCached, Oracle(in).layerTimes(two)[1].forward);  // the convolution keeps its rate
}

TEST_F(ThreeLayers, LimitsNameWhatBreaks) {
  EXPECT_EQ(limitViolation(in, {"filter", Grid{.filter = 16}, 16}),
            "filter=16 needs 16 devices; cluster 'toy' has 4");
  cluster.nodes = 16;
  cluster.levels.back().ranks = 32;
  EXPECT_EQ(limitViolation(in, {"filter", Grid{.filter = 16}, 16}),
            "layer 'conv' (conv): 8 output channels cannot be split over 16 ranks (filter=16): some rank would hold none");
  EXPECT_EQ(limitViolation(in, {"data", Grid{.data = 4}, 6}), "global batch 6 does not divide over 4 data-parallel groups");
  EXPECT_EQ(limitViolation(in, {"spatial", Grid{.height = 16}, 4}), "spatial split of height over 16 exceeds the input's height of 8");
  EXPECT_EQ(limitViolation(in, {"pipeline", Grid{.pipeline = 4}, 8, 4}), "4 pipeline stages exceed the 3 layers that compute");
  EXPECT_EQ(limitViolation(in, {"pipeline", Grid{.pipeline = 2}, 8, 3}),
            "3 micro-batches do not divide the 8 samples of a pipeline replica");
  const Estimate e = estimate(in, {"data", Grid{.data = 4}, 6});
  EXPECT_FALSE(e.feasible);
  EXPECT_NE(e.bottleneck.find("does not divide"), std::string::npos);
}

TEST_F(ThreeLayers, OutOfMemoryNamesTheComponent) {
  cluster.device.memoryBytes = 1 << 20;  // 1 MiB
  const Estimate e = estimate(in, {"data", Grid{.data = 2}, 4096});
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.bottleneck, "memory: activations does not fit");
}


// A pipeline's stages each reduce their own gradients across the data replicas: the heaviest
// stage's reduction counts, whatever stage holds the model's last layers (CosmoFlow's last
// stage holds no weights, and the reduction used to come out as none, 0 s).
TEST(PipelineGradients, EveryReplicatedPipelineReducesAStagesGradients) {
  const graph::Model model = graph::buildZooModel("cosmoflow");
  const hw::Cluster cluster = hw::loadCluster("abci");
  PlanInputs in = inputsFor(model, cluster);
  const Estimate e = estimate(in, Strategy{"data+pipeline", Grid{.data = 16, .pipeline = 4}, 2048, 8});
  ASSERT_TRUE(e.feasible) << e.infeasibleReason;
  EXPECT_GT(e.time.gradientAllreduce, 0);
  EXPECT_NE(e.allreduceAlgorithm, "none");
  EXPECT_GT(e.memory.gradients, 0);
}


// Each stage of a replicated pipeline reduces its own gradients at once; the heaviest ends
// last. Two stages' groups sharing one link at 1/2 each: the lighter finishes early and leaves
// the link, so the heaviest ends when both stages' bytes have crossed, as if each carried the
// mean. On a link of its own it carries its own bytes. (conv's 288 weights, fc's 5130.)
TEST_F(ThreeLayers, AReplicatedPipelinesReductionIsItsHeaviestStagesShareOfTheLink) {
  const Strategy s{"data+pipeline", Grid{.data = 2, .pipeline = 2}, 16, 2};
  const cost::Placement replicas{2, 2, hw::CommPath::kGradientAllreduce};
  ASSERT_EQ(cost::linkSharing(cluster, replicas), 2);
  const Estimate shared = estimate(in, s);
  ASSERT_TRUE(shared.feasible) << shared.infeasibleReason;
  const double mean = (288 + 5130) * 4.0 / 2;
  EXPECT_NEAR(shared.time.gradientAllreduce, cost::allreduceOn(cluster, replicas, mean, cost::Congestion::kExpected).seconds,
              1e-15);
  EXPECT_NEAR(shared.time.gradientExposed, shared.time.gradientAllreduce, 1e-15);  // after the last micro-batch

  cluster.levels[1].links = 2;  // a link for each stage's group
  ASSERT_EQ(cost::linkSharing(cluster, replicas), 1);
  const Estimate own = estimate(in, s);
  EXPECT_NEAR(own.time.gradientAllreduce, cost::allreduceOn(cluster, replicas, 5130 * 4.0, cost::Congestion::kExpected).seconds,
              1e-15);
}

// A pipeline's step ends with the stage whose last pass and update end last: the first
// stage's update follows the step's last backward, a later stage updates while the passes
// still go back; the update the step pays is what sticks out beyond the last pass. LeNet's second stage holds its fully connected layers (nearly all its
// weights); with memory fast enough that their update fits in the first stage's last
// backward, the step pays the first stage's update only (resnet18 64^2 on 2 stages here: 1.5
// ms measured on the first, 6.3 ms on the second, whose update the oracle charged).
TEST(PipelineUpdate, TheStepPaysTheUpdateOfTheStageThatEndsLast) {
  const graph::Model model = graph::buildZooModel("lenet");
  hw::Cluster cluster = hw::loadCluster("local");
  const Strategy s{"pipeline", Grid{.pipeline = 2}, 16, 8};
  for (const double faster : {1.0, 10.0}) {
    cluster.device.memoryBandwidth *= faster;
    const PlanInputs in = inputsFor(model, cluster);
    Oracle oracle(in);
    const Estimate e = oracle.estimate(s);
    ASSERT_TRUE(e.feasible) << e.infeasibleReason;
    const std::vector<LayerTime> layers = oracle.layerTimes(s);
    std::vector<double> total;
    for (const LayerTime& l : layers) total.push_back(l.forward + l.backward + l.communication);
    const std::vector<int> stage = partitionStages(total, 2);
    ASSERT_EQ(stage, modelStages(model, 2, &cluster.device, 2));  // the stages train runs
    std::vector<double> forward(2), backward(2), update(2, cluster.device.callOverhead);
    // SGD reads weights, gradients and states, writes weights and states; the zeroing of the
    // gradients writes each byte after reading it for ownership.
    const double perWeight = (3 + 2 * in.optimizerStatesPerWeight + 2) * 4 / cluster.device.memoryBandwidth;
    for (int i = 0; i < model.size(); ++i) {
      forward[stage[i]] += layers[i].forward;
      backward[stage[i]] += layers[i].backward;
      update[stage[i]] += static_cast<double>(model.layer(i).counts.params) * perWeight;
    }
    const std::vector<double> ends = pipelineStageEnds(PipelineSchedule::kOneFOneB, forward, backward, 8);
    const double step = std::max(ends[0] + update[0], ends[1] + update[1]);
    EXPECT_NEAR(e.time.forward + e.time.backwardData + e.time.backwardWeight + e.time.bubble + e.time.update, step,
                1e-12 * step) << faster;
    if (faster > 1) {
      ASSERT_LT(ends[1] + update[1], ends[0] + update[0]);  // the second stage's update hides
      EXPECT_NEAR(e.time.update, update[0], 1e-15);
      EXPECT_LT(e.time.update, 0.1 * update[1]);
    }
  }
}

// A hybrid with a single data replica is the model-parallel strategy itself: one row, named
// for it, not two identical rows.
TEST(PlanAll, AHybridWithOneDataReplicaIsNotListedTwice) {
  const graph::Model model = graph::buildZooModel("mesh-fcn");
  const hw::Cluster cluster = hw::loadCluster("abci");
  PlanRequest r;
  r.gpus = {2};
  r.strategies = {"data+spatial", "spatial", "data+pipeline", "pipeline", "data"};
  const std::vector<Estimate> rows = planAll(inputsFor(model, cluster), r);
  std::vector<std::string> names;
  for (const Estimate& e : rows) names.push_back(e.strategy.name + " " + e.strategy.grid.str());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"data data=2", "pipeline pipeline=2", "spatial w=2"}));
}

}  // namespace
}  // namespace paraxis::plan
