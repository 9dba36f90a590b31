#include "train/device.hpp"

#include <ATen/Context.h>
#include <fmt/format.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include "core/error.hpp"

namespace paraxis::train {

torch::Device torchDevice(const ComputeDevice& device, std::string_view what) {
  if (!device.cuda()) return torch::kCPU;
  if (!at::hasCUDA()) {
    throw ConfigError(fmt::format("{} {}: this paraxis is built against a LibTorch without CUDA ({}); configure with "
                                  "-DPARAXIS_TORCH_DIR=<a CUDA PyTorch's torch/share/cmake>",
                                  what, device.str(), TORCH_VERSION));
  }
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (count == 0) throw ConfigError(fmt::format("{} {}: no CUDA device is visible", what, device.str()));
  if (device.index >= count) {
    throw ConfigError(fmt::format("{} {}: {} CUDA device{} visible (cuda:0 to cuda:{})", what, device.str(), count,
                                  count == 1 ? " is" : "s are", count - 1));
  }
  return {torch::kCUDA, static_cast<torch::DeviceIndex>(device.index)};
}

void synchronizeDevice(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

}  // namespace paraxis::train
