#pragma once
// Timing models' layers on this machine (every rank of the job at once, as they train) and
// fitting a device to them: shared by `bench compute` and `calibrate --quick`.
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "calib/cache_share.hpp"
#include "calib/efficiency_fit.hpp"
#include "calib/saved_timings.hpp"
#include "cli/runtime.hpp"
#include "comm/communicator.hpp"
#include "core/compute_device.hpp"
#include "graph/model.hpp"
#include "hw/cluster.hpp"

namespace paraxis::cli {

struct ComputeBench {
  std::vector<std::string> models{"lenet", "small-cnn", "resnet18@64", "cosmoflow@32"};  // NAME@INPUT: a zoo model at that input
  // Samples per pass: each model is timed at each (the local problems of a split or a small
  // batch are small ones, and a curve fitted to large passes alone mispredicts them).
  std::vector<std::int64_t> batches{32};
  // The most forward FLOPs one timed pass may hold (0: no limit): a model whose samples are
  // larger is timed at fewer of them, so that the layer shapes a job runs (CosmoFlow at 64^3,
  // 8.2 GFLOP a sample) can be timed at all without a pass of minutes and gigabytes.
  double largestPassFlops = 0;
  int threads = 1;
  int repeats = 5;
  // Rounds over every model and batch, each call's time the median over them: the machine's
  // speed drifts over seconds on a shared VM, and a slow spell then slows one round of every
  // layer instead of every pass of a few models' layers.
  int rounds = 1;
  // Timings of every pass in all: the passes are timed again while the speed probe before and
  // after them lies more than steadySpread apart (probeSpread), the steadiest timing kept. A
  // shared VM's slow spell can outlast a calibration's ~20 s of layers: m82's read 6.95 ms
  // before and 9.06 after, where the runs minutes later read 5.6 and sat 21 % faster than
  // predicted.
  int attempts = 1;
  double steadySpread = kSteadySpread;
  // No further timing that would end after this (a calibration's time budget): the last
  // timing's length is what the next is taken to need.
  std::chrono::steady_clock::time_point timeAgainBy = std::chrono::steady_clock::time_point::max();
  std::string dtype = "fp32";  // the peak the fit may raise
  ComputeDevice device;        // where the layers run (the speed probe, of CPU cores, only on the CPU)
};

// The models `specs` name (NAME or NAME@INPUT), loaded before any timing starts; a spec that does
// not load is a ConfigError naming `option` and the spec.
std::vector<graph::Model> loadModels(const std::vector<std::string>& specs, const std::string& option);

using TimedModels = calib::TimedModels;

struct DeviceMeasurement {
  // What was timed: per model and batch its layer calls (each time the median over the rounds,
  // the mean over the ranks); SGD's stream over growing buffers, every rank at once (CPU cores
  // only); the speed probe before and after the layers (fitted.speedProbe is their mean), and
  // with the node's ranks at once and rank 0 alone, the medians of the pairs that gave
  // fitted.sharing (0: not measured).
  calib::SavedTimings timings;
  calib::DeviceFit fit;
  hw::Device fitted;     // `base` with what the calls pinned replaced (its sharing measured)
  calib::CacheFit cache; // the cache share fitted to the stream (a GPU keeps fitted.cacheShare 0)
  int layerTimings = 1;  // how many times every pass was timed (ComputeBench::attempts), the steadiest kept
  // The fixed cost of a layer pass fitted.callOverhead took, and how far each candidate's fit
  // missed the timed models' passes (passesError), in the order tried.
  std::vector<std::pair<double, double>> overheadErrors;
};

// Seconds of the calls' forward passes and of their backward passes on `device`.
std::pair<double, double> predictedSeconds(const hw::Device& device, double peak,
                                           const std::vector<calib::TimedCall>& calls);
// The same as timed: the calls' forward seconds and backward seconds.
std::pair<double, double> measuredSeconds(const std::vector<calib::TimedCall>& calls);
// How far `device` misses the timed models' passes: the mean over every model, batch and pass
// (forward, backward) of |log(predicted / measured)| of the pass's whole time.
double passesError(const calib::TimedModels& timed, const hw::Device& device, double peak);

// Collective over `comm`: every rank times the same passes of `models` (loadModels(bench.models)) at once (lined up by a barrier with
// `deadline`); each fits its own timings. `ranksPerNode`: how many of them share a node's
// cores (the cluster's devices per node, at most the job), for the device's sharing. Progress
// lines go to `progress`.
DeviceMeasurement measureDevice(const ComputeBench& bench, const std::vector<graph::Model>& models,
                                const hw::Device& base, double peak,
                                const comm::Communicator& comm, std::int64_t ranksPerNode, double deadline,
                                std::ostream& progress);
// The device fitted to timings measureDevice took (bench compute --from-calls: the same
// timings, fitted again): `base` with what they pinned replaced. No communication.
DeviceMeasurement fitTimings(calib::SavedTimings timings, const hw::Device& base, double peak, const std::string& dtype);

// Collective: every rank's `value`, averaged.
double meanOverRanks(const comm::Communicator& comm, double value, double deadline);

// "pool2d 13%, 21%  pool3d 3%, 19%  ...": each memory kind's fraction of the bandwidth curve,
// forward and backward, as bench compute and calibrate --quick print it.
std::string memoryKindsText(const hw::Device& device);
// How many times per sample a convolution's weight-gradient pass moves its weights (and a note
// on the counts at the largest the fit tries).
std::string weightTrafficText(const hw::Device& device);
// "cache: SGD's stream (4 to 256 MiB, each rank at once) ran 29.3 GB/s from the cache and 10.7
// GB/s from memory: a rank keeps 29 MiB (device.cache_share), and a fully connected layer ...",
// or why none was fitted.
std::string cacheText(const DeviceMeasurement& m);
// "layer overhead: 25 us a layer pass (device.layer_overhead), the candidate whose fit missed the
// timed models' whole passes least (mean |log(predicted / measured)|: 0 s 11.4 %, 12.5 us 10.8 %,
// ...)", or "" where none was fitted.
std::string callOverheadText(const DeviceMeasurement& m);
// {"seconds": the overhead written, "candidates": [{"seconds", "error"}]} (calibrate --quick
// --json and bench compute --json: layer_overhead).
nlohmann::json callOverheadJson(const DeviceMeasurement& m);
// The speed probe's time when the device was measured.
std::string speedProbeText(const hw::Device& device);
// "note: the speed probe took ... before the layers and ... after ...", where the two are more
// than kSpeedDrift apart (the machine's speed moved while its layers were timed), else "".
std::string speedDriftText(const DeviceMeasurement& m);
inline constexpr double kSpeedDrift = 0.1;
// The spread of two readings of the speed probe: the slower over the faster, less 1 (0 where
// one is missing). Over ComputeBench::steadySpread the layers are timed again.
double probeSpread(double before, double after);
// "sharing: one rank alone ran the speed probe in 6.18 ms, each with 2 ranks a node at once
// 7.11 ms: a rank alone computes 1.15x as fast (...)", or why it was not measured.
std::string sharingText(const DeviceMeasurement& m);
// {"share_bytes", "in_cache_bytes_per_s", "in_memory_bytes_per_s", "stream": [{"bytes", "bytes_per_s"}]}
// (docs/json-output.md).
nlohmann::json cacheJson(const DeviceMeasurement& m);
// {"ranks", "alone_speedup", "probe_at_once_s", "probe_alone_s", "wall_per_cpu": {"lowest",
// "median", "highest"}} (docs/json-output.md).
nlohmann::json sharingJson(const DeviceMeasurement& m);
// The timed steps' wall time over their CPU time (calib::TimedCall::wallPerCpu), over the
// models and batches timed: "time-sharing: ... 1.02-2.09x ...", "time-sharing: not measured
// ..." where timed on the wall clock, or "" on a GPU.
std::string timeSharingText(const DeviceMeasurement& m);

}  // namespace paraxis::cli
