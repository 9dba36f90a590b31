#include "train/ir_module.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "core/trace.hpp"

namespace paraxis::train {
namespace {

using graph::Layer;
using graph::LayerKind;

// Flattens a channels-last map and lays its gradient out channels-last again: the gradient of
// a plain flatten is an NCHW view, and the producer's backward (a max pool's) then takes
// LibTorch's slow mixed-layout path (lenet's pool2: 310 us backward in a training step
// against 46 us alone, batch 16).
class FlattenFunction : public torch::autograd::Function<FlattenFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
    ctx->saved_data["sizes"] = x.sizes().vec();
    return x.flatten(1);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    return {grads[0].reshape(ctx->saved_data["sizes"].toIntVector()).contiguous(torch::MemoryFormat::ChannelsLast)};
  }
};

torch::Tensor flattenKeepingLayout(const torch::Tensor& x) {
  const bool channelsLast = x.dim() == 4 && x.size(2) * x.size(3) > 1 &&
                            x.suggest_memory_format() == torch::MemoryFormat::ChannelsLast;
  return channelsLast && x.requires_grad() ? FlattenFunction::apply(x) : x.flatten(1);
}

// torch module names may not contain '.'.
std::string moduleName(const std::string& layer) {
  std::string out = layer;
  std::replace(out.begin(), out.end(), '.', '_');
  return out;
}

template <std::size_t D>
torch::ExpandingArray<D> dims(const graph::Dims& v) {
  std::vector<std::int64_t> values(v.begin(), v.end());
  return torch::ExpandingArray<D>(values);
}

template <std::size_t D>
torch::nn::AnyModule convolution(const Layer& l, std::int64_t in) {
  const auto& a = l.as<graph::ConvAttrs>();
  if (l.kind == LayerKind::kConv) {
    using Options = torch::nn::ConvOptions<D>;
    Options o(in, a.filters, dims<D>(a.kernel));
    o.stride(dims<D>(a.stride)).padding(dims<D>(a.padding)).dilation(dims<D>(a.dilation)).groups(a.groups).bias(a.bias);
    if constexpr (D == 2) return torch::nn::AnyModule(torch::nn::Conv2d(o));
    else return torch::nn::AnyModule(torch::nn::Conv3d(o));
  }
  using Options = torch::nn::ConvTransposeOptions<D>;
  Options o(in, a.filters, dims<D>(a.kernel));
  o.stride(dims<D>(a.stride)).padding(dims<D>(a.padding)).dilation(dims<D>(a.dilation)).groups(a.groups)
      .bias(a.bias).output_padding(dims<D>(a.outputPadding));
  if constexpr (D == 2) return torch::nn::AnyModule(torch::nn::ConvTranspose2d(o));
  else return torch::nn::AnyModule(torch::nn::ConvTranspose3d(o));
}

template <std::size_t D>
torch::nn::AnyModule pooling(const Layer& l) {
  const auto& a = l.as<graph::PoolAttrs>();
  if (l.kind == LayerKind::kMaxPool) {
    torch::nn::MaxPoolOptions<D> o(dims<D>(a.kernel));
    o.stride(dims<D>(a.stride)).padding(dims<D>(a.padding)).ceil_mode(a.ceilMode);
    if constexpr (D == 2) return torch::nn::AnyModule(torch::nn::MaxPool2d(o));
    else return torch::nn::AnyModule(torch::nn::MaxPool3d(o));
  }
  torch::nn::AvgPoolOptions<D> o(dims<D>(a.kernel));
  o.stride(dims<D>(a.stride)).padding(dims<D>(a.padding)).ceil_mode(a.ceilMode);
  if constexpr (D == 2) return torch::nn::AnyModule(torch::nn::AvgPool2d(o));
  else return torch::nn::AnyModule(torch::nn::AvgPool3d(o));
}

