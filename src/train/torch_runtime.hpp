#pragma once
// The torch process settings paraxis controls. Torch headers stay in the .cpp so that callers
// (the CLI, tests) compile in seconds.
#include <string>
#include <string_view>

#include "core/compute_device.hpp"

namespace paraxis::train {

struct TorchRuntimeInfo {
  std::string version;
  int intraOpThreads = 0;
  int interOpThreads = 0;
  bool mkldnn = false;
  std::string parallelInfo;  // torch's own summary (OpenMP, MKL/oneDNN, threads)
};

// Sets torch's intra-op threads. LibTorch starts with one thread on the project's machines
// (ENVIRONMENT.md, trap 2). threads <= 0 picks hardware threads / ranksOnHost, at least 1, so
// that ranks x threads does not exceed the cores. Returns the count set.
int configureTorchThreads(int threads, int ranksOnHost);

TorchRuntimeInfo torchRuntimeInfo();

// ConfigError naming `what` unless this LibTorch can run on `device` (train/device.hpp's
// check, for callers that keep torch out): commands call it at start-up, before any output.
void requireDevice(const ComputeDevice& device, std::string_view what);

}  // namespace paraxis::train
