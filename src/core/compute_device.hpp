#pragma once
// Where a rank's tensors live and its layers run: the CPU (the default, and the tested path)
// or a CUDA device of the LibTorch paraxis was built against (CMake's PARAXIS_TORCH_DIR).
// Torch-free: the CLI parses and range-checks it at start-up; train/device.hpp turns it into
// a torch::Device and fails there, with one line, where no such device exists.
#include <string>
#include <string_view>

namespace paraxis {

struct ComputeDevice {
  enum class Kind { kCpu, kCuda };
  Kind kind = Kind::kCpu;
  int index = 0;  // cuda:N

  bool cuda() const { return kind == Kind::kCuda; }
  std::string str() const;  // "cpu", "cuda:0"
  bool operator==(const ComputeDevice&) const = default;
};

// "cpu", "cuda" (device 0) or "cuda:N" (0 <= N < 64); ConfigError naming `what` otherwise.
ComputeDevice parseComputeDevice(std::string_view text, std::string_view what);

}  // namespace paraxis
