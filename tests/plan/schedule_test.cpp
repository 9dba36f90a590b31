#include <gtest/gtest.h>

#include <algorithm>

#include "plan/gradient_schedule.hpp"
#include "plan/pipeline_partition.hpp"
#include "plan/pipeline_schedule.hpp"
#include "plan/statistical.hpp"
#include "core/error.hpp"
#include "graph/yaml_loader.hpp"
#include "graph/zoo/zoo.hpp"

namespace paraxis::plan {
namespace {

TEST(GradientSchedule, FusionStartsWithASmallBucket) {
  const std::vector<GradientSource> sources{{1, 0.5e6}, {2, 2e6}, {3, 30e6}, {4, 40e6}, {5, 1e6}};
  GradientComm s;
  s.fusionBytes = 64e6;
  s.firstBucketBytes = 1e6;
  const auto groups = formGroups(sources, s);
  ASSERT_EQ(groups.size(), 3U);
  EXPECT_EQ(groups[0], (std::vector<int>{0, 1}));  // reached 1 MB
  EXPECT_EQ(groups[1], (std::vector<int>{2, 3}));  // reached 64 MB
  EXPECT_EQ(groups[2], (std::vector<int>{4}));
  s.grouping = Grouping::kPerLayer;
  EXPECT_EQ(formGroups(sources, s).size(), 5U);
  s.grouping = Grouping::kGroups;
  s.groups = 2;
  EXPECT_EQ(formGroups(sources, s).size(), 2U);
}

TEST(GradientSchedule, OverlapHidesAllButTheTail) {
  // Two groups ready at 1 s and 2 s (backward ends at 2 s), each taking 0.5 s to reduce.
  const std::vector<GradientSource> sources{{1, 100}, {2, 100}};
  GradientComm s;
  s.grouping = Grouping::kPerLayer;
  auto reduce = [](double) { return 0.5; };
  GradientResult r = scheduleGradients(sources, 2, s, reduce, 0);
  EXPECT_DOUBLE_EQ(r.total, 1.0);
  EXPECT_DOUBLE_EQ(r.exposed, 0.5);  // the first finished at 1.5 s, hidden
  s.overlap = false;
  r = scheduleGradients(sources, 2, s, reduce, 0);
  EXPECT_DOUBLE_EQ(r.exposed, 1.0);
  // Negotiation: the cycle is a latency floor in front of every group.
  s.overlap = true;
  s.negotiation = Negotiation::kDecentralized;
  s.cycleSeconds = 0.1;
  r = scheduleGradients(sources, 2, s, reduce, 0.01);
  EXPECT_DOUBLE_EQ(r.exposed, 0.6);
  EXPECT_DOUBLE_EQ(r.negotiation, 0.2);
}

TEST(GradientSchedule, ReductionsBesideComputeProgressAtTheHiddenRateAndSlowIt) {
  // One group ready at 0 s taking 1 s, backward ending at 2 s.
  const std::vector<GradientSource> sources{{0, 100}};
  GradientComm s;
  s.order = ReduceOrder::kFifo;
  auto reduce = [](double) { return 1.0; };
  // At half speed it just fits: in flight all 2 s of backward, which runs 1.5x longer for it.
  GradientResult r = scheduleGradients(sources, 2, s, reduce, 0, {.hidden = 0.5, .slowdown = 1.5});
  EXPECT_DOUBLE_EQ(r.exposed, 0);
  EXPECT_DOUBLE_EQ(r.computeStretch, 1.0);
  // At a quarter, 0.5 s of it is done when backward ends; the rest runs after, at full speed.
  r = scheduleGradients(sources, 2, s, reduce, 0, {.hidden = 0.25, .slowdown = 1});
  EXPECT_DOUBLE_EQ(r.exposed, 0.5);
  EXPECT_DOUBLE_EQ(r.computeStretch, 0);
  // Nothing hidden: all of it after backward.
  EXPECT_DOUBLE_EQ(scheduleGradients(sources, 2, s, reduce, 0, {.hidden = 0, .slowdown = 1}).exposed, 1.0);
}

TEST(GradientSchedule, UnderForwardPriorityBackwardHidesAtTheChunkedRate) {
  // One group ready at 0 s taking 1 s, backward ending at 2 s; one large call hides fully, the
  // engine's chunks beside backward at a quarter of their speed.
  const std::vector<GradientSource> sources{{0, 100}};
  GradientComm s;
  auto reduce = [](double) { return 1.0; };
  const hw::Overlap overlap{.hidden = 1, .slowdown = 1, .chunked = 0.25};
  s.order = ReduceOrder::kFifo;
  EXPECT_DOUBLE_EQ(scheduleGradients(sources, 2, s, reduce, 0, overlap).exposed, 0);
  // 0.5 s done in backward; the rest goes first in the next forward, which needs it at once.
  s.order = ReduceOrder::kForwardPriority;
  EXPECT_DOUBLE_EQ(scheduleGradients(sources, 2, s, reduce, 0, overlap).exposed, 0.5);
  // A file from before the chunked rate was measured: the one rate for both.
  EXPECT_DOUBLE_EQ(scheduleGradients(sources, 2, s, reduce, 0, {.hidden = 1, .slowdown = 1}).exposed, 0);
}

TEST(GradientSchedule, ComputeSlowsByTheWorkDoneBesideItNotTheTimeInFlight) {
  // One group ready at 0 s taking 1 s, backward ending at 2 s. One call beside compute moves at
  // half speed and slows it 1.5x: 0.5 s of compute lost per 0.5 s of work, so 1 s per second.
  const std::vector<GradientSource> sources{{0, 100}};
  GradientComm s;
  auto reduce = [](double) { return 1.0; };
  // The engine's chunks at a quarter: in flight all 2 s, 0.5 s of work done, 0.5 s lost.
  EXPECT_DOUBLE_EQ(scheduleGradients(sources, 2, s, reduce, 0, {.hidden = 0.5, .slowdown = 1.5, .chunked = 0.25})
                       .computeStretch,
                   0.5);
  // Chunks that cannot move beside compute take nothing from it.
  EXPECT_DOUBLE_EQ(
      scheduleGradients(sources, 2, s, reduce, 0, {.hidden = 0.5, .slowdown = 1.5, .chunked = 0}).computeStretch, 0);
}

TEST(GradientSchedule, ForwardPriorityHidesTheTailBehindTheNextForward) {
  // Backward order: the last layer (ready at 1 s, 1.5 s to reduce, reached 0.5 s into the
  // next forward), then the first (ready at 2 s, 1 s, reached at once); backward ends at 2 s.
  const std::vector<GradientSource> sources{{1, 1.5, 0.5}, {2, 1.0, 0.0}};
  GradientComm s;
  s.grouping = Grouping::kPerLayer;
  s.order = ReduceOrder::kFifo;
  auto reduce = [](double bytes) { return bytes; };
  // In order: 1 .. 2.5, then 2.5 .. 3.5: 1.5 s after backward.
  EXPECT_DOUBLE_EQ(scheduleGradients(sources, 2, s, reduce, 0).exposed, 1.5);
  // Forward priority: the first layer's 1 s goes first (the forward waits 1 s), then the
  // 0.5 s left of the other ends at 1.5 s, when the forward (at 1 + 0.5 s) reaches it.
  s.order = ReduceOrder::kForwardPriority;
  EXPECT_DOUBLE_EQ(scheduleGradients(sources, 2, s, reduce, 0).exposed, 1.0);
  EXPECT_DOUBLE_EQ(scheduleGradients(sources, 2, s, reduce, 0).forwardStretch, 0);  // slowdown 1
  // At half speed beside compute, slowing it 1.5x: 0.5 s of the last layer's 1.5 s is done
  // in backward (stretching it 0.5 s), 2 s are left. The first layer's 1 s goes first (the
  // forward waits 1 s), then the forward computes 0.5 s beside the other's 1 s (0.25 s done)
  // and waits 0.75 s for the rest. In flight beside the forward: 0.5 s, which it ran
  // 0.5 x 0.5 s longer.
  const GradientResult slowed = scheduleGradients(sources, 2, s, reduce, 0, {.hidden = 0.5, .slowdown = 1.5});
  EXPECT_DOUBLE_EQ(slowed.computeStretch, 0.5);
  EXPECT_DOUBLE_EQ(slowed.exposed, 1.75);
  EXPECT_DOUBLE_EQ(slowed.forwardStretch, 0.25);
  // Measured through the forward (overlap.forward), the reductions move at that rate while it
  // computes and while it waits. At 0.5: the first layer's 1 s is done at 2 s (the forward, at
  // 0, waits 2 s), the other's at 4 s, which the forward reaches at 2 + 0.5 s: it waits 1.5 s
  // more, 3.5 s in all. Beside its 0.5 s of compute 0.25 s of work was done, stretching it
  // 0.5 / 0.5 x 0.25 s.
  const GradientResult through =
      scheduleGradients(sources, 2, s, reduce, 0, {.hidden = 0.5, .slowdown = 1.5, .forward = 0.5});
  EXPECT_DOUBLE_EQ(through.exposed, 3.5);
  EXPECT_DOUBLE_EQ(through.forwardStretch, 0.25);
  // FIFO waits for every reduction before the next forward: nothing beside it.
  s.order = ReduceOrder::kFifo;
  EXPECT_DOUBLE_EQ(scheduleGradients(sources, 2, s, reduce, 0, {.hidden = 0.5, .slowdown = 1.5}).forwardStretch, 0);
}

TEST(PipelinePartition, BalancesContiguousStages) {
  const std::vector<double> t{1, 1, 1, 1, 4, 1, 1};
  const std::vector<int> stages = partitionStages(t, 3);
  EXPECT_EQ(stages, (std::vector<int>{0, 0, 0, 0, 1, 2, 2}));
  const std::vector<int> many = partitionStages({1, 1, 1}, 3);
  EXPECT_EQ(many, (std::vector<int>{0, 1, 2}));
}

TEST(Statistical, FlatThenGrowingAndAnchored) {
  StatisticalModel m{90, 8192, 0.5, {}};
  EXPECT_DOUBLE_EQ(m.epochs(1024), 90);
  EXPECT_DOUBLE_EQ(m.epochs(32768), 180);
  m.anchor(32768, 90);
  EXPECT_DOUBLE_EQ(m.epochs(32768), 90);
  EXPECT_DOUBLE_EQ(m.epochs(1024), 45);
  // MLPerf v1.0 ResNet-50: 35 epochs at 3,264, 45 at 13,056.
  StatisticalModel table{0, 0, 0, {{3264, 35}, {13056, 45}}};
  EXPECT_DOUBLE_EQ(table.epochs(3264), 35);
  EXPECT_NEAR(table.epochs(6528), 40, 1e-9);  // halfway in log(batch)
  EXPECT_DOUBLE_EQ(table.epochs(26112), 90);  // beyond the table, steps stop falling
  EXPECT_EQ(parseEpochsAt("8192=90"), (std::pair<double, double>{8192, 90}));
  EXPECT_THROW(parseEpochsAt("8192:90"), ConfigError);
}

// Every stage's instruction stream: each micro-batch once forward, once backward, its backward
// after its forward; GPipe holds every micro-batch at once, 1F1B at most stages - stage; the
// streams agree on the order of what crosses each boundary (forwards in micro-batch order on
// both sides; backwards in one order on both sides).
TEST(PipelineSteps, EachMicroBatchOnceEachWayInFlightBounded) {
  for (PipelineSchedule schedule : {PipelineSchedule::kGPipe, PipelineSchedule::kOneFOneB}) {
    for (int stages : {2, 3, 4}) {
      for (int micro : {1, 2, 4, 8}) {
        std::vector<int> backwardOrder;
        for (int stage = 0; stage < stages; ++stage) {
          const std::vector<PipelineStep> steps = pipelineSteps(schedule, stages, stage, micro);
          ASSERT_EQ(steps.size(), static_cast<std::size_t>(2 * micro));
          std::vector<int> forwards, backwards;
          int inFlight = 0, most = 0;
          for (const PipelineStep& s : steps) {
            (s.forward ? forwards : backwards).push_back(s.micro);
            inFlight += s.forward ? 1 : -1;
            most = std::max(most, inFlight);
            if (!s.forward) {
              EXPECT_NE(std::find(forwards.begin(), forwards.end(), s.micro), forwards.end());
            }
          }
          for (int k = 0; k < micro; ++k) EXPECT_EQ(forwards[static_cast<std::size_t>(k)], k);
          if (stage == 0) backwardOrder = backwards;
          EXPECT_EQ(backwards, backwardOrder);
          EXPECT_EQ(most, schedule == PipelineSchedule::kGPipe ? micro : std::min(micro, stages - stage));
        }
      }
    }
  }
  // 1F1B on 2 stages, 4 micro-batches, the first stage: F0 F1 B0 F2 B1 F3 B2 B3.
  const std::vector<PipelineStep> first = pipelineSteps(PipelineSchedule::kOneFOneB, 2, 0, 4);
  const std::vector<PipelineStep> expected{{true, 0}, {true, 1}, {false, 0}, {true, 2},
                                           {false, 1}, {true, 3}, {false, 2}, {false, 3}};
  EXPECT_EQ(first, expected);
}

// The latest of the stages' ends: the schedule's makespan.
double pipelineMakespan(PipelineSchedule schedule, const std::vector<double>& forward,
                        const std::vector<double>& backward, int micro, double transfer = 0) {
  const std::vector<double> ends = pipelineStageEnds(schedule, forward, backward, micro, transfer);
  return *std::max_element(ends.begin(), ends.end());
}

// The schedules played out by hand: balanced stages take (m + p - 1) passes under both; a slow
// first stage hides the second's passes under 1F1B (stage 0: F0 [0,3] F1 [3,6] B0 [6,9] B1
// [9,12]; stage 1: F0 [3,4] B0 [4,5] F1 [6,7] B1 [7,8]), while GPipe waits for the last
// backward to come back (B1 [8,11], B0 [11,14]); transfers delay each hand-over.
TEST(PipelineSteps, MakespanPlaysTheScheduleOut) {
  for (const PipelineSchedule schedule : {PipelineSchedule::kOneFOneB, PipelineSchedule::kGPipe}) {
    EXPECT_DOUBLE_EQ(pipelineMakespan(schedule, {1, 1, 1, 1}, {2, 2, 2, 2}, 8), (8 + 4 - 1) * 3.0);
  }
  EXPECT_DOUBLE_EQ(pipelineMakespan(PipelineSchedule::kOneFOneB, {3, 1}, {3, 1}, 2), 12);
  EXPECT_DOUBLE_EQ(pipelineMakespan(PipelineSchedule::kGPipe, {3, 1}, {3, 1}, 2), 14);
  // One micro-batch: through and back, with a transfer at each of the 2 x (p - 1) hand-overs.
  EXPECT_DOUBLE_EQ(pipelineMakespan(PipelineSchedule::kOneFOneB, {1, 2, 3}, {1, 2, 3}, 1, 0.5), 12 + 4 * 0.5);
  // Beyond the simulation's size, the bound: m passes of the slowest and one micro-batch through the rest.
  EXPECT_DOUBLE_EQ(pipelineMakespan(PipelineSchedule::kOneFOneB, {3, 1}, {3, 1}, 40000), 39999 * 6.0 + 8);
}

// Each stage's end in the same plays: under 1F1B the second stage ends its last backward
// (B1 [7,8]) four units before the first (B1 [9,12]); under GPipe one pass before (stage 1: B1
// [3,4] B0 [4,5]; stage 0: B1 [4,5] B0 [5,6]). The time between is the later stage's to update in.
TEST(PipelineSteps, StageEndsLeaveTheLaterStagesTime) {
  EXPECT_EQ(pipelineStageEnds(PipelineSchedule::kOneFOneB, {3, 1}, {3, 1}, 2), (std::vector<double>{12, 8}));
  EXPECT_EQ(pipelineStageEnds(PipelineSchedule::kGPipe, {1, 1}, {1, 1}, 2), (std::vector<double>{6, 5}));
  // Beyond the simulation's size, the bound's end less each backward pass and transfer on the way back.
  EXPECT_EQ(pipelineStageEnds(PipelineSchedule::kOneFOneB, {3, 1}, {3, 1}, 40000, 0.5),
            (std::vector<double>{39999 * 6.0 + 8 + 1, 39999 * 6.0 + 8 + 1 - 3.5}));
}

TEST(PipelineSteps, ModelStagesAreContiguousAndProblemsNamed) {
  const graph::Model lenet = graph::buildZooModel("lenet");
  const std::vector<int> stages = modelStages(lenet, 3);
  EXPECT_EQ(stages.front(), 0);
  EXPECT_EQ(stages.back(), 2);
  for (std::size_t i = 1; i < stages.size(); ++i) EXPECT_TRUE(stages[i] == stages[i - 1] || stages[i] == stages[i - 1] + 1);
  EXPECT_EQ(pipelineProblem(lenet, 3), "");
  EXPECT_EQ(pipelineProblem(lenet, 20), "20 pipeline stages exceed the 11 layers of model 'lenet' that compute");
  const graph::Model aux = graph::loadModelText(R"(name: aux
input: {channels: 1, size: [16, 16]}
layers:
  - {name: conv1, kind: conv, filters: 8, kernel: 3, padding: 1}
  - {name: relu1, kind: relu}
  - {name: auxfc, kind: fc, outputs: 10}
  - {name: auxloss, kind: softmax_loss}
  - {name: conv2, kind: conv, filters: 32, kernel: 3, padding: 1, inputs: [relu1]}
  - {name: relu2, kind: relu}
  - {name: conv3, kind: conv, filters: 32, kernel: 3, padding: 1}
  - {name: fc, kind: fc, outputs: 10}
  - {name: loss, kind: softmax_loss}
)", "aux.yaml");
  EXPECT_EQ(pipelineProblem(aux, 2, modelStages(aux, 2)),
            "layer 'auxloss' (softmax_loss): a loss layer in pipeline stage 1 of 2; train runs every loss in the last stage");
}

}  // namespace
}  // namespace paraxis::plan
