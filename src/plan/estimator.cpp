#include "plan/estimator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cost/topology.hpp"
#include "plan/gradient_schedule.hpp"
#include "plan/layer_split.hpp"
#include "plan/pipeline_partition.hpp"

namespace paraxis::plan {
namespace {

using cost::Congestion;
using cost::Placement;
using detail::LayerSplit;

struct Evaluation {
  TimeBreakdown time;
  MemoryBreakdown memory;
  std::string allreduceAlgorithm = "none";
  double replicaSeconds = 0;  // one replica's iteration without the gradient reduction
};

double wireBytes(double bytes, const CommSettings& c) { return bytes * (c.fp16 ? 0.5 : 1.0) * c.density; }

// Halo exchange of one layer, forward (x) and backward (dL/dy): per split dimension, the two
// faces travel at once to the neighbours along that axis (`neighbours`: depth, height, width).
double haloSeconds(const PlanInputs& in, const Grid& g, const graph::Layer& layer, const graph::TensorShape& x,
                   double samples, const cost::PlacedGroup (&neighbours)[3], double* bufferBytes) {
  const int rank = x.rank();
  if (rank < 2 || layer.counts.halo.empty()) return 0;
  const int all[3] = {g.depth, g.height, g.width};
  const int* splits = rank == 3 ? all : all + 1;
  const cost::PlacedGroup* links = rank == 3 ? neighbours : neighbours + 1;
  double seconds = 0;
  for (int d = 0; d < rank; ++d) {
    const auto halo = static_cast<double>(layer.counts.halo[d]);
    if (splits[d] <= 1 || halo <= 0) continue;
    double face = static_cast<double>(x.channels) * halo * samples;
    for (int o = 0; o < rank; ++o) {
      if (o != d) face *= std::ceil(static_cast<double>(x.spatial[o]) / splits[o]);
    }
    const double bytes = face * in.model->bytesPerElement();
    seconds += 2 * links[d].pointToPoint(bytes);
    *bufferBytes = std::max(*bufferBytes, 4 * bytes);  // two faces, sent and received
  }
  return seconds;
}

// The gradient reduction of `bytes` over every rank that holds the same weights: over the
// whole data x spatial block when it is contiguous, else the spatial group then the data group.
class GradientReduction {
 public:
  GradientReduction(const PlanInputs& in, const Grid& g, const CommSettings& c, Congestion k)
      : settings_(c),
        memoryBandwidth_(in.cluster->device.memoryBandwidth),
        slower_(in.cluster->implementation.gradientAllreduce),
        contiguous_(g.pipeline * g.channel * g.filter == 1),
        first_(*in.cluster,
               contiguous_ ? Placement{static_cast<std::int64_t>(g.data) * g.spatial(), 1} : Placement{g.spatial(), 1}, k),
        second_(*in.cluster, contiguous_ ? Placement{} : Placement{g.data, g.strideData()}, k) {}

  double operator()(double bytes, std::string_view* algorithm) const {
    const double wire = wireBytes(bytes, settings_);
    double seconds = 0;
    for (const cost::PlacedAllreduce* part : {&first_, &second_}) {
      const cost::CollectiveEstimate e = (*part)(wire);
      seconds += e.seconds;
      if (algorithm != nullptr && e.algorithm != "none") *algorithm = e.algorithm;
    }
    if (settings_.fp16) seconds += 2 * bytes / memoryBandwidth_;  // casts down and back up
    if (settings_.density < 1) {
      // Chunk norms agreed by a small allreduce, then selection and the residual update.
      const double chunks = std::ceil(bytes / (4.0 * 1024));
      const cost::PlacedAllreduce& last = contiguous_ ? first_ : second_;
      seconds += last(chunks * 4).seconds + 3 * bytes / memoryBandwidth_;
    }
    return seconds * slower_;
  }

