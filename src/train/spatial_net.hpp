#pragma once
// An IR model run "spatial early, replicated late" (Dryden et al.): the layers up to and
// including the first global pooling run on each rank's spatial block through the distributed
// layers of src/parallel; the pooled tensor is the same on every rank of the spatial group, and
// the head after it runs replicated. Weight gradients of the spatial layers are partial sums
// over the group (reduceSpatialGradients adds them up); the head's are whole on every rank.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "parallel/spatial_conv.hpp"
#include "train/ir_module.hpp"

namespace paraxis::train {

class SpatialNet {
 public:
  // Throws ConfigError naming the first layer that cannot run split this way (a convolution
  // that is not "same", a window that crosses blocks, a flatten before any global pooling).
  // `split` must outlive every backward pass through run()'s outputs.
  SpatialNet(IrNet net, const parallel::SpatialSplit& split);

  // Every layer's output for this rank's block of a batch ([N, C, block...]); layers from the
  // split point on hold the replicated tensors.
  std::vector<torch::Tensor> run(const torch::Tensor& localInput);
  // Adds the spatial layers' weight gradients over the group (after backward).
  void reduceSpatialGradients();

  IrNet& net() { return net_; }
  int splitPoint() const { return splitPoint_; }  // the first replicated layer

 private:
  torch::Tensor applySpatial(int index, const std::vector<torch::Tensor>& outputs);
  void checkLayer(int index) const;

  IrNet net_;
  const parallel::SpatialSplit& split_;
  int splitPoint_ = 0;
};

}  // namespace paraxis::train
