#pragma once
// Layers on spatially split tensors besides convolution (spatial_conv.hpp): batch-norm with
// statistics over the whole spatial group (Distconv's global-stat option; local statistics are
// plain torch batch-norm on the block), global average pooling, and pooling whose windows do
// not cross blocks. Weight gradients are this rank's partial sums, as for the convolution.
#include <torch/torch.h>

#include "parallel/spatial_conv.hpp"

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

// Pooling with kernel == stride whose windows stay inside each rank's block (every block
// starts and, but the last, ends on a multiple of the stride): purely local. Throws
// ConfigError naming the dimension where a window would cross blocks.
torch::Tensor spatialPool(const SpatialSplit& split, const torch::Tensor& x, PoolKind kind, std::int64_t window,
                          const std::vector<std::int64_t>& globalExtents);

}  // namespace paraxis::parallel