 private:
  CommSettings settings_;
  double memoryBandwidth_;
  double slower_;
  bool contiguous_;
  cost::PlacedAllreduce first_, second_;
};

double negotiationSeconds(const PlanInputs& in, const Grid& g, const CommSettings& c, int tensors, Congestion k) {
  const Placement all{static_cast<std::int64_t>(g.data) * g.spatial(), 1};
  if (c.negotiation == Negotiation::kDecentralized) {
    return cost::allreduceOn(*in.cluster, all, 8.0 * std::ceil(tensors / 64.0), k).seconds;
  }
  if (c.negotiation == Negotiation::kCentralized) {
    // A gather of every rank's ready list at rank 0, then a broadcast of the decision.
    const cost::GroupLink link = cost::groupLink(*in.cluster, all, k);
    const double list = 4.0 * tensors;
    return static_cast<double>(all.size - 1) * (link.link.alpha + list * link.link.beta) +
           cost::binomialBroadcast(static_cast<int>(all.size), list, link.link);
  }
  return 0;
}

const std::vector<cost::LayerProfile>& profilesOf(const PlanInputs& in) {
  if (in.profiledModel != in.model) {
    in.profiles = cost::profileLayers(*in.model);
    in.profiledModel = in.model;
  }
  return in.profiles;
}

// Per-layer working arrays, reused between evaluations of one thread (no allocation in the
// oracle's inner loop).
struct Scratch {
  std::vector<LayerSplit> splits;
  std::vector<double> fwd, bwd, bwdData, bwdWeight, comm;
  std::vector<GradientSource> sources;
  std::vector<int> stage;