torch::nn::AnyModule makeModule(const graph::Model& m, const Layer& l) {
  const graph::TensorShape& in = l.inputs.empty() ? l.output : m.layer(l.inputs.front()).output;
  const bool three = in.rank() == 3;
  switch (l.kind) {
    case LayerKind::kConv:
    case LayerKind::kDeconv: return three ? convolution<3>(l, in.channels) : convolution<2>(l, in.channels);
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: return three ? pooling<3>(l) : pooling<2>(l);
    case LayerKind::kAdaptiveAvgPool:
    case LayerKind::kGlobalAvgPool: {
      const graph::Dims out = l.kind == LayerKind::kGlobalAvgPool ? graph::Dims(in.rank(), 1)
                                                                  : l.as<graph::AdaptivePoolAttrs>().output;
      if (three) {
        return torch::nn::AnyModule(torch::nn::AdaptiveAvgPool3d(
            torch::nn::AdaptiveAvgPool3dOptions(torch::ExpandingArrayWithOptionalElem<3>({out[0], out[1], out[2]}))));
      }
      return torch::nn::AnyModule(torch::nn::AdaptiveAvgPool2d(
          torch::nn::AdaptiveAvgPool2dOptions(torch::ExpandingArrayWithOptionalElem<2>({out[0], out[1]}))));
    }
    case LayerKind::kBatchNorm: {
      const auto& a = l.as<graph::BatchNormAttrs>();
      if (in.rank() == 0) return torch::nn::AnyModule(torch::nn::BatchNorm1d(torch::nn::BatchNormOptions(in.channels).eps(a.eps).momentum(a.momentum)));
      if (three) return torch::nn::AnyModule(torch::nn::BatchNorm3d(torch::nn::BatchNormOptions(in.channels).eps(a.eps).momentum(a.momentum)));
      return torch::nn::AnyModule(torch::nn::BatchNorm2d(torch::nn::BatchNormOptions(in.channels).eps(a.eps).momentum(a.momentum)));
    }
    case LayerKind::kFullyConnected: {
      const auto& a = l.as<graph::FcAttrs>();
      return torch::nn::AnyModule(torch::nn::Linear(torch::nn::LinearOptions(in.elements(), a.outputs).bias(a.bias)));
    }
    case LayerKind::kDropout:
      return torch::nn::AnyModule(torch::nn::Dropout(torch::nn::DropoutOptions(l.as<graph::DropoutAttrs>().probability)));
    default: return {};
  }
}

torch::Tensor activate(const Layer& l, const torch::Tensor& x) {
  namespace F = torch::nn::functional;
  const auto& a = l.as<graph::ActivationAttrs>();
  switch (a.function) {
    case graph::ActivationFunction::kRelu: return torch::relu(x);
    case graph::ActivationFunction::kLeakyRelu: return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(a.slope));
    case graph::ActivationFunction::kElu: return F::elu(x, F::ELUFuncOptions().alpha(a.slope));
    case graph::ActivationFunction::kGelu: return torch::gelu(x);
    case graph::ActivationFunction::kSilu: return torch::silu(x);
    case graph::ActivationFunction::kSigmoid: return torch::sigmoid(x);
    case graph::ActivationFunction::kTanh: return torch::tanh(x);
  }
  return x;
}

}  // namespace

// A layer may overwrite its first input when nothing else reads it and its producer's
// backward does not need its own output (torchvision's ReLU(inplace=True) and `out +=
// identity`): one tensor less to allocate and write per layer, on memory-bound passes.
std::vector<std::uint8_t> inPlaceLayers(const graph::Model& m) {
  std::vector<int> consumers(m.size(), 0);
  for (const Layer& l : m.layers()) {
    for (int input : l.inputs) ++consumers[input];
  }
  std::vector<std::uint8_t> out(m.size(), 0);
  for (int i = 1; i < m.size(); ++i) {
    const Layer& l = m.layer(i);
    const bool relu = l.kind == LayerKind::kActivation &&
                      l.as<graph::ActivationAttrs>().function == graph::ActivationFunction::kRelu;
    if ((!relu && l.kind != LayerKind::kAdd) || l.inputs.empty()) continue;
    const int source = l.inputs.front();
    const LayerKind producer = m.layer(source).kind;
    const bool keepsNoOutput = producer == LayerKind::kConv || producer == LayerKind::kDeconv ||
                               producer == LayerKind::kBatchNorm || producer == LayerKind::kFullyConnected ||
                               producer == LayerKind::kAdd || producer == LayerKind::kConcat;
    out[i] = static_cast<std::uint8_t>(source != 0 && consumers[source] == 1 && keepsNoOutput);
  }
  return out;
}

