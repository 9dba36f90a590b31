#pragma once
// Each layer's share of one whole backward pass, as a training step runs it (torch TUs only).
// Autograd numbers the nodes a forward creates in order, so the numbers taken at the layers'
// boundaries say which layer made each node; a hook on every node takes the time it ends.
// Serial on the CPU, the engine runs one node after another: a node's time is from the end of
// the one before (the engine's own work between them included) to its end, and the layers'
// times add up to the whole backward. A parameter's gradient accumulation counts to the layer
// whose node ran just before it. Where branches join (a residual's shortcut), each branch's
// nodes count to their own layer, which intervals between gradient arrivals cannot tell apart.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "core/cpu_clock.hpp"

namespace paraxis::calib {

class BackwardClock {
 public:
  // `now` reads the clock the nodes' ends are taken on, seconds: the wall's, or the calling
  // thread's CPU clock (core::threadCpuSeconds), as the engine runs a CPU graph's nodes on the
  // thread that calls backward.
  explicit BackwardClock(int layers, double (*now)() = core::wallSeconds)
      : boundaries_(static_cast<std::size_t>(layers) + 1, 0), now_(now) {}
  // Before layer `index` (1 .. layers - 1) of the forward runs, and once after the last.
  void beforeLayer(int index);
  void forwardDone();
  // Runs `output`'s backward with `gradient` (the graph freed after) and returns per layer (the
  // IR's indices) the seconds its nodes took; 0 for layers that made none.
  std::vector<double> backward(const torch::Tensor& output, const torch::Tensor& gradient);

 private:
  int layerOf(std::uint64_t sequence) const;  // -1: no layer's (the input's layout, say)
  std::vector<std::uint64_t> boundaries_;     // per layer, the first sequence number it may use
  double (*now_)();
};

}  // namespace paraxis::calib
