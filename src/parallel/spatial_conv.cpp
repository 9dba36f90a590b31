#include "parallel/spatial_conv.hpp"

#include <fmt/format.h>

#include "comm/halo.hpp"
#include "core/error.hpp"

namespace paraxis::parallel {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The halo layout of a local [N, C, spatial...] block: `halo[i]` cells each side of dimension i.
comm::HaloLayout layoutOf(const torch::Tensor& x, const std::vector<std::int64_t>& halo, const std::vector<int>& grid) {
  comm::HaloLayout layout;
  layout.lead = x.size(0) * x.size(1);
  for (std::size_t i = 0; i < halo.size(); ++i) {
    layout.interior.push_back(x.size(static_cast<std::int64_t>(i) + 2));
    layout.lo.push_back(halo[i]);
    layout.hi.push_back(halo[i]);
    layout.grid.push_back(grid[i]);
  }
  return layout;
}

// The interior of a haloed [N, C, spatial...] buffer.
torch::Tensor interiorOf(const torch::Tensor& padded, const std::vector<std::int64_t>& halo) {
  torch::Tensor view = padded;
  for (std::size_t i = 0; i < halo.size(); ++i) {
    const auto dim = static_cast<std::int64_t>(i) + 2;
    view = view.narrow(dim, halo[i], padded.size(dim) - 2 * halo[i]);
  }
  return view;
}

// Zero padding at the global boundary, the neighbours' cells inside: a fresh haloed copy of x.
torch::Tensor haloed(const SpatialSplit& split, const torch::Tensor& x, const std::vector<std::int64_t>& halo) {
  std::vector<std::int64_t> shape{x.size(0), x.size(1)};
  for (std::size_t i = 0; i < halo.size(); ++i) shape.push_back(x.size(static_cast<std::int64_t>(i) + 2) + 2 * halo[i]);
  torch::Tensor padded = torch::zeros(shape, x.options());
  interiorOf(padded, halo).copy_(x);
  comm::haloExchange(split.comm, padded.data_ptr(), commTypeOf(padded), layoutOf(x, halo, split.grid));
  return padded;
}

class HaloConvFunction : public torch::autograd::Function<HaloConvFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, const SpatialSplit* split, std::vector<std::int64_t> halo,
                               std::vector<std::int64_t> dilation, std::int64_t groups) {
    const torch::Tensor padded = haloed(*split, x.contiguous(), halo);
    ctx->save_for_backward({padded, weight, bias});
    ctx->saved_data["halo"] = halo;
    ctx->saved_data["dilation"] = dilation;
    ctx->saved_data["groups"] = groups;
    ctx->saved_data["split"] = reinterpret_cast<std::int64_t>(split);
    const std::vector<std::int64_t> ones(halo.size(), 1), zeros(halo.size(), 0);
    return at::convolution(padded, weight, bias.numel() > 0 ? c10::optional<torch::Tensor>(bias) : c10::nullopt, ones,
                           zeros, dilation, false, zeros, groups);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& padded = saved[0];
    const torch::Tensor& weight = saved[1];
    const torch::Tensor& bias = saved[2];
    const std::vector<std::int64_t> halo = ctx->saved_data["halo"].toIntVector();
    const std::vector<std::int64_t> dilation = ctx->saved_data["dilation"].toIntVector();
    const auto* split = reinterpret_cast<const SpatialSplit*>(ctx->saved_data["split"].toInt());
    const std::vector<std::int64_t> ones(halo.size(), 1), zeros(halo.size(), 0);
    const bool hasBias = bias.numel() > 0;
    const std::vector<std::int64_t> biasSizes{bias.numel()};
    auto [gradPadded, gradWeight, gradBias] = at::convolution_backward(
        grads[0].contiguous(), padded, weight, hasBias ? at::OptionalIntArrayRef(biasSizes) : c10::nullopt, ones, zeros,
        dilation, false, zeros, ctx->saved_data["groups"].toInt(), {true, true, hasBias});
    // The halo cells' gradients belong to the neighbours that own those cells.
    gradPadded = gradPadded.contiguous();
    const torch::Tensor interior = interiorOf(gradPadded, halo);
    comm::haloExchange(split->comm, gradPadded.data_ptr(), commTypeOf(gradPadded),
                       layoutOf(interior, halo, split->grid), {.mode = comm::HaloMode::kAccumulate});
    return {interiorOf(gradPadded, halo).contiguous(), gradWeight, gradBias, {}, {}, {}, {}};
  }
};

}  // namespace

