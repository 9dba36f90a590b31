#pragma once
// spatialConv with the interior of a block computed while its halos travel (SpatialSplit::
// overlap), for a stride-1 "same" convolution (odd kernel span along the split dimension) on a
// grid that splits one dimension. Each rank computes its block's interior from its own cells,
// with no copy of the input, while its two halo slabs travel on a helper thread; the block's
// first and last rows come from thin windows of halo plus edge rows. Backward mirrors it: the
// interior's input gradient is the block's, the edge windows' gradients are added in place and
// their halo parts returned to the neighbours while the interior's gradient is computed.
//
// Measured, it does not pay on this machine: CosmoFlow 128^3 on d=2 (2 ranks, shared memory)
// takes 1.27-1.49 s per iteration with it against 1.09-1.14 s on the window path, whose halo
// is ~2 % of the iteration, while the three convolutions and the assembled output cost more
// than the exchange they hide. So it is off unless asked for (train --halo-overlap).
#include <torch/torch.h>

#include "parallel/spatial_conv.hpp"

namespace paraxis::parallel {

// Whether haloConv computes this convolution (the same answer on every rank of the group).
bool haloConvApplies(const SpatialSplit& split, const torch::Tensor& weight, const ConvSpec& spec);

torch::Tensor haloConv(const SpatialSplit& split, const torch::Tensor& x, const torch::Tensor& weight,
                       const torch::Tensor& bias, const ConvSpec& spec);

}  // namespace paraxis::parallel
