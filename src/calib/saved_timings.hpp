#pragma once
// The layer timings a device fit rests on, written by `bench compute --save-calls` and fitted
// again by `bench compute --from-calls`: two fits of the same timings differ only by the fit,
// where two timings minutes apart on a shared machine differ by its load (2026-12-06: two
// calibrations 30 s apart put the same 20 training runs at 7.2 and 13.6 %).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "calib/cache_share.hpp"
#include "calib/efficiency_fit.hpp"

namespace paraxis::calib {

// Per model and batch ("lenet x4"), its layer calls.
using TimedModels = std::vector<std::pair<std::string, std::vector<TimedCall>>>;

struct SavedTimings {
  TimedModels timed;
  std::vector<StreamPoint> stream;  // SGD's stream, every rank at once (CPU cores only)
  // The speed probe before the layers and after, and with the node's ranks at once and rank 0
  // alone (0: not measured), and how many ranks a node shared its cores.
  double probeBefore = 0, probeAfter = 0, probeAtOnce = 0, probeAlone = 0;
  std::int64_t ranksPerNode = 1;
  bool gpu = false;  // the layers ran on a GPU (the fit leaves out the CPU's weight traffic)
};

nlohmann::json savedTimingsJson(const SavedTimings& timings);
// Writes savedTimingsJson to `path` atomically; `option` names it in an error (--save-calls).
void writeSavedTimings(const std::string& path, const SavedTimings& timings, const std::string& option);
// Reads what savedTimingsJson wrote; a file that does not hold it throws ConfigError naming
// `path` and the key.
SavedTimings readSavedTimings(const std::string& path);

}  // namespace paraxis::calib