comm::DataType commTypeOf(const torch::Tensor& t) {
  if (t.scalar_type() == torch::kFloat) return comm::DataType::kF32;
  if (t.scalar_type() == torch::kDouble) return comm::DataType::kF64;
  throw ConfigError(fmt::format("spatial layers: float32 or float64 tensors only, found {}", c10::toString(t.scalar_type())));
}

std::pair<std::int64_t, std::int64_t> SpatialSplit::blockAt(std::int64_t r, std::int64_t p, std::int64_t extent) {
  const std::int64_t base = extent / p, extra = extent % p;
  const std::int64_t begin = r * base + std::min(r, extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

std::pair<std::int64_t, std::int64_t> SpatialSplit::block(int dim, std::int64_t extent) const {
  return blockAt(comm::gridCoordinates(comm.rank(), grid).at(dim), grid.at(dim), extent);
}

torch::Tensor SpatialSplit::local(const torch::Tensor& global) const {
  torch::Tensor view = global;
  for (int i = 0; i < static_cast<int>(grid.size()); ++i) {
    const auto [begin, end] = block(i, global.size(i + 2));
    view = view.narrow(i + 2, begin, end - begin);
  }
  return view.contiguous();
}

torch::Tensor spatialConv(const SpatialSplit& split, const torch::Tensor& x, const torch::Tensor& weight,
                          const torch::Tensor& bias, const ConvSpec& spec) {
  const auto dims = static_cast<std::int64_t>(split.grid.size());
  if (x.dim() != dims + 2 || weight.dim() != dims + 2) {
    throw ConfigError(fmt::format("spatial convolution: a grid over {} spatial dimensions needs {}-D inputs and "
                                  "weights, found {} and {}",
                                  dims, dims + 2, x.dim(), weight.dim()));
  }
  int ranks = 1;
  for (int g : split.grid) ranks *= g;
  if (ranks != split.comm.size()) {
    throw ConfigError(fmt::format("spatial convolution: the grid has {} ranks, the communicator {}", ranks,
                                  split.comm.size()));
  }
  std::vector<std::int64_t> halo, dilation;
  for (std::int64_t i = 0; i < dims; ++i) {
    const std::int64_t kernel = weight.size(i + 2);
    const std::int64_t d = spec.dilation.empty() ? 1 : spec.dilation.at(i);
    if (kernel % 2 == 0) {
      throw ConfigError(fmt::format("spatial convolution: kernel {} along dimension {} is even; only 'same' "
                                    "convolutions (odd kernels, stride 1) are split so far",
                                    kernel, i));
    }
    halo.push_back(d * (kernel - 1) / 2);
    dilation.push_back(d);
    if (split.grid[i] > 1 && x.size(i + 2) < halo.back()) {
      throw ConfigError(fmt::format("spatial convolution: a block of {} along dimension {} is thinner than its halo "
                                    "of {} (grid {})",
                                    x.size(i + 2), i, halo.back(), split.grid[i]));
    }
  }
  // autograd functions take defined tensors only: no bias travels as an empty one.
  const torch::Tensor biasOrEmpty = bias.defined() ? bias : torch::empty({0}, weight.options());
  return HaloConvFunction::apply(x, weight, biasOrEmpty, &split, halo, dilation, spec.groups);
}

}  // namespace paraxis::parallel
