#pragma once
// Pipeline execution plans shared by the oracle and train: which layers each stage runs (the
// balanced contiguous partition of pipeline_partition.hpp over each layer's training FLOPs) and
// the order in which a stage runs its micro-batches' forward and backward passes.
#include <string>
#include <vector>

#include "graph/model.hpp"
#include "hw/cluster.hpp"
#include "plan/strategy.hpp"

namespace paraxis::plan {

struct PipelineStep {
  bool forward = true;
  int micro = 0;
  bool operator==(const PipelineStep&) const = default;
};

// Stage `stage` of `stages`, `micro` micro-batches. GPipe: every forward, then every backward
// (last micro-batch first). 1F1B (PipeDream-flush): min(stages - stage - 1, micro) forwards to
// fill the pipe, then one forward and one backward in turn, then the remaining backwards; at
// most stages - stage micro-batches are in flight.
std::vector<PipelineStep> pipelineSteps(PipelineSchedule schedule, int stages, int stage, int micro);

// When each stage ends its last pass, from the step's first forward, when each stage runs its
// pipelineSteps with passes of `forward[s]` and `backward[s]` seconds, a pass waiting for its
// input from the neighbouring stage (`transfer` seconds after that pass ends). The latest end
// is the schedule's makespan: balanced stages take (m + p - 1) passes; unbalanced ones less
// than the slowest stage's m passes and one micro-batch through the others (1F1B hides a fast
// stage's passes under a slow first stage's). A stage that ends early runs its optimizer
// update while the stages before it still pass gradients back (1F1B and GPipe alike end on the
// first stage's last backward). Beyond 2^17 steps in all, that bound for the first stage and
// the bound less the backward passes and transfers between it and each later stage (the
// simulation's cost grows with the steps).
std::vector<double> pipelineStageEnds(PipelineSchedule schedule, const std::vector<double>& forward,
                                      const std::vector<double>& backward, int micro, double transfer = 0);

// Each layer's stage: partitionStages over each layer's modelled training seconds for a
// micro-batch of `samples` on `device` (the oracle's roofline with the device's efficiency
// curve, so memory-bound layers weigh what they cost), or over its FLOPs without a device (a
// layer without FLOPs weighs as one FLOP, so it stays with its neighbours).
std::vector<int> modelStages(const graph::Model& model, int stages, const hw::Device* device = nullptr,
                             double samples = 1);

// One line naming what keeps `model` from running as `stages` stages: more stages than layers
// that compute, or (given the partition that runs) a loss layer outside the last stage; empty
// when nothing does.
std::string pipelineProblem(const graph::Model& model, int stages, const std::vector<int>& stageOf = {});

}  // namespace paraxis::plan
