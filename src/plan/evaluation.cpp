#include "plan/evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>

#include "plan/op_graph.hpp"
#include "plan/pipeline_partition.hpp"
#include "plan/pipeline_schedule.hpp"
#include "plan/placement.hpp"
#include "plan/time_sharing_walk.hpp"

namespace paraxis::plan::detail {
namespace {

using cost::Congestion;
using cost::Placement;
constexpr hw::CommPath kGradient = hw::CommPath::kGradientAllreduce;

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
  GradientReduction(const PlanInputs& in, const Grid& g, const GradientComm& c, Congestion k)
      : settings_(c),
        memoryBandwidth_(in.cluster->device.memoryBandwidth),
        conversion_(in.cluster->implementation.wireConversion),
        forced_(c.algorithm == GradientAlgorithm::kAuto ? std::string() : gradientAlgorithmName(c.algorithm)),
        slower_(in.cluster->implementation.gradientAllreduce),
        contiguous_(g.pipeline * g.channel * g.filter == 1),
        first_(*in.cluster,
               {contiguous_ ? static_cast<std::int64_t>(g.data) * g.spatial() : g.spatial(), 1, kGradient}, k),
        second_(*in.cluster, contiguous_ ? Placement{} : Placement{g.data, g.strideData(), kGradient}, k) {}

  // `algorithm`, when given, is set to the algorithm of the part that takes longest.
  double operator()(double bytes, std::string_view* algorithm) const {
    const double wire = settings_.wireBytes(bytes);
    double seconds = 0;
    double longest = -1;
    for (const cost::PlacedAllreduce* part : {&first_, &second_}) {
      const cost::CollectiveEstimate e = forced_.empty() ? (*part)(wire) : (*part)(wire, forced_);
      seconds += e.seconds;
      if (algorithm != nullptr && e.algorithm != "none" && e.seconds > longest) *algorithm = e.algorithm;
      longest = std::max(longest, e.seconds);
    }
    seconds += conversionSeconds(bytes);
    if (settings_.sparse()) {
      // Chunk norms agreed by a small allreduce, then selection and the residual update.
      const double chunks = std::ceil(bytes / (4.0 * 1024));
      const cost::PlacedAllreduce& last = contiguous_ ? first_ : second_;
      seconds += last(chunks * 4).seconds + 3 * bytes / memoryBandwidth_;
    }
    return seconds * slower_;
  }

 private:
  // The allreduce's casts to the wire type and back: at the measured rate where the cluster
  // has one, else two passes at memory bandwidth.
  double conversionSeconds(double bytes) const {
    if (settings_.wire != WireFormat::kF16 && settings_.wire != WireFormat::kBF16) return 0;
    const double measured = settings_.wire == WireFormat::kF16 ? conversion_.f16 : conversion_.bf16;
    return measured > 0 ? bytes / measured : 2 * bytes / memoryBandwidth_;
  }

