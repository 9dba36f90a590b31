#include "plan/estimator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plan/layer_split.hpp"
#include "plan/oracle.hpp"

namespace paraxis::plan {
namespace {

std::string bottleneckOf(const Estimate& e, const PlanInputs& in) {
  if (!e.feasible) return "infeasible: " + e.infeasibleReason;
  if (!e.fits) return "memory: " + e.memory.largest() + " does not fit";
  const TimeBreakdown& t = e.time;
  // Names as static text: only the winner's line is formatted.
  const std::pair<double, const char*> parts[] = {
      {t.compute(), "compute"},
      {t.gradientExposed, "gradient allreduce"},
      {t.halo, "halo exchange"},
      {t.layerCollectives, "per-layer collectives"},
      {t.shuffle, "redistributions"},
      {t.bubble, "pipeline bubble"},
      {t.pipelineP2P, "pipeline transfers"},
  };
  const auto* worst = &parts[0];
  for (const auto& p : parts) {
    if (p.first > worst->first) worst = &p;
  }
  const double share = worst->first / t.iteration() * 100;
  if (worst == &parts[0]) {
    const graph::ModelTotals& totals = in.model->totals();
    const double achieved = (totals.forwardFlops + totals.backwardDataFlops + totals.backwardWeightFlops) *
                            static_cast<double>(e.strategy.globalBatch) /
                            e.strategy.grid.total() / std::max(1e-30, t.compute());
    return fmt::format("compute {:.0f}% ({:.0f}% of peak)", share, achieved / in.cluster->device.peak(in.dtype) * 100);
  }
  if (worst == &parts[1]) return fmt::format("gradient allreduce ({}, exposed) {:.0f}%", e.allreduceAlgorithm, share);
  return fmt::format("{} {:.0f}%", worst->second, share);
}

}  // namespace

std::string limitViolation(const PlanInputs& in, const Strategy& s) {
  const graph::Model& m = *in.model;
  const Grid& g = s.grid;
  const std::int64_t devices = in.cluster->totalDevices();
  if (g.total() > devices) {
    return fmt::format("{} needs {} devices; cluster '{}' has {}", g.str(), g.total(), in.cluster->name, devices);
  }
  if (s.globalBatch < g.data) {
    return fmt::format("global batch {} is smaller than the {} data-parallel groups", s.globalBatch, g.data);
  }
  if (s.globalBatch % g.data != 0) {
    return fmt::format("global batch {} does not divide over {} data-parallel groups", s.globalBatch, g.data);
  }
  const graph::TensorShape& input = m.inputShape();
  if (g.depth > 1 && input.rank() != 3) return fmt::format("a depth split needs a 3-D input; '{}' is {}", m.name(), input.str());
  if (g.spatial() > 1) {
    const int all[3] = {g.depth, g.height, g.width};
    const int dims = input.rank() == 3 ? 3 : 2;
    const int* splits = all + (3 - dims);
    const char* names[] = {"depth", "height", "width"};
    for (std::size_t d = 0; d < static_cast<std::size_t>(dims); ++d) {
      if (splits[d] > input.spatial[d]) {
        return fmt::format("spatial split of {} over {} exceeds the input's {} of {}",
                           names[d + 3 - dims], splits[d], names[d + 3 - dims], input.spatial[d]);
      }
    }
  }
  if (g.place > 1 && g.modelParallel() != g.place) {
    return fmt::format("a placement (place={}) goes with the data axis only, not with {}", g.place,
                       Grid{.pipeline = g.pipeline, .channel = g.channel, .filter = g.filter, .depth = g.depth,
                            .height = g.height, .width = g.width}.str());
  }
  if (g.filter == 1 && g.channel == 1 && g.pipeline == 1) return "";  // the layer limits below cannot bind
  if (std::string problem = channelAxisProblem(m, g); !problem.empty()) return problem;
  int computeLayers = 0;
  for (const graph::Layer& layer : m.layers()) {
    if (layer.counts.forwardFlops > 0) ++computeLayers;
  }
  if (g.pipeline > computeLayers) {
    return fmt::format("{} pipeline stages exceed the {} layers that compute", g.pipeline, computeLayers);
  }
  if (g.pipeline > 1) {
    const std::int64_t replica = s.globalBatch / g.data;
    if (s.microBatches < 1 || replica % s.microBatches != 0) {
      return fmt::format("{} micro-batches do not divide the {} samples of a pipeline replica", s.microBatches, replica);
    }
  }
  return "";
}

Oracle::Oracle(const PlanInputs& inputs, std::shared_ptr<const Profiles> profiles)
    : inputs_(inputs),
      profiles_(profiles != nullptr ? std::move(profiles)
                                    : std::make_shared<const Profiles>(cost::profileLayers(*inputs.model))) {}

double Oracle::serialIterationSeconds(double samples) {
  if (const auto it = serialSeconds_.find(samples); it != serialSeconds_.end()) return it->second;
  const Strategy serial{"serial", Grid{}, std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(samples)))};
  const double seconds =
      detail::evaluate(inputs_, *profiles_, arrays_, serial, cost::Congestion::kExpected).time.iteration();
  serialSeconds_.emplace(samples, seconds);
  return seconds;
}

