#include "parallel/halo_conv.hpp"

#include <chrono>
#include <future>
#include <utility>

#include "comm/collectives.hpp"

namespace paraxis::parallel {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using Clock = std::chrono::steady_clock;

// The one split spatial dimension, or -1.
int splitDimension(const SpatialSplit& split) {
  int found = -1;
  for (int i = 0; i < static_cast<int>(split.grid.size()); ++i) {
    if (split.grid[i] == 1) continue;
    if (found >= 0) return -1;
    found = i;
  }
  return found;
}

struct Slabs {
  torch::Tensor fromLower, fromUpper;  // zeros at the global edge
  std::int64_t bytes = 0;              // sent and received
};

// Sends `toLower` to the lower neighbour along the split and `toUpper` to the upper one (one
// all-to-all-v carrying both); returns what they sent this rank. With one split dimension the
// neighbours are the adjacent ranks.
Slabs swapSlabs(const comm::Communicator& comm, const torch::Tensor& toLower, const torch::Tensor& toUpper) {
  const int me = comm.rank(), lower = me - 1, upper = me + 1 < comm.size() ? me + 1 : -1;
  const auto slab = static_cast<std::size_t>(toLower.numel());
  std::vector<std::size_t> counts(static_cast<std::size_t>(comm.size()), 0), displs(counts.size(), 0);
  std::vector<torch::Tensor> parts;
  if (lower >= 0) {
    counts[static_cast<std::size_t>(lower)] = slab;
    parts.push_back(toLower.contiguous().view(-1));
  }
  if (upper >= 0) {
    counts[static_cast<std::size_t>(upper)] = slab;
    displs[static_cast<std::size_t>(upper)] = lower >= 0 ? slab : 0;
    parts.push_back(toUpper.contiguous().view(-1));
  }
  const torch::Tensor send = parts.empty() ? torch::empty({0}, toLower.options()) : torch::cat(parts);
  torch::Tensor recv = torch::empty_like(send);
  comm::alltoallv(comm, send.data_ptr(), counts, displs, recv.data_ptr(), counts, displs, commTypeOf(send));
  Slabs out{torch::zeros_like(toLower, c10::MemoryFormat::Contiguous), torch::zeros_like(toUpper, c10::MemoryFormat::Contiguous),
            2 * send.numel() * send.element_size()};
  if (lower >= 0) out.fromLower = recv.narrow(0, 0, static_cast<std::int64_t>(slab)).view(toLower.sizes());
  if (upper >= 0) out.fromUpper = recv.narrow(0, static_cast<std::int64_t>(displs[upper]), static_cast<std::int64_t>(slab)).view(toUpper.sizes());
  return out;
}

// The exchange runs on a helper thread while `work` runs here; the halo time counted is what
// this thread waits for it after the work.
template <typename Work>
Slabs exchangeAround(const SpatialSplit& split, const torch::Tensor& toLower, const torch::Tensor& toUpper, Work&& work) {
  std::future<Slabs> pending = std::async(std::launch::async, [&] { return swapSlabs(split.comm, toLower, toUpper); });
  work();
  const auto start = Clock::now();
  Slabs slabs = pending.get();
  addCommTime(CommKind::kHalo, start, slabs.bytes);
  return slabs;
}

struct ConvArgs {
  std::vector<std::int64_t> padding, dilation, ones, zeros;
  std::int64_t groups;
};

ConvArgs argsOf(AutogradContext* ctx) {
  const std::vector<std::int64_t> padding = ctx->saved_data["padding"].toIntVector();
  return {padding, ctx->saved_data["dilation"].toIntVector(), std::vector<std::int64_t>(padding.size(), 1),
          std::vector<std::int64_t>(padding.size(), 0), ctx->saved_data["groups"].toInt()};
}

torch::Tensor convolve(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, const ConvArgs& a) {
  const c10::optional<torch::Tensor> bias = b.numel() > 0 ? c10::optional<torch::Tensor>(b) : c10::nullopt;
  return at::convolution(x, w, bias, a.ones, a.padding, a.dilation, false, a.zeros, a.groups);
}

class HaloConvFunction : public torch::autograd::Function<HaloConvFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, const SpatialSplit* split, std::int64_t dim, std::int64_t halo,
                               std::vector<std::int64_t> padding, std::vector<std::int64_t> dilation, std::int64_t groups) {
    ctx->saved_data["split"] = reinterpret_cast<std::int64_t>(split);
    ctx->saved_data["dim"] = dim;
    ctx->saved_data["halo"] = halo;
    ctx->saved_data["padding"] = std::move(padding);
    ctx->saved_data["dilation"] = std::move(dilation);
    ctx->saved_data["groups"] = groups;
    const ConvArgs a = argsOf(ctx);
    const std::int64_t n = x.size(dim);
    torch::Tensor interior;
    const Slabs slabs = exchangeAround(*split, x.narrow(dim, 0, halo), x.narrow(dim, n - halo, halo),
                                       [&] { interior = convolve(x, weight, bias, a); });
    const torch::Tensor lowWindow = torch::cat({slabs.fromLower, x.narrow(dim, 0, 2 * halo)}, dim);
    const torch::Tensor highWindow = torch::cat({x.narrow(dim, n - 2 * halo, 2 * halo), slabs.fromUpper}, dim);
    ctx->save_for_backward({x, lowWindow, highWindow, weight, bias});
    return torch::cat({convolve(lowWindow, weight, bias, a), interior, convolve(highWindow, weight, bias, a)}, dim);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &lowWindow = saved[1], &highWindow = saved[2], &weight = saved[3], &bias = saved[4];
    const auto* split = reinterpret_cast<const SpatialSplit*>(ctx->saved_data["split"].toInt());
    const std::int64_t dim = ctx->saved_data["dim"].toInt(), halo = ctx->saved_data["halo"].toInt(), n = x.size(dim);
    const ConvArgs a = argsOf(ctx);
    const bool hasBias = bias.numel() > 0, inputGrad = ctx->needs_input_grad(0);
    const std::vector<std::int64_t> biasSizes{bias.numel()};
    const auto backwardOf = [&](const torch::Tensor& g, const torch::Tensor& input) {
      return at::convolution_backward(g.contiguous(), input, weight, hasBias ? at::OptionalIntArrayRef(biasSizes) : c10::nullopt,
                                      a.ones, a.padding, a.dilation, false, a.zeros, a.groups, {inputGrad, true, hasBias});
    };
    const torch::Tensor& g = grads[0];
    auto [gLow, gwLow, gbLow] = backwardOf(g.narrow(dim, 0, halo), lowWindow);
    auto [gHigh, gwHigh, gbHigh] = backwardOf(g.narrow(dim, n - halo, halo), highWindow);
    torch::Tensor gx, gw, gb;
    const auto interior = [&] { std::tie(gx, gw, gb) = backwardOf(g.narrow(dim, halo, n - 2 * halo), x); };
    if (!inputGrad) {
      interior();
    } else {
      // The halo rows' gradients belong to the neighbours; they travel while the interior's is computed.
      const Slabs back = exchangeAround(*split, gLow.narrow(dim, 0, halo), gHigh.narrow(dim, 2 * halo, halo), interior);
      gx.narrow(dim, 0, 2 * halo).add_(gLow.narrow(dim, halo, 2 * halo));
      gx.narrow(dim, n - 2 * halo, 2 * halo).add_(gHigh.narrow(dim, 0, 2 * halo));
      gx.narrow(dim, 0, halo).add_(back.fromLower);
      gx.narrow(dim, n - halo, halo).add_(back.fromUpper);
    }
    gw = gw + gwLow + gwHigh;
    if (hasBias) gb = gb + gbLow + gbHigh;
    return {gx, gw, hasBias ? gb : torch::Tensor(), {}, {}, {}, {}, {}, {}};
  }
};

