#pragma once
// Layers on spatially split tensors besides convolution (spatial_conv.hpp): batch-norm with
// statistics over the whole spatial group (Distconv's global-stat option; local statistics are
// plain torch batch-norm on the block), global average pooling, max and average pooling, and
// the shuffles that end a spatial distribution. Weight gradients are this rank's partial sums, as for the convolution.
#include <torch/torch.h>

#include "parallel/spatial_split.hpp"

namespace paraxis::parallel {

struct BatchNormSpec {
  double momentum = 0.1;
  double eps = 1e-5;
};

// Training-mode batch-norm of x's block with the mean and variance of the whole (global)
// tensor: two small allreduces forward (per-channel sums) and two backward. Updates
// `runningMean` and `runningVar` (unbiased) as torch does, when they are defined.
torch::Tensor spatialBatchNorm(const SpatialSplit& split, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, torch::Tensor runningMean, torch::Tensor runningVar,
                               const BatchNormSpec& spec);

// The mean over every spatial position of the global tensor: [N, C, 1, ...], the same on every
// rank of the group (the point where a spatial distribution ends in a replicated one).
torch::Tensor spatialGlobalAvgPool(const SpatialSplit& split, const torch::Tensor& x);

enum class PoolKind { kMax, kAverage };

struct PoolSpec {
  PoolKind kind = PoolKind::kMax;
  std::vector<std::int64_t> extents;  // the global input's spatial extents
  std::vector<std::int64_t> kernel;   // per spatial dimension
  std::vector<std::int64_t> stride;
  std::vector<std::int64_t> padding;
  const SpatialSplit* inputSplit = nullptr;  // the grid x's blocks lie on, when not the output's
};

// Max or average pooling (torch's padding rules; no ceil mode) whose windows may cross
// blocks: the window of this rank's output block is gathered first, as for a convolution.
torch::Tensor spatialPool(const SpatialSplit& split, const torch::Tensor& x, const PoolSpec& spec);

// The same tensor on another grid of the same group (a per-layer plan's change of spatial
// distribution): one all-to-all-v, its time counted as a shuffle.
torch::Tensor regrid(const SpatialSplit& from, const SpatialSplit& to, const torch::Tensor& x,
                     const std::vector<std::int64_t>& extents);

// The samples rank `rank` of the group holds once a batch of `samples` is split by sample.
Range sampleRange(const SpatialSplit& split, int rank, std::int64_t samples);

// Dryden's shuffle where a spatial distribution ends: from this rank's spatial block of every
// sample to whole samples, sampleRange's share of them (one all-to-all-v; backward reverses it).
torch::Tensor spatialToSamples(const SpatialSplit& split, const torch::Tensor& x, const std::vector<std::int64_t>& extents);

// The same where the rest of the model runs on the whole batch on every rank (a filter head):
// every rank gathers every block of every sample (one all-to-all-v); backward returns each
// copy's gradient to the block's owner, who adds them up (the ranks' partial gradients summed).
torch::Tensor spatialToWhole(const SpatialSplit& split, const torch::Tensor& x, const std::vector<std::int64_t>& extents);

// From a tensor every rank of the group holds whole (after global pooling) to sampleRange's
// share of its samples; backward gathers the shares of the gradient.
torch::Tensor replicatedToSamples(const SpatialSplit& split, const torch::Tensor& x);

}  // namespace paraxis::parallel
