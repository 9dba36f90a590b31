#pragma once
// A convolution or transposed convolution whose input is split spatially over a process grid
// (Dryden et al., IPDPS 2019; LLNL's Distconv): each rank holds one block of the sample's
// spatial extent and computes its block of the output. Forward gathers the input window the
// block reads (its halos from the neighbours, zero padding at the global edge); backward
// returns the window's gradient to the owners, who add it up (redistribute.hpp). The weight
// and bias gradients are this rank's partial sums: the caller reduces them over every rank
// that holds the same weights. Any kernel, stride, padding, dilation and groups; 2-D and 3-D.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "parallel/spatial_split.hpp"

namespace paraxis::parallel {

struct ConvSpec {
  std::vector<std::int64_t> extents;  // the global input's spatial extents
  std::vector<std::int64_t> stride;   // per spatial dimension; empty: 1
  std::vector<std::int64_t> padding;  // empty: 0
  std::vector<std::int64_t> dilation;  // empty: 1
  std::vector<std::int64_t> outputPadding;  // transposed only; empty: 0
  std::int64_t groups = 1;
  bool transposed = false;
  const SpatialSplit* inputSplit = nullptr;  // the grid x's blocks lie on, when not the output's
};

// The spec's spatial dimensions as windowed axes (absent values: their defaults).
std::vector<WindowAxis> windowAxes(const ConvSpec& spec, const std::vector<std::int64_t>& kernel);

// The global output's spatial extents (torch's rule).
std::vector<std::int64_t> convOutputExtents(const ConvSpec& spec, const std::vector<std::int64_t>& kernel);

// y_local: this rank's block of the global convolution. Differentiable in x, weight and bias
// (undefined: none). Throws ConfigError naming the extent it cannot split. `split` must
// outlive the backward pass.
torch::Tensor spatialConv(const SpatialSplit& split, const torch::Tensor& x, const torch::Tensor& weight,
                          const torch::Tensor& bias, const ConvSpec& spec);

}  // namespace paraxis::parallel
