#include "train/spatial_net.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "comm/allreduce.hpp"
#include "core/error.hpp"
#include "parallel/channel_split.hpp"
#include "parallel/spatial_conv.hpp"
#include "parallel/spatial_layers.hpp"

namespace paraxis::train {
namespace {

using graph::Layer;
using graph::LayerKind;

std::int64_t at(const graph::Dims& v, std::size_t i) { return v.size() == 1 ? v.front() : v.at(i); }

std::vector<std::int64_t> perDimension(const graph::Dims& v, std::size_t dims) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < dims; ++i) out.push_back(at(v, i));
  return out;
}

torch::Tensor parameter(const torch::nn::Module& m, const char* name) {
  const auto* p = m.named_parameters(false).find(name);
  return p == nullptr ? torch::Tensor() : *p;
}

torch::Tensor buffer(const torch::nn::Module& m, const char* name) {
  const auto* b = m.named_buffers(false).find(name);
  return b == nullptr ? torch::Tensor() : *b;
}

bool isLoss(LayerKind k) { return k == LayerKind::kSoftmaxLoss || k == LayerKind::kMseLoss; }

}  // namespace

SpatialNet::SpatialNet(IrNet net, const parallel::SpatialSplit& split, SpatialOptions options)
    : net_(std::move(net)), split_(split), options_(options) {
  const graph::Model& model = net_->model();
  if (model.inputShape().rank() != static_cast<int>(split.grid.size())) {
    throw ConfigError(fmt::format("model '{}' takes {}-D samples ({}); a spatial grid of {} splits {} dimensions",
                                  model.name(), model.inputShape().rank(), model.inputShape().str(),
                                  fmt::join(split.grid, "x"), split.grid.size()));
  }
  if (!options_.layerGrids.empty() && static_cast<int>(options_.layerGrids.size()) != model.size()) {
    throw ConfigError(fmt::format("model '{}': {} layer grids for {} layers", model.name(), options_.layerGrids.size(),
                                  model.size()));
  }
  for (int i = 0; i < model.size(); ++i) {
    const std::vector<int>& grid = options_.layerGrids.empty() ? split.grid : options_.layerGrids[i];
    const auto same = std::find_if(grids_.begin(), grids_.end(), [&](const auto& g) { return g.grid == grid; });
    splitOf_.push_back(same != grids_.end() ? &*same : &grids_.emplace_back(parallel::SpatialSplit{split.comm, grid, split.overlap}));
    if (splitOf_.back()->ranks() != split.comm.size()) {
      throw ConfigError(fmt::format("layer '{}': a grid of {} ranks on a group of {}", model.layer(i).name,
                                    splitOf_.back()->ranks(), split.comm.size()));
    }
  }
  // A group of one rank (a filter or channel grid's spatial group) holds whole samples: its
  // layers are torch's own, not the spatial ones (whose batch norm, pooling windows and halo
  // padding cost 2-8x torch's fused kernels for nothing to exchange).
  const bool wholeSamples = split.comm.size() == 1 && !options_.filterHead;
  layout_.assign(model.size(), wholeSamples ? Layout::kSamples : Layout::kSpatial);
  converted_.resize(model.size());
  checkExtents(0);
  for (int i = 1; i < model.size(); ++i) {
    const Layer& l = model.layer(i);
    if (isLoss(l.kind)) {
      losses_.push_back(i);
      const Layout in = layout_[l.inputs.front()];
      layout_[i] = in == Layout::kReplicated ? Layout::kSamples : in;
      continue;
    }
    bool spatialInputs = true;
    for (int input : l.inputs) spatialInputs = spatialInputs && layout_[input] == Layout::kSpatial;
    if (spatialInputs && runsSpatially(i) && (options_.sampleFrom <= 0 || i < options_.sampleFrom)) {
      checkExtents(i);
      layout_[i] = l.kind == LayerKind::kGlobalAvgPool ? Layout::kReplicated : Layout::kSpatial;
    } else {
      layout_[i] = Layout::kSamples;
    }
  }
  if (options_.slices != nullptr) planChannels();
  if (options_.filterHead) sumSpatialGradients();
}

SpatialNet::~SpatialNet() {
  parallel::setCommTimeSink(nullptr);
  for (auto& [tensor, hook] : gradientHooks_) tensor.remove_hook(hook);
}

void SpatialNet::sumSpatialGradients() {
  const graph::Model& model = net_->model();
  // `slices` is the spatial group here; the hooks go with this net (the destructor removes them).
  const parallel::ChannelSplit* group = options_.slices;
  const auto sum = [group](const torch::Tensor& g) { return parallel::sumOverGroup(*group, g); };
  for (int i = 1; i < model.size(); ++i) {
    if (layout_[i] == Layout::kSamples) continue;
    for (torch::Tensor p : net_->layerParameters(i)) gradientHooks_.emplace_back(p, p.register_hook(sum));
  }
}

