// FLOP conventions (COST-MODELS.md section 2): one multiply-add is 2 FLOPs. Layers with
// weights cost as much for the data gradient and again for the weight gradient as forward
// (batch-norm's weight gradient is two reductions, 2|x|). Layers without weights cost their
// forward again for the data gradient, except joins and reshapes, whose gradient is a copy.
#include <cmath>

#include "core/counts.hpp"
#include "graph/layer_rules.hpp"

namespace paraxis::graph {
namespace {

std::int64_t product(const Dims& dims) {
  std::int64_t n = 1;
  for (std::int64_t v : dims) n = countProduct(n, v);
  return n;
}

// Input elements a rank needs beyond its block on each side of a split dimension: zero when
// windows neither overlap nor reach into padding (e.g. a 2x2 pool of stride 2), otherwise the
// larger of the left reach (padding) and the right reach (span - padding).
std::vector<std::int64_t> windowHalo(const Dims& kernel, const Dims& stride, const Dims& padding,
                                     const Dims& dilation) {
  std::vector<std::int64_t> halo;
  for (std::size_t d = 0; d < kernel.size(); ++d) {
    const std::int64_t span = (dilation.empty() ? 1 : dilation[d]) * (kernel[d] - 1);
    const bool overlapping = span + 1 > stride[d];
    halo.push_back(overlapping || padding[d] > 0 ? std::max(padding[d], span - padding[d]) : 0);
  }
  return halo;
}

// A transposed convolution scatters each input over span+1 outputs, stride apart: a rank
// needs the inputs whose scatter reaches into its output block.
std::vector<std::int64_t> deconvHalo(const ConvAttrs& a) {
  std::vector<std::int64_t> halo;
  for (std::size_t d = 0; d < a.kernel.size(); ++d) {
    const std::int64_t span = a.dilation[d] * (a.kernel[d] - 1);
    halo.push_back(span + 1 <= a.stride[d] ? 0 : (span + a.stride[d] - 1) / a.stride[d]);
  }
  return halo;
}

void countConv(const Layer& layer, const TensorShape& in, LayerCounts& c) {
  const auto& a = layer.as<ConvAttrs>();
  const std::int64_t k = product(a.kernel);
  const bool transposed = layer.kind == LayerKind::kDeconv;
  // Both directions: weights are C x F/groups x K; each MAC happens once per input (deconv)
  // or output (conv) position.
  const double positions = static_cast<double>(transposed ? in.spatialElements()
                                                           : layer.output.spatialElements());
  const std::int64_t weights = countProduct(countProduct(in.channels, a.filters / a.groups), k);
  const double macs = static_cast<double>(weights) * positions;
  c.params = countSum(weights, a.bias ? a.filters : 0);
  c.forwardFlops = 2 * macs + (a.bias ? static_cast<double>(layer.output.elements()) : 0.0);
  c.backwardDataFlops = 2 * macs;
  c.backwardWeightFlops = 2 * macs + (a.bias ? static_cast<double>(layer.output.elements()) : 0.0);
  c.halo = transposed ? deconvHalo(a) : windowHalo(a.kernel, a.stride, a.padding, a.dilation);
}

}  // namespace

LayerCounts countLayer(const Layer& layer, const std::vector<const Layer*>& inputs,
                       int bytesPerElement) {
  LayerCounts c;
  const TensorShape& out = layer.output;
  const TensorShape in = inputs.empty() ? out : inputs.front()->output;
  const auto inElems = static_cast<double>(in.elements());
  const auto outElems = static_cast<double>(out.elements());
  c.activationBytes = countProduct(out.elements(), bytesPerElement);
  c.halo.assign(in.rank(), 0);
  switch (layer.kind) {
    case LayerKind::kInput:
    case LayerKind::kFlatten:
    case LayerKind::kConcat: break;
    case LayerKind::kConv:
    case LayerKind::kDeconv: countConv(layer, in, c); break;
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: {
      const auto& a = layer.as<PoolAttrs>();
      c.forwardFlops = outElems * static_cast<double>(product(a.kernel));
      c.backwardDataFlops = c.forwardFlops;
      c.halo = windowHalo(a.kernel, a.stride, a.padding, {});
      break;
    }
    case LayerKind::kAdaptiveAvgPool:
    case LayerKind::kGlobalAvgPool:
      c.forwardFlops = inElems;
      c.backwardDataFlops = inElems;
      break;
    case LayerKind::kBatchNorm:
      c.params = 2 * in.channels;
      c.forwardFlops = 4 * inElems;
      c.backwardDataFlops = 4 * inElems;
      c.backwardWeightFlops = 2 * inElems;
      break;
    case LayerKind::kActivation:
    case LayerKind::kDropout:
      c.forwardFlops = outElems;
      c.backwardDataFlops = outElems;
      break;
    case LayerKind::kAdd:
      c.forwardFlops = outElems * static_cast<double>(inputs.size() - 1);
      break;
    case LayerKind::kFullyConnected: {
      const auto& a = layer.as<FcAttrs>();
      const double macs = inElems * static_cast<double>(a.outputs);
      c.params = countSum(countProduct(in.elements(), a.outputs), a.bias ? a.outputs : 0);
      c.forwardFlops = 2 * macs + (a.bias ? outElems : 0.0);
      c.backwardDataFlops = 2 * macs;
      c.backwardWeightFlops = 2 * macs + (a.bias ? outElems : 0.0);
      break;
    }
    case LayerKind::kSoftmaxLoss:  // max, subtract, exp, sum, log per class
      c.forwardFlops = 5 * inElems;
      c.backwardDataFlops = 2 * inElems;
      break;
    case LayerKind::kMseLoss:  // subtract, square, sum
      c.forwardFlops = 3 * inElems;
      c.backwardDataFlops = 2 * inElems;
      break;
  }
  return c;
}

}  // namespace paraxis::graph
