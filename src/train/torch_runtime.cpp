#include "train/torch_runtime.hpp"

#include "train/device.hpp"

#include <ATen/Parallel.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <thread>

namespace paraxis::train {

int configureTorchThreads(int threads, int ranksOnHost) {
  if (threads <= 0) {
    const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    threads = std::max(1, cores / std::max(1, ranksOnHost));
  }
  torch::set_num_threads(threads);
  return threads;
}

TorchRuntimeInfo torchRuntimeInfo() {
  TorchRuntimeInfo info;
  info.version = TORCH_VERSION;
  info.intraOpThreads = torch::get_num_threads();
  info.interOpThreads = at::get_num_interop_threads();
  info.mkldnn = at::hasMKLDNN();
  info.parallelInfo = at::get_parallel_info();
  return info;
}

void requireDevice(const ComputeDevice& device, std::string_view what) { (void)torchDevice(device, what); }

}  // namespace paraxis::train