bool SpatialNet::runsSpatially(int index) const {
  const Layer& l = net_->model().layer(index);
  switch (l.kind) {
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: return !l.as<graph::PoolAttrs>().ceilMode;
    case LayerKind::kConv:
    case LayerKind::kDeconv:
    case LayerKind::kBatchNorm:
    case LayerKind::kActivation:
    case LayerKind::kAdd:
    case LayerKind::kConcat:
    case LayerKind::kDropout:
    case LayerKind::kGlobalAvgPool: return true;
    default: return false;
  }
}

void SpatialNet::checkExtents(int index) const {
  const graph::Model& model = net_->model();
  const Layer& l = model.layer(index);
  const std::string what = fmt::format("layer '{}' ({})", l.name, graph::kindName(l.kind));
  const auto spatialOf = [](const graph::TensorShape& s) { return std::vector<std::int64_t>(s.spatial.begin(), s.spatial.end()); };
  for (int input : l.inputs) parallel::requireBlocks(splitOf(input), spatialOf(model.layer(input).output), what.c_str());
  if (l.kind != LayerKind::kGlobalAvgPool) parallel::requireBlocks(splitOf(index), spatialOf(l.output), what.c_str());
}

torch::Tensor SpatialNet::applySpatial(int index, const std::vector<torch::Tensor>& outputs) {
  const Layer& l = net_->model().layer(index);
  const int source = l.inputs.front();
  const torch::Tensor& x = outputs[source];
  const std::shared_ptr<torch::nn::Module> m = net_->layerModule(index);
  const graph::TensorShape& in = net_->model().layer(source).output;
  const std::vector<std::int64_t> extents(in.spatial.begin(), in.spatial.end());
  const std::size_t dims = extents.size();
  const parallel::SpatialSplit& split = splitOf(index);
  const parallel::SpatialSplit* from = splitOf(source).grid == split.grid ? nullptr : &splitOf(source);
  switch (l.kind) {
    case LayerKind::kConv:
    case LayerKind::kDeconv: {
      const auto& a = l.as<graph::ConvAttrs>();
      const parallel::ConvSpec spec{extents,
                                    perDimension(a.stride, dims),
                                    perDimension(a.padding, dims),
                                    perDimension(a.dilation, dims),
                                    perDimension(a.outputPadding, dims),
                                    a.groups,
                                    l.kind == LayerKind::kDeconv,
                                    from};
      // Laid out as IrNet lays out its convolutions' outputs (a one-channel input's comes NCHW).
      if (!channelParallel(index)) {
        return net_->laidOut(
            parallel::spatialConv(split, net_->convInput(index, x), parameter(*m, "weight"), parameter(*m, "bias"), spec));
      }
      return finishPartial(
          index, parallel::spatialConv(split, net_->convInput(index, parallelInput(index, x)), parameter(*m, "weight"), {}, spec));
    }
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: {
      const auto& a = l.as<graph::PoolAttrs>();
      return parallel::spatialPool(
          split, x,
          {l.kind == LayerKind::kMaxPool ? parallel::PoolKind::kMax : parallel::PoolKind::kAverage, extents,
           perDimension(a.kernel, dims), perDimension(a.stride.empty() ? a.kernel : a.stride, dims),
           perDimension(a.padding, dims), from});
    }
    case LayerKind::kGlobalAvgPool: return parallel::spatialGlobalAvgPool(splitOf(source), x);
    default: return applyOnGrid(index, outputs);
  }
}

torch::Tensor SpatialNet::applyOnGrid(int index, const std::vector<torch::Tensor>& outputs) {
  const Layer& l = net_->model().layer(index);
  const parallel::SpatialSplit& split = splitOf(index);
  std::vector<torch::Tensor> regridded;  // a copy of the handles only where some input changes grid
  for (int input : l.inputs) {
    if (splitOf(input).grid == split.grid) continue;
    if (regridded.empty()) regridded = outputs;
    const graph::TensorShape& shape = net_->model().layer(input).output;
    regridded[input] = parallel::regrid(splitOf(input), split, outputs[input],
                                        std::vector<std::int64_t>(shape.spatial.begin(), shape.spatial.end()));
  }
  const std::vector<torch::Tensor>& in = regridded.empty() ? outputs : regridded;
  if (l.kind == LayerKind::kDropout) return dropout(index, in[l.inputs.front()]);
  if (l.kind != LayerKind::kBatchNorm || !net_->is_training() || options_.localBatchNorm) {
    // Running statistics (evaluation) and local statistics: torch's batch-norm on the block.
    return net_->applyLayer(index, in);
  }
  const std::shared_ptr<torch::nn::Module> m = net_->layerModule(index);
  const auto& a = l.as<graph::BatchNormAttrs>();
  if (torch::Tensor tracked = buffer(*m, "num_batches_tracked"); tracked.defined()) {
    torch::NoGradGuard noGrad;
    tracked.add_(1);  // as torch's batch-norm counts its training steps
  }
  return parallel::spatialBatchNorm(split, in[l.inputs.front()], parameter(*m, "weight"), parameter(*m, "bias"),
                                    buffer(*m, "running_mean"), buffer(*m, "running_var"), {a.momentum, a.eps});
}