namespace {

// oneDNN's channels-last convolution backward is slow on tiny maps: ResNet-18's 512-channel 3x3
// convolutions on 2x2 positions took 31-34 ms backward in NHWC and 7.1-7.5 ms in NCHW (batch 4
// and 8, one thread, LibTorch 1.13 here), 256 channels on 2x2 1.8x, 1024 2.1x; from 3x3
// positions on the two layouts run within 10 %. Such a convolution runs in NCHW (its weights
// kept so, its input made so), its output laid out again for the layers after it. Not at one
// sample a call, where NHWC is the faster (1.45 ms backward against 2.14 for the 512 channels).
bool runsNchwUnderChannelsLast(const Layer& l, std::int64_t samplesPerCall) {
  std::int64_t positions = 1;
  for (const std::int64_t e : l.output.spatial) positions *= e;
  return samplesPerCall != 1 && l.kind == LayerKind::kConv && positions <= 4;
}

}  // namespace

IrNetImpl::IrNetImpl(graph::Model model, IrNetOptions options) : model_(std::move(model)) {
  inPlace_ = options.inPlace ? inPlaceLayers(model_) : std::vector<std::uint8_t>(model_.size(), 0);
  channelsLast_ = options.channelsLast && model_.inputShape().rank() == 2;
  layers_.resize(model_.size());
  nchw_.assign(model_.size(), 0);
  for (int i = 1; i < model_.size(); ++i) {
    const Layer& l = model_.layer(i);
    layers_[i] = makeModule(model_, l);
    if (!layers_[i].is_empty()) register_module(moduleName(l.name), layers_[i].ptr());
    if (l.kind == LayerKind::kSoftmaxLoss || l.kind == LayerKind::kMseLoss) losses_.push_back(i);
    nchw_[i] = static_cast<std::uint8_t>(channelsLast_ && runsNchwUnderChannelsLast(l, options.samplesPerCall));
    if (channelsLast_ && l.kind == LayerKind::kConv && nchw_[i] == 0) {
      torch::NoGradGuard noGrad;
      for (torch::Tensor& w : layers_[i].ptr()->parameters()) {
        if (w.dim() == 4) w.set_data(w.contiguous(torch::MemoryFormat::ChannelsLast));
      }
    }
  }
}

torch::Tensor IrNetImpl::apply(int index, const std::vector<torch::Tensor>& outputs) {
  const Layer& l = model_.layer(index);
  const torch::Tensor& x = outputs[l.inputs.front()];
  switch (l.kind) {
    case LayerKind::kActivation: {
      if (inPlace_[index] != 0) {
        torch::Tensor y = x;  // shares x's storage
        return y.relu_();
      }
      return activate(l, x);
    }
    case LayerKind::kAdd: {
      if (inPlace_[index] != 0) {
        torch::Tensor sum = x;  // shares x's storage
        for (std::size_t k = 1; k < l.inputs.size(); ++k) sum.add_(outputs[l.inputs[k]]);
        return sum;
      }
      torch::Tensor sum = x;
      for (std::size_t k = 1; k < l.inputs.size(); ++k) sum = sum + outputs[l.inputs[k]];
      return sum;
    }
    case LayerKind::kConcat: {
      std::vector<torch::Tensor> parts;
      for (int input : l.inputs) parts.push_back(outputs[input]);
      return torch::cat(parts, 1);
    }
    case LayerKind::kFlatten: return flattenKeepingLayout(x);
    case LayerKind::kFullyConnected: return layers_[index].forward(x.dim() > 2 ? flattenKeepingLayout(x) : x);
    case LayerKind::kSoftmaxLoss:
    case LayerKind::kMseLoss: return {};
    // Laid out: an NCHW convolution output sends the layers after it down torch's NCHW kernels,
    // max pooling 10x slower than NHWC on one thread here.
    case LayerKind::kConv: return laidOut(layers_[index].forward(convInput(index, x)));
    default: return layers_[index].forward(x);
  }
}

