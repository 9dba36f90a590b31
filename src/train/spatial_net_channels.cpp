// SpatialNet's channel axis: the filter or channel axis of a grid, run by plan's rule
// (plan/layer_split.hpp), so that what train executes is what the oracle priced.
#include <fmt/format.h>

#include "core/error.hpp"
#include "train/spatial_net.hpp"

namespace paraxis::train {
namespace {

using graph::Layer;
using graph::LayerKind;

std::int64_t positions(const graph::TensorShape& s) {
  std::int64_t n = 1;
  for (std::int64_t e : s.spatial) n *= e;
  return n;
}

torch::Tensor namedTensor(const torch::nn::Module& m, const char* name) {
  if (const auto* p = m.named_parameters(false).find(name)) return *p;
  if (const auto* b = m.named_buffers(false).find(name)) return *b;
  return {};
}

}  // namespace

void SpatialNet::planChannels() {
  const graph::Model& model = net_->model();
  const int ranks = options_.slices->comm.size();
  const int channelRanks = options_.channelSlices != nullptr ? options_.channelSlices->comm.size() : 1;
  const plan::Grid axis = options_.filterHead              ? headGrid()
                          : options_.channelSlices != nullptr ? plan::Grid{.channel = channelRanks, .filter = ranks}
                          : options_.filterAxis            ? plan::Grid{.filter = ranks}
                                                           : plan::Grid{.channel = ranks};
  if (std::string problem = plan::channelAxisProblem(model, axis); !problem.empty()) throw ConfigError(problem);
  rule_ = plan::splitLayers(model, axis);
  for (int i = 1; i < model.size() && options_.filterHead; ++i) {
    const plan::LayerSplit& r = rule_[i];
    if ((r.channelSplit || r.channelParallel || r.gatherInput) && layout_[i] != Layout::kSamples) {
      throw ConfigError(fmt::format("layer '{}': the filter head would split it, but it runs on spatial blocks",
                                    model.layer(i).name));
    }
  }
  slicing_.assign(model.size(), {});
  for (int i = 1; i < model.size(); ++i) {
    const Layer& l = model.layer(i);
    if (!rule_[i].channelSplit) continue;
    if (plan::isWeighted(l)) {
      slicing_[i] = {l.output.channels, 1};
    } else {
      const int source = l.inputs.front();
      slicing_[i] = slicing_[source];
      if (l.kind == LayerKind::kFlatten) slicing_[i].unit *= positions(model.layer(source).output);
    }
  }
  sliceParameters();
}

plan::Grid SpatialNet::headGrid() const {
  plan::Grid grid{.filterHead = true};
  int* axes[] = {&grid.depth, &grid.height, &grid.width};  // the split's dimensions are the last of these
  const std::size_t n = std::min<std::size_t>(split_.grid.size(), 3);
  for (std::size_t d = 0; d < n; ++d) *axes[3 - n + d] = split_.grid[d];
  return grid;
}

parallel::Slicing SpatialNet::inputSlicing(int index) const {
  const graph::Model& model = net_->model();
  const Layer& l = model.layer(index);
  const graph::TensorShape& in = model.layer(l.inputs.front()).output;
  parallel::Slicing s = sliced(l.inputs.front()) ? slicing_[l.inputs.front()] : parallel::Slicing{in.channels, 1};
  if (l.kind == LayerKind::kFullyConnected) s.unit *= positions(in);
  return s;
}

void SpatialNet::sliceParameters() {
  const graph::Model& model = net_->model();
  for (int i = 1; i < model.size(); ++i) {
    const Layer& l = model.layer(i);
    const plan::LayerSplit& r = rule_[i];
    const std::shared_ptr<torch::nn::Module> m = net_->layerModule(i);
    const bool transposed = l.kind == LayerKind::kDeconv;
    if (r.channelSplit && (plan::isWeighted(l) || l.kind == LayerKind::kBatchNorm)) {
      const parallel::Slicing out = slicing_[i];
      sliceParameter(namedTensor(*m, "weight"), transposed ? 1 : 0, out, *options_.slices);
      for (const char* name : {"bias", "running_mean", "running_var"}) {
        sliceParameter(namedTensor(*m, name), 0, out, *options_.slices);
      }
    }
    if (r.channelParallel) {
      const parallel::Slicing in = inputSlicing(i);
      sliceParameter(namedTensor(*m, "weight"), transposed ? 0 : 1, in, inputGroup(i));
    }
  }
}

// The rank's slice replaces the whole tensor in place (set_data), so the module, its
// parameter list and everything built on them later (the gradient engine, momentum,
// checkpoints) see the slice.
void SpatialNet::sliceParameter(const torch::Tensor& p, std::int64_t dim, parallel::Slicing slicing,
                                const parallel::ChannelSplit& group) {
  if (!p.defined()) return;
  torch::NoGradGuard noGrad;
  const parallel::Range mine = group.slice(slicing);
  torch::Tensor whole = p;
  whole.set_data(p.narrow(dim, mine.begin, mine.size()).clone());
  slicedParameters_.push_back({p, dim, slicing, &group});
}

const parallel::ChannelSplit& SpatialNet::inputGroup(int index) const {
  return rule_[index].sliceInput && options_.channelSlices != nullptr ? *options_.channelSlices : *options_.slices;
}

std::vector<torch::Tensor> SpatialNet::wholeParameters() {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : net_->parameters()) {
    torch::Tensor whole = p.detach();
    for (const SlicedParameter& s : slicedParameters_) {
      if (s.tensor.unsafeGetTensorImpl() == p.unsafeGetTensorImpl()) whole = s.group->gather(whole, s.dim, s.slicing);
    }
    out.push_back(whole);
  }
  return out;
}

