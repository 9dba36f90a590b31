#include <fmt/format.h>

#include <numeric>

#include "core/error.hpp"
#include "graph/layer_rules.hpp"

namespace paraxis::graph {
namespace {

std::string dimsStr(const Dims& dims) { return fmt::format("{}", fmt::join(dims, "x")); }

[[noreturn]] void fail(const Layer& layer, const std::string& what) {
  throw ShapeError(fmt::format("layer '{}' ({}): {}", layer.name, kindName(layer), what));
}

// Broadcasts a one-value Dims to `rank` values; rejects any other length.
void expand(const Layer& layer, Dims& dims, int rank, const char* field, std::int64_t minimum) {
  if (dims.size() == 1) dims.assign(rank, dims.front());
  if (static_cast<int>(dims.size()) != rank) {
    fail(layer, fmt::format("{} has {} values ({}) but the input has {} spatial dimensions",
                            field, dims.size(), dimsStr(dims), rank));
  }
  for (std::int64_t v : dims) {
    if (v < minimum) fail(layer, fmt::format("{} must be at least {}, found {}", field, minimum, v));
  }
}

void requireSpatial(const Layer& layer, const TensorShape& in) {
  if (in.rank() != 2 && in.rank() != 3) {
    fail(layer, fmt::format("needs a 2-D or 3-D input, found {} (rank {})", in.str(), in.rank()));
  }
}

void requireExtent(const Layer& layer, const TensorShape& in, const TensorShape& out) {
  for (std::int64_t extent : out.spatial) {
    if (extent < 1) {
      fail(layer, fmt::format("input {} is too small: the output would be {}", in.str(), out.str()));
    }
  }
}

TensorShape inferConv(Layer& layer, const TensorShape& in) {
  requireSpatial(layer, in);
  auto& a = std::get<ConvAttrs>(layer.attrs);
  const int r = in.rank();
  expand(layer, a.kernel, r, "kernel", 1);
  expand(layer, a.stride, r, "stride", 1);
  expand(layer, a.padding, r, "padding", 0);
  expand(layer, a.dilation, r, "dilation", 1);
  expand(layer, a.outputPadding, r, "output_padding", 0);
  if (a.filters < 1) fail(layer, fmt::format("filters must be at least 1, found {}", a.filters));
  if (a.groups < 1 || in.channels % a.groups != 0 || a.filters % a.groups != 0) {
    fail(layer, fmt::format("groups {} must divide the input channels ({}) and filters ({})",
                            a.groups, in.channels, a.filters));
  }
  TensorShape out{a.filters, {}};
  for (int d = 0; d < r; ++d) {
    const std::int64_t span = a.dilation[d] * (a.kernel[d] - 1);
    if (layer.kind == LayerKind::kConv) {
      out.spatial.push_back((in.spatial[d] + 2 * a.padding[d] - span - 1) / a.stride[d] + 1);
    } else {
      if (a.outputPadding[d] >= a.stride[d] && a.outputPadding[d] >= a.dilation[d]) {
        fail(layer, "output_padding must be smaller than stride or dilation");
      }
      out.spatial.push_back((in.spatial[d] - 1) * a.stride[d] - 2 * a.padding[d] + span +
                            a.outputPadding[d] + 1);
    }
  }
  requireExtent(layer, in, out);
  return out;
}

TensorShape inferPool(Layer& layer, const TensorShape& in) {
  requireSpatial(layer, in);
  auto& a = std::get<PoolAttrs>(layer.attrs);
  const int r = in.rank();
  expand(layer, a.kernel, r, "kernel", 1);
  if (a.stride.empty()) a.stride = a.kernel;
  expand(layer, a.stride, r, "stride", 1);
  expand(layer, a.padding, r, "padding", 0);
  TensorShape out{in.channels, {}};
  for (int d = 0; d < r; ++d) {
    if (2 * a.padding[d] > a.kernel[d]) {
      fail(layer, fmt::format("padding {} must be at most half the kernel {}", a.padding[d],
                              a.kernel[d]));
    }
    const std::int64_t room = in.spatial[d] + 2 * a.padding[d] - a.kernel[d];
    std::int64_t extent = (a.ceilMode ? (room + a.stride[d] - 1) / a.stride[d] : room / a.stride[d]) + 1;
    // torch: with ceil mode the last window must start inside the input or its left padding.
    if (a.ceilMode && (extent - 1) * a.stride[d] >= in.spatial[d] + a.padding[d]) --extent;
    if (room < 0) extent = 0;
    out.spatial.push_back(extent);
  }
  requireExtent(layer, in, out);
  return out;
}

TensorShape inferAdaptivePool(Layer& layer, const TensorShape& in) {
  requireSpatial(layer, in);
  auto& a = std::get<AdaptivePoolAttrs>(layer.attrs);
  expand(layer, a.output, in.rank(), "output", 1);
  return TensorShape{in.channels, a.output};
}

TensorShape inferJoin(const Layer& layer, const std::vector<const Layer*>& inputs) {
  if (inputs.size() < 2) fail(layer, fmt::format("needs at least 2 inputs, found {}", inputs.size()));
  const TensorShape& first = inputs.front()->output;
  TensorShape out = first;
  if (layer.kind == LayerKind::kConcat) out.channels = 0;
  for (const Layer* input : inputs) {
    const TensorShape& s = input->output;
    const bool fits = layer.kind == LayerKind::kAdd ? s == first : s.spatial == first.spatial;
    if (!fits) {
      fail(layer, fmt::format("input shapes do not fit: '{}' gives {}, '{}' gives {} ({})",
                              inputs.front()->name, first.str(), input->name, s.str(),
                              layer.kind == LayerKind::kAdd ? "add needs equal shapes"
                                                            : "concat needs equal spatial extents"));
    }
    if (layer.kind == LayerKind::kConcat) out.channels += s.channels;
  }
  return out;
}

}  // namespace

void inferShape(Layer& layer, const std::vector<const Layer*>& inputs) {
  const bool join = layer.kind == LayerKind::kAdd || layer.kind == LayerKind::kConcat;
  if (!join && layer.kind != LayerKind::kInput && inputs.size() != 1) {
    fail(layer, fmt::format("takes exactly 1 input, found {}", inputs.size()));
  }
  const TensorShape* in = inputs.empty() ? nullptr : &inputs.front()->output;
  switch (layer.kind) {
    case LayerKind::kInput: break;  // the builder sets the model's input shape
    case LayerKind::kConv:
    case LayerKind::kDeconv: layer.output = inferConv(layer, *in); break;
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: layer.output = inferPool(layer, *in); break;
    case LayerKind::kAdaptiveAvgPool: layer.output = inferAdaptivePool(layer, *in); break;
    case LayerKind::kGlobalAvgPool:
      requireSpatial(layer, *in);
      layer.output = TensorShape{in->channels, std::vector<std::int64_t>(in->rank(), 1)};
      break;
    case LayerKind::kBatchNorm:
      if (in->rank() == 1) fail(layer, "needs a flat, 2-D or 3-D input");
      layer.output = *in;
      break;
    case LayerKind::kActivation:
    case LayerKind::kDropout: layer.output = *in; break;
    case LayerKind::kAdd:
    case LayerKind::kConcat: layer.output = inferJoin(layer, inputs); break;
    case LayerKind::kFlatten: layer.output = TensorShape{in->elements(), {}}; break;
    case LayerKind::kFullyConnected: {
      const auto& a = std::get<FcAttrs>(layer.attrs);
      if (a.outputs < 1) fail(layer, fmt::format("outputs must be at least 1, found {}", a.outputs));
      layer.output = TensorShape{a.outputs, {}};
      break;
    }
    case LayerKind::kSoftmaxLoss:
      if (in->channels < 2) fail(layer, fmt::format("needs at least 2 classes, found {}", in->str()));
      layer.output = TensorShape{1, {}};
      break;
    case LayerKind::kMseLoss: layer.output = TensorShape{1, {}}; break;
  }
}

}  // namespace paraxis::graph
