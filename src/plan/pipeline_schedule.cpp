#include "plan/pipeline_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cost/compute.hpp"
#include "plan/pipeline_partition.hpp"

namespace paraxis::plan {

std::vector<PipelineStep> pipelineSteps(PipelineSchedule schedule, int stages, int stage, int micro) {
  std::vector<PipelineStep> steps;
  if (schedule == PipelineSchedule::kGPipe) {
    for (int k = 0; k < micro; ++k) steps.push_back({true, k});
    for (int k = micro - 1; k >= 0; --k) steps.push_back({false, k});
    return steps;
  }
  const int warmup = std::min(stages - stage - 1, micro);
  int forward = 0, backward = 0;
  while (forward < warmup) steps.push_back({true, forward++});
  while (forward < micro) {
    steps.push_back({true, forward++});
    steps.push_back({false, backward++});
  }
  while (backward < micro) steps.push_back({false, backward++});
  return steps;
}

namespace {

// m passes of the slowest stage and one micro-batch through the others, with the transfers
// of one micro-batch's way through and back.
double pipelineBound(const std::vector<double>& forward, const std::vector<double>& backward, int micro,
                     double transfer) {
  double slowest = 0, all = 0;
  for (std::size_t s = 0; s < forward.size(); ++s) {
    slowest = std::max(slowest, forward[s] + backward[s]);
    all += forward[s] + backward[s];
  }
  return (micro - 1) * slowest + all + 2.0 * static_cast<double>(forward.size() - 1) * transfer;
}

}  // namespace

std::vector<double> pipelineStageEnds(PipelineSchedule schedule, const std::vector<double>& forward,
                                      const std::vector<double>& backward, int micro, double transfer) {
  const int stages = static_cast<int>(forward.size());
  if (stages == 0 || micro <= 0) return std::vector<double>(static_cast<std::size_t>(stages), 0.0);
  if (static_cast<double>(stages) * micro > 65536) {
    std::vector<double> ends(static_cast<std::size_t>(stages), pipelineBound(forward, backward, micro, transfer));
    for (int s = 1; s < stages; ++s) ends[s] = ends[s - 1] - backward[s - 1] - transfer;
    return ends;
  }
  // Each pass's end (-1: not run yet), per stage and micro-batch; stages advance in turn
  // through their streams as far as their inputs allow.
  std::vector<std::vector<double>> forwardEnd(stages, std::vector<double>(micro, -1)), backwardEnd = forwardEnd;
  std::vector<std::vector<PipelineStep>> steps;
  for (int s = 0; s < stages; ++s) steps.push_back(pipelineSteps(schedule, stages, s, micro));
  std::vector<std::size_t> next(stages, 0);
  std::vector<double> free(stages, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < stages; ++s) {
      for (; next[s] < steps[s].size(); ++next[s], progress = true) {
        const PipelineStep step = steps[s][next[s]];
        double ready = 0;
        if (step.forward && s > 0) ready = forwardEnd[s - 1][step.micro] < 0 ? -1 : forwardEnd[s - 1][step.micro] + transfer;
        if (!step.forward) {
          ready = s + 1 < stages ? (backwardEnd[s + 1][step.micro] < 0 ? -1 : backwardEnd[s + 1][step.micro] + transfer)
                                 : forwardEnd[s][step.micro];
        }
        if (ready < 0) break;
        free[s] = std::max(free[s], ready) + (step.forward ? forward[s] : backward[s]);
        (step.forward ? forwardEnd : backwardEnd)[s][step.micro] = free[s];
      }
    }
  }
  return free;
}

std::vector<int> modelStages(const graph::Model& model, int stages, const hw::Device* device, double samples) {
  std::vector<double> weights;
  if (device == nullptr) {
    for (const graph::Layer& l : model.layers()) {
      weights.push_back(std::max(1.0, l.counts.forwardFlops + l.counts.backwardDataFlops + l.counts.backwardWeightFlops));
    }
    return partitionStages(weights, stages);
  }
  const cost::DeviceRates rates(*device, device->peak("fp32"));
  cost::LogMemo logs;
  const std::vector<cost::LayerProfile> profiles = cost::profileLayers(model);
  cost::LocalShare share;
  share.samples = samples;
  share.weightsResident = cost::wholeModelResidentShare(model, profiles, *device, samples);
  for (const cost::LayerProfile& profile : profiles) {
    const cost::LayerTimes t = cost::layerTimes(rates, profile, share, model.bytesPerElement(), logs);
    weights.push_back(t.forward + t.backwardData + t.backwardWeight);
  }
  return partitionStages(weights, stages);
}

std::string pipelineProblem(const graph::Model& model, int stages, const std::vector<int>& stageOf) {
  if (stages <= 1) return {};
  int computing = 0;
  for (const graph::Layer& l : model.layers()) computing += l.counts.forwardFlops > 0 ? 1 : 0;
  if (stages > computing) {
    return fmt::format("{} pipeline stages exceed the {} layers of model '{}' that compute", stages, computing,
                       model.name());
  }
  for (int i = 0; i < static_cast<int>(stageOf.size()); ++i) {
    const graph::Layer& l = model.layer(i);
    const bool loss = l.kind == graph::LayerKind::kSoftmaxLoss || l.kind == graph::LayerKind::kMseLoss;
    if (loss && stageOf[i] != stages - 1) {
      return fmt::format("layer '{}' ({}): a loss layer in pipeline stage {} of {}; train runs every loss in the last "
                         "stage",
                         l.name, graph::kindName(l.kind), stageOf[i] + 1, stages);
    }
  }
  return {};
}

}  // namespace paraxis::plan
