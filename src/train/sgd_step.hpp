#pragma once
// SGD as training applies it to one parameter at a time (torch::optim::SGD's rule, no
// dampening): g = grad + weight decay x p; m = momentum x m + g; p -= lr x (nesterov ? g +
// momentum x m : m).
#include <torch/torch.h>

namespace paraxis::train {

struct SgdOptions {
  double momentum = 0.9;
  bool nesterov = false;
  double weightDecay = 0;
  // A group whose reduced gradients hold a nan or inf keeps its weights and momentum (every
  // replica holds the same reduced gradients, so every replica skips alike).
  bool skipNonFinite = false;
};

// One step of parameter `p` from gradient `g` with momentum buffer `m` (`o.momentum` 0: plain
// SGD, `m` untouched), both updated in place. Float CPU tensors laid out alike take one pass
// over memory; any other layout or type takes LibTorch's elementwise operations.
void sgdStep(torch::Tensor& p, const torch::Tensor& g, torch::Tensor& m, const SgdOptions& o, double lr);

// The same step for a group of parameters (their gradients and momentum buffers alike): on the
// CPU one sgdStep each; on a GPU one multi-tensor kernel per operation over the whole group, as
// PyTorch's foreach SGD runs it, instead of three launches per parameter.
void sgdStepGroup(std::vector<torch::Tensor>& p, const std::vector<torch::Tensor>& g, std::vector<torch::Tensor>& m,
                  const SgdOptions& o, double lr);

}  // namespace paraxis::train