  void reset(int layers) {
    for (std::vector<double>* v : {&fwd, &bwd, &bwdData, &bwdWeight, &comm}) v->assign(layers, 0.0);
    stage.assign(layers, 0);
    sources.clear();
  }
};

Evaluation evaluate(const PlanInputs& in, const Strategy& s, Congestion k) {
  const graph::Model& m = *in.model;
  const hw::Cluster& cl = *in.cluster;
  const Grid& g = s.grid;
  const double peak = cl.device.peak(in.dtype);
  const int delta = m.bytesPerElement();
  const std::vector<cost::LayerProfile>& profiles = profilesOf(in);
  thread_local Scratch scratch;
  scratch.reset(m.size());
  detail::splitLayers(m, g, scratch.splits);
  const std::vector<LayerSplit>& splits = scratch.splits;
  const double replicaBatch = static_cast<double>(s.globalBatch) / g.data;
  const int micro = g.pipeline > 1 ? std::max(1, s.microBatches) : 1;
  const double samples = replicaBatch / micro;  // per pass of one micro-batch

  Evaluation e;
  TimeBreakdown& t = e.time;
  std::vector<double>& fwd = scratch.fwd;
  std::vector<double>& bwd = scratch.bwd;
  std::vector<double>& bwdData = scratch.bwdData;
  std::vector<double>& bwdWeight = scratch.bwdWeight;
  std::vector<double>& comm = scratch.comm;
  double localParams = 0;
  double maxHaloBytes = 0;
  double workspace = 0;
  double activations = 0;
  cost::LogMemo logs;
  const cost::DeviceRates rates(cl.device, peak);
  const hw::Implementation& impl = cl.implementation;
  // The groups the per-layer collectives run on, placed once.
  const cost::PlacedGroup spatialGroup(cl, {g.spatial(), 1}, k);
  const cost::PlacedGroup filterGroup(cl, {g.filter, g.strideFilter()}, k);
  const cost::PlacedGroup channelGroup(cl, {g.channel, g.strideChannel()}, k);
  const cost::PlacedAllreduce channelAllreduce(cl, {g.channel, g.strideChannel()}, k);
  const cost::PlacedGroup neighbours[3] = {
      {cl, {g.depth > 1 ? 2 : 1, g.strideDepth()}, k},
      {cl, {g.height > 1 ? 2 : 1, g.strideHeight()}, k},
      {cl, {g.width > 1 ? 2 : 1, g.strideWidth()}, k}};
  for (int i = 0; i < m.size(); ++i) {
    const graph::Layer& layer = m.layer(i);
    const cost::LayerProfile& profile = profiles[i];
    const LayerSplit& sp = splits[i];
    cost::LocalShare share = sp.share;
    share.samples = samples;
    const double inElems = profile.inputElements;
    const cost::LayerTimes lt = cost::layerTimes(rates, profile, share, delta, logs);
    // The implementation's factor for how this layer is split (or for an unsplit layer).
    double slower = sp.spatial || sp.channelSplit || sp.channelParallel ? 1 : impl.compute;
    if (sp.spatial) slower *= impl.spatialCompute;
    if (sp.channelSplit) slower *= impl.filterCompute;
    if (sp.channelParallel) slower *= impl.channelCompute;
    fwd[i] = lt.forward * slower;
    bwdData[i] = lt.backwardData * slower;
    bwdWeight[i] = lt.backwardWeight * slower;
    double layerComm = 0;
    if (sp.spatial) {
      const graph::TensorShape& x = layer.inputs.empty() ? layer.output : m.layer(layer.inputs.front()).output;
      const double halo = impl.halo * haloSeconds(in, g, layer, x, samples, neighbours, &maxHaloBytes);
      t.halo += halo * micro;
      layerComm += halo;
    }
    const double inBytes = inElems * samples * delta;
    const double outBytes = profile.outputElements * samples * delta;
    double collectives = 0;
    if (sp.gatherAtSplitPoint) collectives += impl.spatialGather * spatialGroup.allgather(inBytes);
    if (sp.gatherInput) {
      double filterSeconds = filterGroup.allgather(inBytes);
      if (profile.weighted) filterSeconds += filterGroup.reduceScatter(inBytes);
      collectives += impl.filterCollectives * filterSeconds;
    }
    if (sp.channelParallel) {
      double channelSeconds = channelAllreduce(outBytes).seconds;
      channelSeconds += channelGroup.allgather(inBytes);
      // Slicing the input's channels and gathering the gradient's are layout copies.
      channelSeconds += 4 * inBytes / g.channel / cl.device.memoryBandwidth;
      collectives += impl.channelCollectives * channelSeconds;
    }
    t.layerCollectives += collectives * micro;
    layerComm += collectives;
    comm[i] = layerComm;
    bwd[i] = bwdData[i] + bwdWeight[i];
    const double channelShare = profile.weighted ? sp.share.inputChannels * sp.share.outputChannels : 1.0;
    localParams += profile.params * channelShare;
    // Activations kept for backward: the local output, and the gathered input of a filter layer.
    activations += profile.outputElements * delta * samples * sp.share.spatial * sp.share.outputChannels;
    if (sp.gatherInput) activations += inBytes;
    workspace = std::max(workspace, inBytes * sp.share.inputSpatial + outBytes * sp.share.spatial);
  }

  // Pipeline: balanced stages; each micro-batch passes every stage forward and backward.
  std::vector<int>& stage = scratch.stage;
  double stageParams = localParams;
  double stageActivations = activations;
  if (g.pipeline > 1) {
    std::vector<double> total(m.size());
    for (int i = 0; i < m.size(); ++i) total[i] = fwd[i] + bwd[i] + comm[i];
    stage = partitionStages(total, g.pipeline);
    std::vector<double> sf(g.pipeline), sb(g.pipeline), sc(g.pipeline), sp(g.pipeline), sa(g.pipeline);
    std::vector<double> boundary(g.pipeline, 0);
    for (int i = 0; i < m.size(); ++i) {
      const graph::Layer& layer = m.layer(i);
      sf[stage[i]] += fwd[i];
      sb[stage[i]] += bwd[i];
      sc[stage[i]] += comm[i];
      const double share = detail::isWeighted(layer) ? splits[i].share.inputChannels * splits[i].share.outputChannels : 1.0;
      sp[stage[i]] += static_cast<double>(layer.counts.params) * share;
      sa[stage[i]] += static_cast<double>(layer.counts.activationBytes) * samples * splits[i].share.spatial *
                      splits[i].share.outputChannels;
      for (int input : layer.inputs) {
        if (stage[input] != stage[i]) boundary[stage[input]] += static_cast<double>(m.layer(input).counts.activationBytes) * samples;
      }
    }
    int slowest = 0;
    for (int st = 1; st < g.pipeline; ++st) {
      if (sf[st] + sb[st] + sc[st] > sf[slowest] + sb[slowest] + sc[slowest]) slowest = st;
    }
    const double maxBoundary = *std::max_element(boundary.begin(), boundary.end());
    const double p2p = 2 * cost::pointToPointOn(cl, g.stridePipeline(), maxBoundary, k).seconds;
    const double stageTime = sf[slowest] + sb[slowest] + sc[slowest] + p2p;
    double bwdLayers = 0;
    double bwdDataSum = 0;
    for (int i = 0; i < m.size(); ++i) {
      if (stage[i] != slowest) continue;
      bwdLayers += bwd[i];
      bwdDataSum += bwdData[i];
    }
    const double dataShare = bwdLayers > 0 ? bwdDataSum / bwdLayers : 1;
    t.forward = micro * sf[slowest];
    t.backwardData = micro * sb[slowest] * dataShare;
    t.backwardWeight = micro * sb[slowest] * (1 - dataShare);
    t.halo = 0;
    t.layerCollectives = micro * sc[slowest];
    t.pipelineP2P = (micro + g.pipeline - 1) * p2p;
    t.bubble = (g.pipeline - 1) * (stageTime - p2p);
    stageParams = sp[slowest];
    const int inFlight = s.schedule == PipelineSchedule::kGPipe ? micro : std::min(micro, g.pipeline);
    stageActivations = sa[slowest];
    e.memory.pipelineInFlight = sa[slowest] * (inFlight - 1);
  } else {
    for (int i = 0; i < m.size(); ++i) {
      t.forward += fwd[i];
      t.backwardData += bwdData[i];
      t.backwardWeight += bwdWeight[i];
    }
  }

  // The optimizer reads weights, gradients and states and writes weights and states.
  const double weightBytes = stageParams * 4;
  const double optimizerBytes = weightBytes * in.optimizerStatesPerWeight;
  t.update = (3 * weightBytes + 2 * optimizerBytes) / cl.device.memoryBandwidth + cl.device.callOverhead;
  e.replicaSeconds = t.iteration();

  // Gradients: reduced across the ranks that share the weights, overlapping backward.
  const bool replicated = static_cast<std::int64_t>(g.data) * g.spatial() > 1;
  if (replicated && stageParams > 0) {
    std::vector<GradientSource>& sources = scratch.sources;
    double elapsed = 0;
    // Layer collectives run half in forward, half in backward: both passes' wall times hold them.
    double forwardBefore = 0;  // the forward time before layer i, walking backward
    for (int i = 0; i < m.size(); ++i) forwardBefore += fwd[i] + comm[i] / 2;
    const int lastStage = g.pipeline > 1 ? *std::max_element(stage.begin(), stage.end()) : 0;
    int tensors = 0;
    for (int i = m.size() - 1; i >= 0; --i) {
      elapsed += bwd[i] + comm[i] / 2;
      forwardBefore -= fwd[i] + comm[i] / 2;
      const cost::LayerProfile& profile = profiles[i];
      if (profile.params <= 0 || (g.pipeline > 1 && stage[i] != lastStage)) continue;
      const double share = profile.weighted ? splits[i].share.inputChannels * splits[i].share.outputChannels : 1.0;
      sources.push_back({elapsed, profile.params * share * 4, std::max(0.0, forwardBefore)});
      ++tensors;
    }
    CommSettings settings = s.comm;
    if (g.pipeline > 1) {
      settings.overlap = false;  // reduced after the last micro-batch
      settings.priority = false;
    }
    const double negotiation = negotiationSeconds(in, g, settings, tensors, k);
    std::string_view algorithm;
    const GradientReduction reduction(in, g, settings, k);
    auto reduce = [&](double bytes) { return reduction(bytes, &algorithm); };
    // When the last gradient is ready: a pipeline's after its last micro-batch's backward.
    const double backwardWall = g.pipeline > 1 ? t.backwardData + t.backwardWeight : elapsed;
    const GradientResult r = scheduleGradients(sources, backwardWall, settings, reduce, negotiation);
    t.gradientAllreduce = r.total;
    t.gradientExposed = r.exposed;
    t.negotiation = 0;  // negotiation latency is inside the schedule
    e.allreduceAlgorithm = algorithm.empty() ? "none" : std::string(algorithm);
  }

  MemoryBreakdown& mem = e.memory;
  mem.weights = weightBytes;
  mem.gradients = weightBytes;
  mem.optimizer = optimizerBytes;
  mem.activations = stageActivations;
  mem.halo = maxHaloBytes;
  mem.fusion = replicated && s.comm.grouping == Grouping::kFusion ? std::min(s.comm.fusionBytes, weightBytes) : 0;
  mem.workspace = workspace;
  return e;
}

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
  if (g.filter == 1 && g.channel == 1 && g.pipeline == 1) return "";  // the layer limits below cannot bind
  bool first = true;
  int computeLayers = 0;
  for (const graph::Layer& layer : m.layers()) {
    if (layer.counts.forwardFlops > 0) ++computeLayers;
    if (!detail::isWeighted(layer)) continue;
    const std::int64_t filters = layer.output.channels;
    if (g.filter > filters) {
      return fmt::format("filter split over {} exceeds the {} filters of layer '{}'", g.filter, filters, layer.name);
    }
    const std::int64_t channels = layer.inputs.empty() ? 0 : m.layer(layer.inputs.front()).output.channels;
    if (!first && g.channel > channels) {
      return fmt::format("channel split over {} exceeds the {} input channels of layer '{}'", g.channel, channels,
                         layer.name);
    }
    first = false;
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

double serialIterationSeconds(const PlanInputs& in, double samples) {
  if (const auto it = in.serialSeconds.find(samples); it != in.serialSeconds.end()) return it->second;
  Strategy serial{"serial", Grid{}, std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(samples)))};
  const double seconds = evaluate(in, serial, Congestion::kExpected).time.iteration();
  in.serialSeconds.emplace(samples, seconds);
  return seconds;
}

Estimate estimate(const PlanInputs& in, const Strategy& s, bool withRange) {
  Estimate e;
  e.strategy = s;
  e.infeasibleReason = limitViolation(in, s);
  e.feasible = e.infeasibleReason.empty();
  e.memoryCapacity = in.cluster->device.memoryBytes;
  if (!e.feasible) {
    e.bottleneck = bottleneckOf(e, in);
    return e;
  }
  const Evaluation expected = evaluate(in, s, in.congestion);
  e.time = expected.time;
  e.memory = expected.memory;
  e.allreduceAlgorithm = expected.allreduceAlgorithm;
  e.fits = e.memory.total() <= e.memoryCapacity;
  if (withRange) {
    e.iterationOptimistic = evaluate(in, s, Congestion::kOptimistic).time.iteration();
    e.iterationCongested = evaluate(in, s, Congestion::kCongested).time.iteration();
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
  const double serial = serialIterationSeconds(in, perDevice);
  e.scalingEfficiency = e.samplesPerSecond / (devices * perDevice / serial);
  e.statisticalEfficiency = in.statistics.epochs(perDevice) / e.epochs;
  // One replica (its model-parallel devices) against one device, per sample.
  const double replicaSamples = batch / s.grid.data;
  e.modelParallelSpeedup = (serial / perDevice) / (expected.replicaSeconds / replicaSamples);
  e.bottleneck = bottleneckOf(e, in);
  return e;
}

}  // namespace paraxis::plan