std::vector<torch::Tensor> IrNetImpl::run(const torch::Tensor& input) {
  std::vector<torch::Tensor> outputs(model_.size());
  outputs[0] = laidOut(input);
  for (int i = 1; i < model_.size(); ++i) {
    if (beforeLayer_) beforeLayer_(i);
    const auto start = std::chrono::steady_clock::now();
    outputs[i] = apply(i, outputs);
    layerDone(i, outputs[i], start);
  }
  return outputs;
}

void IrNetImpl::layerDone(int index, const torch::Tensor& output, std::chrono::steady_clock::time_point start) {
  if (!trace::enabled()) return;
  trace::complete("layer", model_.layer(index).name, start, std::chrono::steady_clock::now());
  if (!is_training() || !torch::GradMode::is_enabled() || !output.requires_grad()) return;
  if (gradReady_.size() != static_cast<std::size_t>(model_.size())) gradReady_.assign(model_.size(), {});
  output.register_hook([this, index](const torch::Tensor&) { gradReady_[index] = std::chrono::steady_clock::now(); });
}

void IrNetImpl::traceLayerBackward(std::chrono::steady_clock::time_point end) {
  if (!trace::enabled() || gradReady_.size() != static_cast<std::size_t>(model_.size())) return;
  const std::chrono::steady_clock::time_point never{};
  for (int i = 1; i < model_.size(); ++i) {
    if (gradReady_[i] == never) continue;  // no gradient reached it (a layer after the losses, frozen)
    auto finish = end;
    // An input's hook may stamp its gradient a moment before the layer's own when one autograd
    // node yields both (a loss under a spatial split's executor): that layer took no time, not
    // the rest of the backward.
    for (int input : model_.layer(i).inputs) {
      if (input > 0 && gradReady_[input] != never) finish = std::min(finish, std::max(gradReady_[input], gradReady_[i]));
    }
    trace::completeOnRow("backward by layer", "layer_backward", model_.layer(i).name, gradReady_[i], finish);
  }
  gradReady_.assign(model_.size(), {});  // an executor may skip layers next time (a placement's others)
}

std::vector<torch::Tensor> IrNetImpl::layerParameters(int index) const {
  if (layers_.at(index).is_empty()) return {};
  return layers_[index].ptr()->parameters();
}

torch::Tensor IrNetImpl::loss(const std::vector<torch::Tensor>& outputs, const torch::Tensor& target) const {
  if (losses_.empty()) throw ConfigError(fmt::format("model '{}' has no loss layer to train against", model_.name()));
  torch::Tensor total;
  for (int index : losses_) {
    const Layer& l = model_.layer(index);
    const torch::Tensor& x = outputs[l.inputs.front()];
    torch::Tensor value = l.kind == LayerKind::kSoftmaxLoss ? torch::nn::functional::cross_entropy(x, target)
                                                            : torch::mse_loss(x, target.to(x.dtype()).view_as(x));
    const double weight = index == losses_.back() ? 1.0 : 0.4;
    total = total.defined() ? total + weight * value : weight * value;
  }
  return total;
}

const torch::Tensor& IrNetImpl::prediction(const std::vector<torch::Tensor>& outputs) const {
  if (losses_.empty()) return outputs.back();
  return outputs[model_.layer(losses_.back()).inputs.front()];
}

std::int64_t IrNetImpl::parameterCount() const {
  std::int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

}  // namespace paraxis::train