  GradientComm settings_;
  double memoryBandwidth_;
  hw::WireConversion conversion_;
  std::string forced_;  // the algorithm the settings force, or empty (the fastest)
  double slower_;
  bool contiguous_;
  cost::PlacedAllreduce first_, second_;
};

double negotiationSeconds(const PlanInputs& in, const Grid& g, const GradientComm& c, int tensors, Congestion k) {
  const Placement all{static_cast<std::int64_t>(g.data) * g.spatial(), 1, kGradient};
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

// The groups the per-layer collectives run on, placed once per evaluation.
struct PlacedGroups {
  // The filter rule's group: the filter axis, or a filter head's spatial ranks.
  static cost::Placement filterGroup(const Grid& g) {
    return g.filterHead ? cost::Placement{g.spatial(), 1} : cost::Placement{g.filter, g.strideFilter()};
  }
  PlacedGroups(const hw::Cluster& cl, const Grid& g, Congestion k)
      : spatial(cl, {g.spatial(), 1}, k),
        filter(cl, filterGroup(g), k),
        channel(cl, {g.channel, g.strideChannel()}, k),
        spatialAllreduce(cl, {g.spatial(), 1}, k),
        channelAllreduce(cl, {g.channel, g.strideChannel()}, k),
        filterAllreduce(cl, filterGroup(g), k),
        neighbours{{cl, {g.depth > 1 ? 2 : 1, g.strideDepth(), kNeighbour}, k},
                   {cl, {g.height > 1 ? 2 : 1, g.strideHeight(), kNeighbour}, k},
                   {cl, {g.width > 1 ? 2 : 1, g.strideWidth(), kNeighbour}, k}} {}
  static constexpr hw::CommPath kNeighbour = hw::CommPath::kPointToPoint;
  cost::PlacedGroup spatial, filter, channel;
  cost::PlacedAllreduce spatialAllreduce, channelAllreduce, filterAllreduce;
  cost::PlacedGroup neighbours[3];
};

// One strategy under one congestion level. The pieces run in order: layer terms, then the
// replica's totals (pipelined or not), the update, the gradient reduction and the memory.
class Evaluator {
 public:
  Evaluator(const PlanInputs& in, const std::vector<cost::LayerProfile>& profiles, LayerArrays& arrays,
            const Strategy& s, Congestion k)
      : in_(in),
        model_(*in.model),
        cluster_(*in.cluster),
        profiles_(profiles),
        a_(arrays),
        s_(s),
        grid_(s.grid),
        k_(k),
        micro_(grid_.pipeline > 1 ? std::max(1, s.microBatches) : 1),
        samples_(static_cast<double>(s.globalBatch) / grid_.data / micro_),
        rates_(cluster_.device, cluster_.device.peak(in.dtype)),
        groups_(cluster_, grid_, k),
        sharing_(cluster_.sharingFactor(grid_.total())),
        timeSharing_(cluster_.timeSharingAt(grid_.total())),
        pricesResidence_(cluster_.device.weightsMayStayResident()) {}

  Evaluation run() {
    a_.reset(model_.size());
    splitLayers(model_, grid_, a_.splits);
    for (int i = 0; i < model_.size(); ++i) layerTerms(i);
    if (pricesResidence_) priceResidentWeights();
    if (!timeSharing_.isIdentity()) timeShareCompute();
    if (!grid_.ranksRunDifferentLayers()) skewWaits();
    if (grid_.pipeline > 1) {
      pipelineStages();
    } else if (grid_.place > 1) {
      placedTotals();
    } else {
      replicaTotals();
    }
    update();
    e_.replicaSeconds = e_.time.iteration();
    gradientReduction();
    memory();
    return e_;
  }

 private:
  // Compute of layer i with the implementation's factor for how it is split.
  void layerCompute(int i, const LayerSplit& sp) {
    cost::LocalShare share = sp.share;
    share.samples = samples_;
    share.weightsResident = resident_;
    const cost::LayerTimes lt = cost::layerTimes(rates_, profiles_[i], share, model_.bytesPerElement(), logs_);
    const hw::Implementation& impl = cluster_.implementation;
    double slower = sharing_ * (sp.spatial || sp.channelSplit || sp.channelParallel ? 1 : impl.compute);
    if (sp.spatial) slower *= impl.spatialCompute;
    if (sp.channelSplit) slower *= impl.filterCompute;
    if (sp.channelParallel) slower *= impl.channelCompute;
    a_.forward[i] = lt.forward * slower;
    a_.backwardData[i] = lt.backwardData * slower;
    a_.backwardWeight[i] = lt.backwardWeight * slower;
    a_.backward[i] = a_.backwardData[i] + a_.backwardWeight[i];
  }

  // Halo exchange of a spatially split layer, one micro-batch's pass.
  double layerHalo(int i, const LayerSplit& sp) {
    if (!sp.spatial) return 0;
    const graph::Layer& layer = model_.layer(i);
    const graph::TensorShape& x = layer.inputs.empty() ? layer.output : model_.layer(layer.inputs.front()).output;
    const double halo =
        cluster_.implementation.halo * haloSeconds(in_, grid_, layer, x, samples_, groups_.neighbours, &haloBufferBytes_);
    e_.time.halo += halo * micro_;
    return halo;
  }

  // Layer i's moves (layer_split.hpp): spatial gathers; filter-axis gathers of slices, allreduces of
  // paired outputs and of whole inputs' gradients; channel-axis allreduces and gradient gathers.
  // The gather where the spatial split ends is a redistribution, a shuffle (as train times it,
  // parallel/spatial_layers.cpp); the rest are layer collectives.
  double layerCollectives(int i, const LayerSplit& sp) {
    const hw::Implementation& impl = cluster_.implementation;
    const cost::LayerProfile& profile = profiles_[i];
    const double inBytes = profile.inputElements * samples_ * model_.bytesPerElement();
    const double outBytes = profile.outputElements * samples_ * model_.bytesPerElement();
    const double gather = sp.gatherAtSplitPoint ? impl.spatialGather * groups_.spatial.allgather(inBytes) : 0;
    e_.time.shuffle += gather * micro_;
    double collectives = 0;
    if (sp.spatial && profile.memoryKind == static_cast<int>(hw::MemoryKind::kNormalization)) {
      // A split batch norm's statistics over the spatial group (parallel/spatial_layers.cpp):
      // the sums of x, x^2 and the count per channel (f64) forward, of the weight's and bias's
      // gradients backward. Small, but each is a synchronisation.
      const double channels = profile.params / 2;
      collectives += groups_.spatialAllreduce(3 * 8 * channels).seconds + groups_.spatialAllreduce(2 * 8 * channels).seconds;
    }
    if (sp.gatherInput) collectives += impl.filterCollectives * groups_.filter.allgather(inBytes);
    if (sp.completeInputGradient) collectives += impl.filterCollectives * groups_.filterAllreduce(inBytes).seconds;
    if (sp.channelParallel && !sp.sliceInput) collectives += impl.filterCollectives * groups_.filterAllreduce(outBytes).seconds;
    if (sp.sliceInput) {
      double channelSeconds = groups_.channelAllreduce(outBytes).seconds;
      channelSeconds += groups_.channel.allgather(inBytes);
      // Slicing the input's channels and gathering the gradient's are layout copies.
      channelSeconds += 4 * inBytes / grid_.channel / cluster_.device.memoryBandwidth;
      collectives += impl.channelCollectives * channelSeconds;
    }
    e_.time.layerCollectives += collectives * micro_;
    return gather + collectives;
  }

  // Weights, activations kept for backward, and the largest working set of layer i.
  void layerMemory(int i, const LayerSplit& sp) {
    const cost::LayerProfile& profile = profiles_[i];
    const int delta = model_.bytesPerElement();
    const double inBytes = profile.inputElements * samples_ * delta;
    const double outBytes = profile.outputElements * samples_ * delta;
    const double channelShare = profile.weighted ? sp.share.inputChannels * sp.share.outputChannels : 1.0;
    localParams_ += profile.params * channelShare;
    // The local output, and the gathered input of a filter layer.
    activations_ += profile.outputElements * delta * samples_ * sp.share.spatial * sp.share.outputChannels;
    if (sp.gatherInput) activations_ += inBytes;
    // The input as the layer reads it (its block, its channel slice) and its local output.
    workspace_ = std::max(workspace_, inBytes * sp.share.inputSpatial * sp.share.inputChannels +
                                          outBytes * sp.share.spatial * sp.share.outputChannels);
    // A native convolution's column buffer passes through the cache too (priceResidentWeights).
    if (pricesResidence_ && profile.kernel >= 0) {
      cost::LocalShare share = sp.share;
      share.samples = samples_;
      columns_ += cost::nativeColumnBytes(profile, share, delta);
    }
  }

  // Kernels whose few-rows time is their weights streaming (hw::KernelCurves::residentRowsShare)
  // stream them from the cache as far as the rank's working set between two uses of them (one
  // pass: a pipeline's next micro-batch) leaves them there. Priced again once layerMemory has
  // summed the rank's weights and activations; a pipeline's or placement's stages are cut
  // later, so the rank's whole share of the model stands for its stage's (LeNet's fits either way).
  void priceResidentWeights() {
    const double workingSet = cost::workingSetBytes(localParams_ * model_.bytesPerElement(), in_.optimizerStatesPerWeight,
                                                    activations_, columns_);
    resident_ = cluster_.device.residentShare(workingSet);
    if (resident_ <= 0) return;
    for (int i = 0; i < model_.size(); ++i) {
      const int kernel = profiles_[i].kernel;
      if (kernel >= 0 && cluster_.device.kernels[kernel].residentRowsShare < 1) layerCompute(i, a_.splits[i]);
    }
  }

  // Where the ranks time-share the cores, each span of compute between two blocking
  // synchronisations is stretched at its length (time_sharing_walk.hpp).
  void timeShareCompute() {
    const bool staged = grid_.ranksRunDifferentLayers();
    const int firstAwaited = staged || !reducingBeside(false) ? noGroupAwaits(a_, model_.size())
                                                              : markGroupAwaits(profiles_, s_.comm, a_);
    const double stageShare = staged ? 1 / (static_cast<double>(grid_.pipeline) * grid_.place) : 1.0;
    updateSharing_ = stretchSpans(timeSharing_, staged, stageShare, firstAwaited, a_);
  }

  void layerTerms(int i) {
    const LayerSplit& sp = a_.splits[i];
    layerCompute(i, sp);
    a_.halo[i] = layerHalo(i, sp);
    a_.communication[i] = a_.halo[i] + layerCollectives(i, sp);
    layerMemory(i, sp);
  }

  // Ranks drift apart between synchronisations (hw::Implementation::skew): each blocking one (a
  // layer's halo exchange or collectives) waits for the slowest, `skew` of the compute since
  // the previous one, forward through the loss and back. The compute after the last one waits
  // at the gradient reduction (a data-parallel step's whole compute), or without one at the
  // next step's first synchronisation. Each of them also waits `syncWait` whatever the compute
  // before it, or `syncWaitBeside` where the gradient engine reduces beside it, where the ranks
  // also drift at `skewBeside` over the share of the compute the reductions are in flight. A
  // pipeline's or placement's stages wait on each other anyway (their bubble).
  void skewWaits() {
    const hw::Implementation& impl = cluster_.implementation;
    const double growth = skewGrowth(grid_.total());
    const double skew = impl.skew * growth;
    const double syncWait = impl.syncWait * growth;
    const bool measuredBeside = impl.syncWaitBeside > 0 || impl.skewBeside > 0;
    const bool forwardBeside = measuredBeside && reducingBeside(false);
    const bool backwardBeside = measuredBeside && reducingBeside(true);
    // Priced only where the engine reduces beside (the presets have no such wait): the share
    // prices every gradient's reduction, which the oracle's hot loop need not do for nothing.
    const double share = forwardBeside || backwardBeside ? besideShare() : 0;
    const double besideWait = impl.syncWaitBeside * growth * share;
    const double besideSkew = skew + (impl.skewWhileReducing() * growth - skew) * share;
    const double backwardWait = backwardBeside ? besideWait : syncWait;
    double drift = 0;  // since the previous synchronisation
    skewTail_ = 0;
    besideWaits_ = 0;
    if (skew <= 0 && besideSkew <= 0 && syncWait <= 0 && besideWait <= 0) return;
    // A split layer's synchronisation meets its group's ranks (channel x filter x spatial), the
    // gradient reduction every rank: the slowest of fewer lags less. lenet, data=2 x filter=2
    // on the 2x2 netns hosts: its layer collectives waited 8.3 ms a step, predicted 18.6 ms at
    // the 4 ranks' sqrt(log2 4).
    const double layerShare = skewGrowth(static_cast<std::int64_t>(grid_.channel) * grid_.filter * grid_.spatial()) / growth;
    int first = -1;
    auto pass = [&](int i, double compute, bool beside) {
      drift += compute * (beside ? besideSkew : skew);
      if (a_.communication[i] <= 0) return;
      waitAt(i, layerShare * ((beside ? besideWait : syncWait) + drift));
      if (beside) besideWaits_ += layerShare * besideWait;
      if (first < 0) first = i;
      drift = 0;
    };
    for (int i = 0; i < model_.size(); ++i) pass(i, a_.forward[i], forwardBeside);
    for (int i = model_.size() - 1; i >= 0; --i) pass(i, a_.backward[i], backwardBeside);
    if (static_cast<std::int64_t>(grid_.data) * grid_.spatial() == 1 && first >= 0) {
      waitAt(first, drift);  // no gradient reduction: the next step's first synchronisation waits
    } else {
      skewTail_ = backwardWait + drift;  // the gradient reduction's wait
    }
  }

  // The share of a step's synchronisations that meet reductions in flight: the engine's span
  // over the step's compute. From backward's first gradients its reductions move at their pace
  // beside backward (chunk by chunk under forward priority: calibrate's `overlap.chunked`, a few
  // per cent of their speed), what is left after backward at one call's pace beside the next
  // forward (`overlap.hidden`). At `hidden` throughout (m27), resnet18@64 at h=2 had its
  // reductions in flight 9 % of its step where its traces show 73-84 %, and every h=2 row of
  // the m46 and m47 matrices came out 6-25 % short; small-cnn@32 at h=2, whose reductions end
  // within backward, 4.8 ms of a 10.4 ms step (this span: 47 %).
  double besideShare() const {
    double compute = 0, backward = 0;
    for (int i = 0; i < model_.size(); ++i) {
      compute += a_.forward[i] + a_.backward[i];
      backward += a_.backward[i];
    }
    const hw::Overlap& overlap = cluster_.implementation.overlap;
    const double duringBackward = progressBesideBackward(overlap, s_.comm);
    if (compute <= 0 || localParams_ <= 0 || duringBackward <= 0 || overlap.hidden <= 0) return 1;
    const GradientReduction reduction(in_, grid_, s_.comm, k_);
    const double alone = reduction(localParams_ * 4, nullptr);
    const double movedInBackward = backward * duringBackward;
    const double span =
        alone <= movedInBackward ? alone / duringBackward : backward + (alone - movedInBackward) / overlap.hidden;
    return std::min(1.0, span / compute);
  }

  // Whether the gradient engine's reductions are in flight beside a pass's synchronisations: a
  // replicated step that overlaps them reduces from backward's first gradients on, under
  // forward priority into the next step's forward (train's traces: resnet18@64 at h=2 had
  // them in flight 73-84 ms of a 90-100 ms step).
  bool reducingBeside(bool backward) const {
    const bool replicated = static_cast<std::int64_t>(grid_.data) * grid_.spatial() > 1;
    if (!replicated || !s_.comm.overlap || grid_.ranksRunDifferentLayers()) return false;
    return backward || s_.comm.order == ReduceOrder::kForwardPriority;
  }

  // Layer i's synchronisation (its halo exchange, else its gather or collectives) waits `seconds` more.
  void waitAt(int i, double seconds) {
    a_.communication[i] += seconds;
    double& term = a_.halo[i] > 0                    ? e_.time.halo
                   : a_.splits[i].gatherAtSplitPoint ? e_.time.shuffle
                                                     : e_.time.layerCollectives;
    term += seconds;
  }

  // How much further the slowest of `ranks` falls behind than the slower of two: the expected
  // maximum of that many normal deviations over two's, about sqrt(log2(ranks)).
  static double skewGrowth(std::int64_t ranks) {
    return ranks < 2 ? 0.0 : std::sqrt(std::log2(static_cast<double>(ranks)));
  }

  void replicaTotals() {
    TimeBreakdown& t = e_.time;
    for (int i = 0; i < model_.size(); ++i) {
      t.forward += a_.forward[i];
      t.backwardData += a_.backwardData[i];
      t.backwardWeight += a_.backwardWeight[i];
    }
    stageParams_ = localParams_;
    stageActivations_ = activations_;
  }

  struct StageSums {
    std::vector<double> forward, backward, communication, params, activations, boundary;
    explicit StageSums(int stages)
        : forward(stages), backward(stages), communication(stages), params(stages), activations(stages),
          boundary(stages, 0) {}
    double busy(int stage) const { return forward[stage] + backward[stage] + communication[stage]; }
  };

  // Per stage (or placed device) its sums; `partition`: first cut the layers into balanced
  // pipeline stages (otherwise a_.stage holds each layer's device already).
  StageSums sumStages(bool partition = true) {
    if (partition) {
      std::vector<double> total(model_.size());
      for (int i = 0; i < model_.size(); ++i) total[i] = a_.forward[i] + a_.backward[i] + a_.communication[i];
      a_.stage = partitionStages(total, grid_.pipeline);
    }
    StageSums sums(partition ? grid_.pipeline : grid_.place);
    for (int i = 0; i < model_.size(); ++i) {
      const graph::Layer& layer = model_.layer(i);
      const LayerSplit& sp = a_.splits[i];
      const int st = a_.stage[i];
      sums.forward[st] += a_.forward[i];
      sums.backward[st] += a_.backward[i];
      sums.communication[st] += a_.communication[i];
      const double share = isWeighted(layer) ? sp.share.inputChannels * sp.share.outputChannels : 1.0;
      sums.params[st] += static_cast<double>(layer.counts.params) * share;
      sums.activations[st] +=
          static_cast<double>(layer.counts.activationBytes) * samples_ * sp.share.spatial * sp.share.outputChannels;
      for (int input : layer.inputs) {
        if (a_.stage[input] != st) {
          sums.boundary[a_.stage[input]] += static_cast<double>(model_.layer(input).counts.activationBytes) * samples_;
        }
      }
    }
    return sums;
  }

  // Balanced stages; each micro-batch passes every stage forward and backward. The slowest
  // stage's passes are the work; the bubble is the rest of the schedule's makespan (its
  // pipelineSteps played out with each stage's pass times): (p - 1) of its steps when the
  // stages balance, less when they do not (cosmoflow's 3-D layers cut unevenly, and 1F1B hides
  // the fast second stage's passes under the first's: measured 923 ms on 2 stages of 64^3, 1260
  // predicted with (p - 1) of the slowest stage's steps). A stage's layer collectives count
  // half to each pass.
  void pipelineStages() {
    const StageSums sums = sumStages();
    int slowest = 0;
    for (int st = 1; st < grid_.pipeline; ++st) {
      if (sums.busy(st) > sums.busy(slowest)) slowest = st;
    }
    const double maxBoundary = *std::max_element(sums.boundary.begin(), sums.boundary.end());
    const double p2p = 2 * cost::pointToPointOn(cluster_, grid_.stridePipeline(), maxBoundary, k_).seconds;
    double backwardLayers = 0;
    double backwardData = 0;
    for (int i = 0; i < model_.size(); ++i) {
      if (a_.stage[i] != slowest) continue;
      backwardLayers += a_.backward[i];
      backwardData += a_.backwardData[i];
    }
    const double dataShare = backwardLayers > 0 ? backwardData / backwardLayers : 1;
    TimeBreakdown& t = e_.time;
    t.forward = micro_ * sums.forward[slowest];
    t.backwardData = micro_ * sums.backward[slowest] * dataShare;
    t.backwardWeight = micro_ * sums.backward[slowest] * (1 - dataShare);
    t.halo = t.shuffle = 0;
    t.layerCollectives = micro_ * sums.communication[slowest];
    t.pipelineP2P = (micro_ + grid_.pipeline - 1) * p2p;
    std::vector<double> forward(grid_.pipeline), backward(grid_.pipeline);
    for (int st = 0; st < grid_.pipeline; ++st) {
      forward[st] = sums.forward[st] + sums.communication[st] / 2;
      backward[st] = sums.backward[st] + sums.communication[st] / 2;
    }
    // The step ends with the stage whose last pass and update end last: the first stage's update
    // follows the step's last backward, a later stage's runs beside the passes still going back.
    // The update the step pays is what sticks out beyond the last pass.
    const std::vector<double> ends = pipelineStageEnds(s_.schedule, forward, backward, micro_);
    const double makespan = *std::max_element(ends.begin(), ends.end());
    double step = makespan;
    for (int st = 0; st < grid_.pipeline; ++st) step = std::max(step, ends[st] + updateSeconds(sums.params[st]));
    pipelineUpdate_ = step - makespan;
    t.bubble = std::max(0.0, makespan - micro_ * sums.busy(slowest));
    t.pipelineP2P += handoffWaits(forward, backward, makespan);
    slowestStage_ = slowest;
    stageParams_ = sums.params[slowest];
    chooseReducingStage(sums.params);
    stageActivations_ = sums.activations[slowest];
    const int inFlight = s_.schedule == PipelineSchedule::kGPipe ? micro_ : std::min(micro_, grid_.pipeline);
    e_.memory.pipelineInFlight = sums.activations[slowest] * (inFlight - 1);
  }

  // What the handoffs' waits (hw::Implementation::handoffWait) add to the schedule's makespan:
  // the schedule played again with each pass waiting that long after its input's pass ends.
  // lenet, data=2 x pipeline=2 on the 2x2 netns hosts (4 ranks on 2 cores): a micro-batch every
  // 2.4-3.6 ms where its two stages' passes take 1.4 ms, the step 47 ms measured against 37
  // predicted without the waits; calibrate's blocking waits there read 1.65 ms.
  double handoffWaits(const std::vector<double>& forward, const std::vector<double>& backward, double makespan) const {
    const double wait = cluster_.implementation.handoffWait;
    if (wait <= 0) return 0;
    const std::vector<double> ends = pipelineStageEnds(s_.schedule, forward, backward, micro_, wait);
    return std::max(0.0, *std::max_element(ends.begin(), ends.end()) - makespan);
  }

  // Every stage reduces its own gradients over the replicas, all at once after the pass; the
  // stage with the most weights finishes last and sets the step. Where f stages' groups share
  // a link (groupLink charges each its whole volume at a 1/f share), the lighter ones finish
  // early and leave the link to it: it ends when their bytes have crossed too, as if each
  // carried the stages' mean; alone on its link it carries its own. lenet, data=2 x pipeline=2
  // on two netns hosts at 1 Gbit/s: stage 1 reduces 3.2 MB, stage 0 0.2 MB; stage 1's took
  // 25-35 ms, where the compute-slowest stage 0's predicted 3.3 ms.
  void chooseReducingStage(const std::vector<double>& params) {
    reducingStage_ = static_cast<int>(std::max_element(params.begin(), params.end()) - params.begin());
    const double heaviest = params[reducingStage_];
    reducingScale_ = 1;
    if (heaviest <= 0) return;
    const double mean = std::accumulate(params.begin(), params.end(), 0.0) / static_cast<double>(params.size());
    const double sharing = cost::linkSharing(cluster_, {grid_.data, grid_.strideData(), kGradient});
    reducingScale_ = std::max(heaviest / sharing, mean) / heaviest;
  }

  // A placement (DLPlacer): the replica's units on grid_.place devices by list scheduling (the
  // exact program is `paraxis place`'s, too slow for this loop). The busiest device sets the
  // compute terms; its idle time, waiting for the others and for transfers, is the bubble.
  // Each device reduces its own units' gradients over the replicas, as a pipeline stage does.
  void placedTotals() {
    // A device waiting for another's tensor gives its core away as a pipeline stage does
    // (hw::Implementation::handoffWait): each transfer between devices takes that much longer.
    const auto transfer = [this](double bytes) {
      return cost::pointToPointOn(cluster_, grid_.stridePlace(), bytes, k_).seconds + cluster_.implementation.handoffWait;
    };
    OpGraph g = layerGraph(model_, a_.forward, a_.backward, samples_, transfer, in_.optimizerStatesPerWeight);
    g.receiverCopies = cluster_.device.receivesByCopy;
    const OpPlacement p = listSchedule(g, {grid_.place, 0});
    for (int u = 0; u < g.units(); ++u) {
      for (int layer : g.unitLayers[u]) a_.stage[layer] = p.device[u];
    }
    const StageSums sums = sumStages(false);
    int busiest = 0;
    for (int d = 1; d < grid_.place; ++d) {
      if (sums.busy(d) > sums.busy(busiest)) busiest = d;
    }
    TimeBreakdown& t = e_.time;
    for (int i = 0; i < model_.size(); ++i) {
      if (a_.stage[i] != busiest) continue;
      t.forward += a_.forward[i];
      t.backwardData += a_.backwardData[i];
      t.backwardWeight += a_.backwardWeight[i];
    }
    t.bubble = std::max(0.0, p.makespan - sums.busy(busiest));
    slowestStage_ = busiest;
    stageParams_ = sums.params[busiest];
    stageActivations_ = sums.activations[busiest];
  }

  // The optimizer reads weights, gradients and states and writes weights and states; before
  // the next backward the gradients are zeroed, each byte written and first read for ownership
  // (train's zeroing of ResNet-18 64²'s 46.8 MB took 2.1-2.8 ms on 2 ranks here, about twice
  // the bytes at the device's bandwidth).
  double updateSeconds(double params) const {
    const double weightBytes = params * 4;
    const double optimizerBytes = weightBytes * in_.optimizerStatesPerWeight;
    const double zeroingBytes = 2 * weightBytes;
    return sharing_ * updateSharing_ *
           ((3 * weightBytes + 2 * optimizerBytes + zeroingBytes) / cluster_.device.memoryBandwidth +
            cluster_.device.callOverhead);
  }
  void update() { e_.time.update = pipelineUpdate_ >= 0 ? pipelineUpdate_ : updateSeconds(stageParams_); }

  // Layers with weights in backward order, with when backward produces each gradient and when
  // the next forward reaches the layer. A pipeline's: the stage's whose reduction ends last
  // (chooseReducingStage). Returns when the last gradient is ready.
  double collectSources() {
    double elapsed = 0;
    // Layer collectives run half in forward, half in backward: both passes' wall times hold them.
    // A placed device's clock runs through its own layers only (its waits are the bubble).
    const auto counted = [this](int i) { return grid_.place == 1 || a_.stage[i] == slowestStage_; };
    double forwardBefore = 0;  // the forward time before layer i, walking backward
    for (int i = 0; i < model_.size(); ++i) {
      if (counted(i)) forwardBefore += a_.forward[i] + a_.communication[i] / 2;
    }
    for (int i = model_.size() - 1; i >= 0; --i) {
      if (!counted(i)) continue;
      elapsed += a_.backward[i] + a_.communication[i] / 2;
      forwardBefore -= a_.forward[i] + a_.communication[i] / 2;
      const cost::LayerProfile& profile = profiles_[i];
      if (!carriesGradient(profile) || (grid_.pipeline > 1 && a_.stage[i] != reducingStage_)) continue;
      const double bytes =
          localGradientBytes(profile, a_.splits[i]) * (grid_.pipeline > 1 ? reducingScale_ : 1.0);
      a_.sources.push_back({elapsed, bytes, std::max(0.0, forwardBefore)});
    }
    return elapsed;
  }

  // Gradients: reduced across the ranks that share the weights, overlapping backward.
  void gradientReduction() {
    const bool replicated = static_cast<std::int64_t>(grid_.data) * grid_.spatial() > 1;
    if (!replicated || stageParams_ <= 0) return;
    const double lastReady = collectSources();
    GradientComm settings = s_.comm;
    if (grid_.pipeline > 1) {
      settings.overlap = false;  // reduced after the last micro-batch
      settings.order = ReduceOrder::kFifo;
    }
    const int tensors = static_cast<int>(a_.sources.size());
    const double negotiation = negotiationSeconds(in_, grid_, settings, tensors, k_);
    // The algorithm named is the one that carries the largest group (what --emit writes).
    std::string_view algorithm;
    double largest = 0;
    const GradientReduction reduction(in_, grid_, settings, k_);
    auto reduce = [&](double bytes) {
      std::string_view used;
      const double seconds = reduction(bytes, &used);
      if (bytes > largest) algorithm = used, largest = bytes;
      return seconds;
    };
    TimeBreakdown& t = e_.time;
    // When the last gradient is ready: a pipeline's after its last micro-batch's backward.
    const double backwardWall = grid_.pipeline > 1 ? t.backwardData + t.backwardWeight : lastReady;
    const GradientResult r = scheduleGradients(a_.sources, backwardWall, settings, reduce, negotiation,
                                               cluster_.implementation.overlap, a_.schedule);
    // The wait for the slowest rank is exposed time, not the reduction's own work (which the
    // wire's format and the algorithm set).
    t.gradientAllreduce = r.total;
    // While a synchronisation waits beside the reductions they keep moving: their exposed time
    // shrinks by as much, down to none (on the 2x2 netns hosts the wire, not the waits, sets
    // the step: resnet18@64 data=2 x h=2 waited 110 ms at its halo exchanges and batch norms
    // and 292 ms more for its gradients, against 468 ms of traffic).
    const double waited = r.exposed - std::min(r.exposed, besideWaits_);
    // The next forward waits once at each group: for its reduction while that runs on, else
    // for the other ranks at its synchronisation. The reductions' waited-for time holds the
    // awaits up to its length (the 2x2 netns hosts' overlap check, lenet and resnet18@64 data=4
    // with overlap on: the two summed put the exposed time 5-32 % over measured in eight
    // calibrations, this -6..+20 %; the netns matrix's mean error 9.2 -> 6.8 % over fourteen).
    e_.exposedParts = {waited, skewTail_, std::max(0.0, groupAwaits(r.groups) - waited)};
    t.gradientExposed = e_.exposedParts.total();
    t.backwardData += r.computeStretch;  // backward measured on the wall clock includes it
    t.forward += r.forwardStretch;       // the same for the next forward, beside the tail
    syncWaitsBesideReductions(r.computeStretch, reduction, settings, backwardWall);
    t.negotiation = 0;  // negotiation latency is inside the schedule
    e_.allreduceAlgorithm = algorithm.empty() ? "none" : std::string(algorithm);
  }

  // Under forward priority the next forward awaits each group before its layers' update: one
  // more synchronisation beside the engine per group (lenet at h=2 here: three a step), with the
  // ranks that reduce the group, those holding the same weights (data x spatial), as a split
  // layer's collective meets its own group's.
  double groupAwaits(int groups) const {
    const hw::Implementation& impl = cluster_.implementation;
    if (impl.syncWaitBeside <= 0 || !reducingBeside(false)) return 0;  // beside in forward: forward priority
    return groups * impl.syncWaitBeside * skewGrowth(static_cast<std::int64_t>(grid_.data) * grid_.spatial());
  }

  // Reductions in flight stretch every rank's compute, but not at the same moments: a blocking
  // synchronisation in backward waits for the others' stretch since the one before, over at
  // most the time one reduction call spends beside compute (over longer intervals the ranks'
  // stretches even out, as at data parallelism's one synchronisation). resnet18@64 on h=2 here:
  // halo and layer-collective waits of 19-34 ms a step with the reductions beside backward,
  // 4.6-7.5 ms with them after it.
  void syncWaitsBesideReductions(double stretch, const GradientReduction& reduction, const GradientComm& settings,
                                 double backwardSeconds) {
    // A measured wait beside the reductions (skewWaits) already holds what they cost a synchronisation.
    if (stretch <= 0 || backwardSeconds <= 0 || cluster_.implementation.syncWaitBeside > 0) return;
    int syncs = 0;
    for (int i = 0; i < model_.size(); ++i) syncs += a_.communication[i] > 0 ? 1 : 0;
    if (syncs == 0) return;
    // One call: a chunk under forward priority, a fusion bucket otherwise.
    const double unit = settings.order == ReduceOrder::kForwardPriority ? settings.chunkBytes : settings.fusionBytes;
    const double hidden = progressBesideBackward(cluster_.implementation.overlap, settings);
    const double call = hidden > 0 ? reduction(unit, nullptr) / hidden : backwardSeconds;
    const double each = stretch * std::min(1.0, call * syncs / backwardSeconds) / syncs;
    for (int i = 0; i < model_.size(); ++i) {
      if (a_.communication[i] > 0) waitAt(i, each);
    }
  }

  void memory() {
    const bool replicated = static_cast<std::int64_t>(grid_.data) * grid_.spatial() > 1;
    const double weightBytes = stageParams_ * 4;
    MemoryBreakdown& mem = e_.memory;
    mem.weights = weightBytes;
    mem.gradients = weightBytes;
    mem.optimizer = weightBytes * in_.optimizerStatesPerWeight;
    mem.activations = stageActivations_;
    mem.halo = haloBufferBytes_;
    mem.fusion = replicated && s_.comm.grouping == Grouping::kFusion ? std::min(s_.comm.fusionBytes, weightBytes) : 0;
    mem.workspace = workspace_;
  }

  const PlanInputs& in_;
  const graph::Model& model_;
  const hw::Cluster& cluster_;
  const std::vector<cost::LayerProfile>& profiles_;
  LayerArrays& a_;
  const Strategy& s_;
  const Grid& grid_;
  Congestion k_;
  int micro_;
  double samples_;  // per pass of one micro-batch
  cost::LogMemo logs_;
  const cost::DeviceRates rates_;
  const PlacedGroups groups_;
  // How much longer than the device's figures a pass takes with this job's ranks of a node
  // computing at once (hw::CoreSharing; nodes fill in rank order).
  const double sharing_;
  const hw::TimeSharing timeSharing_;  // at the job's ranks a node
  Evaluation e_;
  double localParams_ = 0;
  // Whether some kernel's time depends on its weights staying in the rank's cache, and then the
  // share of them that does and the native convolutions' column bytes a pass.
  const bool pricesResidence_;
  double resident_ = 0;
  double columns_ = 0;
  double activations_ = 0;
  double workspace_ = 0;
  double haloBufferBytes_ = 0;
  double skewTail_ = 0;  // the gradient reduction's wait for the slowest rank (skewWaits)
  double besideWaits_ = 0;  // the synchronisations' waits beside the reductions (skewWaits)
  int slowestStage_ = 0;  // pipelines: the stage that sets the pace
  int reducingStage_ = 0;       // pipelines: the stage whose gradient reduction ends last
  double reducingScale_ = 1;    // its bytes' share of the link, as a factor on them
  double stageParams_ = 0;
  double updateSharing_ = 1;    // hw::TimeSharing's factor for the update (timeShareCompute)
  double pipelineUpdate_ = -1;  // pipelines: the updates' time beyond the last pass (-1: not a pipeline)
  double stageActivations_ = 0;
};

}  // namespace

void LayerArrays::reset(int layers) {
  for (std::vector<double>* v : {&forward, &backward, &backwardData, &backwardWeight, &communication, &halo}) {
    v->assign(layers, 0.0);
  }
  stage.assign(layers, 0);
  sources.clear();
}

Evaluation evaluate(const PlanInputs& inputs, const std::vector<cost::LayerProfile>& profiles, LayerArrays& arrays,
                    const Strategy& strategy, cost::Congestion congestion) {
  return Evaluator(inputs, profiles, arrays, strategy, congestion).run();
}

}  // namespace paraxis::plan::detail
