#pragma once
// The torch side of ComputeDevice (core/compute_device.hpp): the device a run's model, data
// and gradient buffers live on, and the synchronisation that makes a clock time GPU work.
// Only torch calls that Debian's CPU-only LibTorch also has, so the CUDA path builds (and is
// refused at run time with one line) everywhere.
#include <torch/torch.h>

#include <string_view>

#include "core/compute_device.hpp"

namespace paraxis::train {

// The torch::Device for `device`; ConfigError naming `what` when this LibTorch has no such
// CUDA device (built without CUDA, no GPU visible, or an index past the last).
torch::Device torchDevice(const ComputeDevice& device, std::string_view what = "--device");

// Returns once the work queued on `device` has run (a no-op on the CPU, whose torch calls
// return when done): a clock read after it times that work, not its launch.
void synchronizeDevice(const torch::Device& device);

}  // namespace paraxis::train