std::vector<std::int64_t> kernelOf(const torch::Tensor& weight) {
  return {weight.sizes().begin() + 2, weight.sizes().end()};
}

}  // namespace

bool haloConvApplies(const SpatialSplit& split, const torch::Tensor& weight, const ConvSpec& spec) {
  const int i = splitDimension(split);
  if (!split.overlap || spec.transposed || i < 0) return false;
  const std::vector<WindowAxis> axes = windowAxes(spec, kernelOf(weight));
  for (const WindowAxis& a : axes) {
    if (a.stride != 1) return false;
  }
  const WindowAxis& a = axes[static_cast<std::size_t>(i)];
  const std::int64_t halo = (a.span() - 1) / 2;
  // "Same" along the split (odd span, padding = halo), and the thinnest block holds a window.
  return a.span() % 2 == 1 && halo >= 1 && a.padding == halo && a.extent / split.grid[static_cast<std::size_t>(i)] >= a.span();
}

torch::Tensor haloConv(const SpatialSplit& split, const torch::Tensor& x, const torch::Tensor& weight,
                       const torch::Tensor& bias, const ConvSpec& spec) {
  const int i = splitDimension(split);
  const std::vector<WindowAxis> axes = windowAxes(spec, kernelOf(weight));
  std::vector<std::int64_t> padding, dilation;
  for (std::size_t d = 0; d < axes.size(); ++d) {
    padding.push_back(static_cast<int>(d) == i ? 0 : axes[d].padding);
    dilation.push_back(axes[d].dilation);
  }
  const std::int64_t halo = (axes[static_cast<std::size_t>(i)].span() - 1) / 2;
  // autograd functions take defined tensors only: no bias travels as an empty one.
  const torch::Tensor biasOrEmpty = bias.defined() ? bias : torch::empty({0}, weight.options());
  return HaloConvFunction::apply(x, weight, biasOrEmpty, &split, i + 2, halo, padding, dilation, spec.groups);
}

}  // namespace paraxis::parallel
