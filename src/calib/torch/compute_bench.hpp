#pragma once
// Times a model's layers on this machine through LibTorch, for fitting the device's compute
// model (cost/efficiency_fit.hpp). The header keeps torch out of its includers.
#include <cstdint>
#include <functional>
#include <vector>

#include "calib/efficiency_fit.hpp"
#include "core/compute_device.hpp"
#include "graph/model.hpp"

namespace paraxis::calib {

// Every layer's forward pass of `model` at `batch` samples on `threads` threads, as the
// trainer runs it (training mode, autograd recording): the median over `repeats` passes after
// two warm-ups. One call per layer that computes, with its FLOPs and bytes from the IR; with
// each its backward (TimedCall's backward fields): on the CPU its share of the backward through
// the whole model that follows each forward, as a training step runs it (backward_clock.hpp);
// on a GPU its backward pass alone.
// `beforePass` runs before every pass: ranks that time at once (as they train at once,
// sharing the node's cores and memory) line their passes up there.
// `device`: where the layers run (a GPU's layers are timed from synchronisation to
// synchronisation, less what launching a one-element kernel on the idle GPU and waiting for
// it takes, in the layout training uses there, NCHW).
std::vector<TimedCall> benchLayers(const graph::Model& model, std::int64_t batch, int threads, int repeats,
                                         const std::function<void()>& beforePass = {}, const ComputeDevice& device = {});

// The speed probe: one fixed training step (kSpeedProbe), forward and backward, on one
// thread whatever the job runs on (so that figures taken by different jobs compare): the
// median of 7 passes after 2 warm-ups, in seconds. calibrate records it beside the device it
// fits and train beside each run (every rank at once, as they train), so that validate can
// tell a run made while the machine ran slower or faster than at calibration (this shared
// machine's speed drifts by 20-40 % within an hour) from an error of the model.
// `cpuClock`: its passes on the thread's CPU clock instead (calibrate's pairs of it with every rank
// at once and one alone, where the layers are timed so: the sharing of caches and memory
// bandwidth alone, the cores' time-sharing being hw::TimeSharing's).
double speedProbeSeconds(const std::function<void()>& beforePass = {}, bool cpuClock = false);
inline constexpr const char* kSpeedProbe = "small-cnn at 32x32, 8 samples, forward and backward, 1 thread";

}  // namespace paraxis::calib