torch::Tensor SpatialNet::toSamples(int source, const std::vector<torch::Tensor>& outputs) {
  if (converted_[source].defined()) return converted_[source];
  const graph::TensorShape& shape = net_->model().layer(source).output;
  switch (layout_[source]) {
    case Layout::kSpatial: {
      const std::vector<std::int64_t> extents(shape.spatial.begin(), shape.spatial.end());
      converted_[source] = options_.filterHead ? parallel::spatialToWhole(splitOf(source), outputs[source], extents)
                                               : parallel::spatialToSamples(splitOf(source), outputs[source], extents);
      break;
    }
    case Layout::kReplicated:
      // A filter head reads the whole tensor as it is; its split layers' partial gradients are summed here.
      converted_[source] = options_.filterHead ? parallel::completeGradient(*options_.slices, outputs[source])
                                               : parallel::replicatedToSamples(split_, outputs[source]);
      break;
    case Layout::kSamples: converted_[source] = outputs[source]; break;
  }
  return converted_[source];
}

std::vector<torch::Tensor> SpatialNet::run(const torch::Tensor& batch) {
  const graph::Model& model = net_->model();
  std::vector<torch::Tensor> outputs(model.size());
  comm_ = {};
  startRun(batch.size(0));
  outputs[0] = localInput(batch);
  for (int i = 1; i < model.size(); ++i) runLayer(i, outputs);
  countBackward();
  return outputs;
}

void SpatialNet::startRun(std::int64_t samples) {
  std::fill(converted_.begin(), converted_.end(), torch::Tensor());
  samples_ = samples;
  parallel::setCommTimeSink(&comm_.forward);
}

void SpatialNet::runLayer(int i, std::vector<torch::Tensor>& outputs) {
  net_->beforeLayer(i);
  const auto start = std::chrono::steady_clock::now();
  const Layer& l = net_->model().layer(i);
  if (isLoss(l.kind)) {
    if (layout_[i] == Layout::kSamples) toSamples(l.inputs.front(), outputs);
    outputs[i] = channelInputs(i, layout_[i] == Layout::kSamples ? converted_ : outputs)[l.inputs.front()];
  } else if (layout_[i] != Layout::kSamples) {
    outputs[i] = applySpatial(i, channelInputs(i, outputs));
  } else {
    for (int input : l.inputs) toSamples(input, outputs);
    outputs[i] = converted_[i] = applySamples(i, channelInputs(i, converted_));
  }
  net_->layerDone(i, outputs[i], start);
}

std::vector<std::int64_t> SpatialNet::localShape(int layer, std::int64_t samples) const {
  const Layer& l = net_->model().layer(layer);
  // A loss layer's slot holds its input as the loss reads it (in the loss's layout).
  const graph::TensorShape& s = isLoss(l.kind) ? net_->model().layer(l.inputs.front()).output : l.output;
  std::vector<std::int64_t> shape{samples, s.channels};
  shape.insert(shape.end(), s.spatial.begin(), s.spatial.end());
  if (layout_[layer] == Layout::kSpatial) {
    const parallel::Box box = splitOf(layer).blockBox(split_.comm.rank(), shape);
    for (std::size_t d = 0; d < shape.size(); ++d) shape[d] = box[d].size();
  } else if (layout_[layer] == Layout::kSamples && !options_.filterHead) {
    shape[0] = parallel::sampleRange(split_, split_.comm.rank(), samples).size();
  }
  if (sliced(layer)) shape[1] = options_.slices->slice(slicing_[layer]).size();
  return shape;
}

