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
  cost::LocalShare share;
  share.samples = samples;
  for (const cost::LayerProfile& profile : cost::profileLayers(model)) {
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
