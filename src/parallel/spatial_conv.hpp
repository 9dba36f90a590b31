#pragma once
// A convolution whose input is split spatially over a process grid (Dryden et al., IPDPS 2019;
// LLNL's Distconv): each rank holds one block of the sample's spatial extent. Forward fills
// the block's halo from its neighbours (the comm runtime's halo exchange) and convolves the
// haloed block; backward computes the gradient of the haloed input and adds each halo cell's
// gradient back into the neighbour that owns the cell (the exchange's accumulate mode). The
// weight and bias gradients are this rank's partial sums: the caller reduces them over every
// rank that holds the same weights.
//
// Supported so far: "same" convolutions (stride 1, padding = dilation x (kernel - 1) / 2, odd
// kernels), 2-D and 3-D, any dilation and groups; other shapes are refused with one line.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/types.hpp"

namespace paraxis::parallel {

// How a tensor's spatial dimensions are split: `grid[i]` ranks along spatial dimension i
// (depth, height, width or height, width), laid out row-major over `comm` (the last dimension
// fastest). Blocks may be uneven: extent e over p ranks gives the first e % p ranks one more.
struct SpatialSplit {
  comm::Communicator comm;
  std::vector<int> grid;

  // This rank's [begin, end) along spatial dimension `dim` of a global extent.
  std::pair<std::int64_t, std::int64_t> block(int dim, std::int64_t extent) const;
  // The block of coordinate `r` of `ranks` along an extent (the rule every rank shares).
  static std::pair<std::int64_t, std::int64_t> blockAt(std::int64_t r, std::int64_t ranks, std::int64_t extent);
  // This rank's block of a global [N, C, spatial...] tensor.
  torch::Tensor local(const torch::Tensor& global) const;
};

// The comm runtime's element type of a float32 or float64 tensor; ConfigError for others.
comm::DataType commTypeOf(const torch::Tensor& t);

struct ConvSpec {
  std::vector<std::int64_t> dilation;  // per spatial dimension
  std::int64_t groups = 1;
};

// y_local = conv(x_local with halos, weight, bias): the block of the global "same" convolution
// this rank owns. Differentiable in x, weight and bias. Throws ConfigError naming the shape it
// cannot split (a block thinner than its halo, a kernel that is not "same"). `split` must
// outlive the backward pass.
torch::Tensor spatialConv(const SpatialSplit& split, const torch::Tensor& x, const torch::Tensor& weight,
                          const torch::Tensor& bias, const ConvSpec& spec);

}  // namespace paraxis::parallel
