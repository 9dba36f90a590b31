#pragma once
// How a tensor's spatial dimensions are split over a group of ranks, and the placement of a
// windowed layer's input (the block a rank owns, the window its output block reads: the
// block plus halos, Dryden et al.'s halo region, or less where a stride skips cells).
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/types.hpp"
#include "parallel/redistribute.hpp"

namespace paraxis::parallel {

// `grid[i]` ranks along spatial dimension i (depth, height, width or height, width), laid out
// row-major over `comm` (the last dimension fastest). Blocks may be uneven: extent e over p
// ranks gives the first e % p ranks one more.
struct SpatialSplit {
  comm::Communicator comm;
  std::vector<int> grid;
  // Compute a block's interior while its halos travel, where the layer allows (halo_conv.hpp;
  // measured slower on this machine, so off by default).
  bool overlap = false;

  // This rank's [begin, end) along spatial dimension `dim` of a global extent.
  std::pair<std::int64_t, std::int64_t> block(int dim, std::int64_t extent) const;
  // The block of coordinate `r` of `ranks` along an extent (the rule every rank shares).
  static std::pair<std::int64_t, std::int64_t> blockAt(std::int64_t r, std::int64_t ranks, std::int64_t extent);
  // Rank `rank`'s block of a global [N, C, spatial...] tensor: every sample and channel.
  Box blockBox(int rank, const std::vector<std::int64_t>& globalShape) const;
  // This rank's block of a global [N, C, spatial...] tensor (also [N, spatial...] targets:
  // the split dimensions are always the last ones).
  torch::Tensor local(const torch::Tensor& global) const;
  int ranks() const;
  std::string str() const;  // "h=2xw=2", in plan's notation
};

// The comm runtime's element type of a float32 or float64 tensor; ConfigError for others.
comm::DataType commTypeOf(const torch::Tensor& t);

// One spatial dimension of a windowed layer (convolution, transposed convolution, pooling),
// with torch's rules for the output extent and for which input cells an output range reads.
struct WindowAxis {
  std::int64_t extent = 0;  // of the global input
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  std::int64_t dilation = 1;
  std::int64_t outputPadding = 0;  // transposed only
  bool transposed = false;

  std::int64_t span() const { return dilation * (kernel - 1) + 1; }
  std::int64_t outputExtent() const;
  // Convolution and pooling: output o reads inputs o*s - p .. o*s - p + span - 1 (past the
  // edge: padding). Transposed: input i writes outputs i*s - p + j*d, so an output range reads
  // the inputs whose writes reach it, clamped to the input.
  Range inputOf(Range output) const;
};

// The input range along spatial dimension `dim` that an output block reads.
using WindowRule = std::function<Range(int dim, Range output)>;

// Owned: each rank's block of the input [N, C, spatial...]; needed: the window of its block of
// an output with `outputExtents`; cells past the input's edge read as `fill`. Throws
// ConfigError when an extent leaves a rank an empty block (the grid is finer than the tensor).
// `inputSplit` (null: `split`) is the grid the input's blocks lie on when a layer changes grids.
Placement windowPlacement(const SpatialSplit& split, const std::vector<std::int64_t>& inputShape,
                          const std::vector<std::int64_t>& outputExtents, const WindowRule& rule, double fill,
                          const SpatialSplit* inputSplit = nullptr);

// ConfigError unless every rank has a non-empty block of `extents` (spatial only).
void requireBlocks(const SpatialSplit& split, const std::vector<std::int64_t>& extents, const char* what);

}  // namespace paraxis::parallel