std::vector<LayerTime> Oracle::layerTimes(const Strategy& s) {
  if (!limitViolation(inputs_, s).empty()) return {};
  detail::evaluate(inputs_, *profiles_, arrays_, s, inputs_.congestion);
  std::vector<LayerTime> layers(arrays_.forward.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    layers[i] = {arrays_.forward[i], arrays_.backward[i], arrays_.communication[i]};
  }
  return layers;
}

Estimate Oracle::estimate(const Strategy& s, bool withRange) {
  const PlanInputs& in = inputs_;
  Estimate e;
  e.strategy = s;
  e.infeasibleReason = limitViolation(in, s);
  e.feasible = e.infeasibleReason.empty();
  e.memoryCapacity = in.cluster->device.memoryBytes;
  if (!e.feasible) {
    e.bottleneck = bottleneckOf(e, in);
    return e;
  }
  const detail::Evaluation expected = detail::evaluate(in, *profiles_, arrays_, s, in.congestion);
  e.time = expected.time;
  e.memory = expected.memory;
  e.allreduceAlgorithm = expected.allreduceAlgorithm;
  e.exposedParts = expected.exposedParts;
  e.fits = e.memory.total() <= e.memoryCapacity;
  if (withRange) {
    e.iterationOptimistic = detail::evaluate(in, *profiles_, arrays_, s, cost::Congestion::kOptimistic).time.iteration();
    e.iterationCongested = detail::evaluate(in, *profiles_, arrays_, s, cost::Congestion::kCongested).time.iteration();
  }
  const double iteration = e.time.iteration();
  const auto batch = static_cast<double>(s.globalBatch);
  const int devices = s.grid.total();
  e.samplesPerSecond = batch / iteration;
  e.iterationsPerEpoch = std::ceil(in.datasetSamples / batch);
  e.epochSeconds = e.iterationsPerEpoch * iteration;
  e.epochs = in.statistics.epochs(batch);
  e.timeToTrain = e.epochs * e.epochSeconds;
  e.deviceHours = e.timeToTrain * devices / 3600;
  const double perDevice = batch / devices;
  const double serial = serialIterationSeconds(perDevice);
  e.scalingEfficiency = e.samplesPerSecond / (devices * perDevice / serial);
  e.statisticalEfficiency = in.statistics.epochs(perDevice) / e.epochs;
  // One replica (its model-parallel devices) against one device, per sample.
  const double replicaSamples = batch / s.grid.data;
  e.modelParallelSpeedup = (serial / perDevice) / (expected.replicaSeconds / replicaSamples);
  e.bottleneck = bottleneckOf(e, in);
  return e;
}

Estimate estimate(const PlanInputs& inputs, const Strategy& strategy, bool withRange) {
  return Oracle(inputs).estimate(strategy, withRange);
}

double serialIterationSeconds(const PlanInputs& inputs, double samples) {
  return Oracle(inputs).serialIterationSeconds(samples);
}

}  // namespace paraxis::plan