torch::Tensor SpatialNet::dropout(int index, const torch::Tensor& x) const {
  const double p = net_->model().layer(index).as<graph::DropoutAttrs>().probability;
  if (!net_->is_training() || p == 0) return x;
  const graph::TensorShape& shape = net_->model().layer(index).output;
  std::vector<std::int64_t> global{samples_, shape.channels};
  global.insert(global.end(), shape.spatial.begin(), shape.spatial.end());
  const torch::Tensor mask = torch::empty(global, x.options()).bernoulli_(1 - p).div_(1 - p);
  const torch::Tensor mine = targetPart(mask, layout_[index], splitOf(index));
  return x * (sliced(index) ? options_.slices->local(mine, 1, slicing_[index].unit) : mine);
}

torch::Tensor SpatialNet::targetPart(const torch::Tensor& target, Layout layout,
                                   const parallel::SpatialSplit& split) const {
  if (layout == Layout::kSpatial) return split.local(target);
  if (options_.filterHead) return target;  // the head runs on the whole batch
  const parallel::Range mine = parallel::sampleRange(split_, split_.comm.rank(), target.size(0));
  return target.narrow(0, mine.begin, mine.size());
}

torch::Tensor SpatialNet::loss(const std::vector<torch::Tensor>& outputs, const torch::Tensor& target) {
  if (losses_.empty()) throw ConfigError(fmt::format("model '{}' has no loss layer to train against", net_->model().name()));
  namespace F = torch::nn::functional;
  // A filter head's loss is the whole batch's on every rank; the group's sums happen in backward.
  const double ranks = options_.filterHead ? 1.0 : split_.comm.size();
  torch::Tensor total;
  for (int index : losses_) {
    const Layer& l = net_->model().layer(index);
    const graph::TensorShape& in = net_->model().layer(l.inputs.front()).output;
    const torch::Tensor& x = outputs[index];
    const torch::Tensor t = targetPart(target, layout_[index], splitOf(l.inputs.front()));
    // The replica's mean is over every sample (and position, for a per-position softmax) of
    // its batch; this rank holds part of them and the engine averages over the group.
    const bool softmax = l.kind == LayerKind::kSoftmaxLoss;
    const double perSample = static_cast<double>(softmax ? in.elements() / in.channels : in.elements());
    const torch::Tensor sum = softmax ? F::cross_entropy(x, t, F::CrossEntropyFuncOptions().reduction(torch::kSum))
                                      : torch::mse_loss(x, t.to(x.dtype()).view_as(x), at::Reduction::Sum);
    const double weight = (index == losses_.back() ? 1.0 : 0.4) * ranks / (perSample * static_cast<double>(target.size(0)));
    total = total.defined() ? total + weight * sum : weight * sum;
  }
  return total;
}

torch::Tensor SpatialNet::prediction(const std::vector<torch::Tensor>& outputs) {
  return outputs.at(losses_.empty() ? outputs.size() - 1 : losses_.back());
}

torch::Tensor SpatialNet::targetPart(const torch::Tensor& target) {
  if (losses_.empty()) return targetPart(target, Layout::kSamples, split_);
  return targetPart(target, layout_[losses_.back()], splitOf(net_->model().layer(losses_.back()).inputs.front()));
}

double SpatialNet::replicaLoss(double local) {
  comm::allreduce(split_.comm, &local, &local, 1, comm::DataType::kF64);
  return local / split_.comm.size();
}

double SpatialNet::share() const {
  if (options_.filterHead) return 1.0 / split_.comm.size();  // every rank evaluates the whole batch
  const int channelRanks = options_.channelSlices != nullptr ? options_.channelSlices->comm.size() : 1;
  return 1.0 / (split_.comm.size() * (options_.slices != nullptr ? options_.slices->comm.size() : 1) * channelRanks);
}

int SpatialNet::sampleStart() const {
  for (int i = 1; i < static_cast<int>(layout_.size()); ++i) {
    if (layout_[i] == Layout::kSamples && !isLoss(net_->model().layer(i).kind)) return i;
  }
  return static_cast<int>(layout_.size());
}

std::string SpatialNet::describe() const {
  const graph::Model& model = net_->model();
  const int start = sampleStart();
  std::string grids;
  if (grids_.size() > 1) {
    std::vector<std::string> names;
    for (const auto& g : grids_) names.push_back(g.str());
    grids = fmt::format(" on grids {} (regridded where the plan changes them)", fmt::join(names, ", "));
  }
  std::string spatial;
  if (split_.comm.size() > 1) {
    spatial = start == model.size() ? "spatial throughout" + grids
                                    : fmt::format("spatial through layer '{}'{}, {} from layer '{}'",
                                                  model.layer(start - 1).name, grids,
                                                  options_.filterHead ? "the whole batch on every rank (filter head)"
                                                                      : "whole samples",
                                                  model.layer(start).name);
  }
  const std::string channels = describeChannels();
  return spatial.empty() || channels.empty() ? spatial + channels : spatial + "; " + channels;
}

}  // namespace paraxis::train