const std::vector<torch::Tensor>& SpatialNet::channelInputs(int index, const std::vector<torch::Tensor>& outputs) {
  if (rule_.empty()) return outputs;
  const plan::LayerSplit& r = rule_[index];
  const Layer& l = net_->model().layer(index);
  if (!r.gatherInput && !r.completeInputGradient) return outputs;
  moved_ = outputs;
  for (int input : l.inputs) {
    if (r.gatherInput && sliced(input)) {
      moved_[input] = parallel::gatherChannels(*options_.slices, outputs[input], slicing_[input], parallel::Consumer::kRedundant);
    }
  }
  if (r.completeInputGradient) moved_[l.inputs.front()] = parallel::completeGradient(*options_.slices, outputs[l.inputs.front()]);
  return moved_;
}

torch::Tensor SpatialNet::parallelInput(int index, torch::Tensor x) const {
  const bool fc = net_->model().layer(index).kind == LayerKind::kFullyConnected;
  if (fc && x.dim() > 2) x = x.flatten(1);
  if (!rule_[index].sliceInput) return x;
  return parallel::sliceChannels(inputGroup(index), x, fc ? inputSlicing(index).unit : 1);
}

// The partial sums laid out as IrNet lays out its convolutions' outputs before they are summed:
// a convolution that runs NCHW on a tiny map (ir_module.cpp) otherwise hands NCHW to the layers
// after it, whose batch norm then ran 4-13x slower (ResNet-18's layer4 at 64x64, batch 8, under
// filter=2 and channel=2: 85 and 330 us forward and backward against 23 and 26 in NHWC).
torch::Tensor SpatialNet::finishPartial(int index, const torch::Tensor& partial) const {
  const torch::Tensor y = parallel::sumPartials(inputGroup(index), net_->laidOut(partial));
  const torch::Tensor bias = namedTensor(*net_->layerModule(index), "bias");
  if (!bias.defined()) return y;
  std::vector<std::int64_t> shape(y.dim(), 1);
  shape[1] = bias.size(0);
  return y + bias.view(shape);
}

torch::Tensor SpatialNet::applySamples(int index, const std::vector<torch::Tensor>& in) {
  const Layer& l = net_->model().layer(index);
  const torch::Tensor& x = in[l.inputs.front()];
  if (l.kind == LayerKind::kDropout) return dropout(index, x);
  if (!channelParallel(index)) return net_->applyLayer(index, in);
  const torch::Tensor weight = namedTensor(*net_->layerModule(index), "weight");
  if (l.kind == LayerKind::kFullyConnected) return finishPartial(index, torch::linear(parallelInput(index, x), weight));
  const auto& a = l.as<graph::ConvAttrs>();
  const std::size_t dims = static_cast<std::size_t>(x.dim() - 2);
  const auto each = [&](const graph::Dims& v) {
    std::vector<std::int64_t> out;
    for (std::size_t d = 0; d < dims; ++d) out.push_back(v.size() == 1 ? v.front() : v.at(d));
    return out;
  };
  return finishPartial(index, at::convolution(net_->convInput(index, parallelInput(index, x)), weight, c10::nullopt,
                                              each(a.stride), each(a.padding), each(a.dilation),
                                              l.kind == LayerKind::kDeconv, each(a.outputPadding), a.groups));
}

std::string SpatialNet::describeChannels() const {
  if (options_.slices == nullptr) return {};
  int split = 0, parallel = 0, gathers = 0;
  for (int i = 1; i < static_cast<int>(rule_.size()); ++i) {
    split += rule_[i].channelSplit && plan::isWeighted(net_->model().layer(i)) ? 1 : 0;
    parallel += rule_[i].channelParallel ? 1 : 0;
    gathers += rule_[i].gatherInput ? 1 : 0;
  }
  const int ranks = options_.slices->comm.size();
  if (options_.channelSlices != nullptr) {
    int sliceInputs = 0;
    for (const plan::LayerSplit& r : rule_) sliceInputs += r.sliceInput ? 1 : 0;
    return fmt::format("{} layers split their filters over {} ranks, {} take those slices as input channels, {} slice "
                       "their input channels over {} ranks (allreduced partial outputs), {} gather slices",
                       split, ranks, parallel - sliceInputs, sliceInputs, options_.channelSlices->comm.size(), gathers);
  }
  if (!options_.filterAxis) {
    return fmt::format("{} layers slice their input channels over {} ranks and allreduce their partial outputs", parallel,
                       ranks);
  }
  return fmt::format("{} layers split their filters over {} ranks, {} take those slices as input channels "
                     "(allreduced partial outputs), {} gather slices",
                     split, ranks, parallel, gathers);
}

}  // namespace paraxis::train
