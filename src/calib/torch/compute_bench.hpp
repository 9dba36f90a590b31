#pragma once
// Times a model's layers on this machine through LibTorch, for fitting the device's compute
// model (cost/efficiency_fit.hpp). The header keeps torch out of its includers.
#include <cstdint>
#include <functional>
#include <vector>

#include "calib/efficiency_fit.hpp"
#include "graph/model.hpp"

namespace paraxis::calib {

// Every layer's forward pass of `model` at `batch` samples on `threads` threads, as the
// trainer runs it (training mode, autograd recording): the median over `repeats` passes after
// one warm-up. One call per layer that computes, with its FLOPs and bytes from the IR; then
// each such layer's backward pass alone, the same way (TimedCall's backward fields).
// `beforePass` runs before every pass: ranks that time at once (as they train at once,
// sharing the node's cores and memory) line their passes up there.
std::vector<TimedCall> benchLayers(const graph::Model& model, std::int64_t batch, int threads, int repeats,
                                         const std::function<void()>& beforePass = {});

}  // namespace paraxis::calib
