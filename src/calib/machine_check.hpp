#pragma once
// Whether a cluster description describes the machine a measured run ran on.
#include <string>
#include <vector>

#include "calib/calibration.hpp"
#include "hw/cluster.hpp"

namespace paraxis::calib {

inline constexpr double kSpeedTolerance = 1.15;

// One line per run whose machine the cluster does not describe: it ran on CPU cores and the
// cluster's device is not a CPU (its name does not say "CPU") or the other way round; the
// cluster places the run's ranks on other nodes than it had (devices per node against ranks
// per host); or it is the `local` preset, whose figures are read from `thisHost`, and the run
// ran on another host.
// A run whose speed probe (RunMachine::speedProbe) took more than kSpeedTolerance times the
// cluster device's, or less than its inverse, ran on a machine faster or slower than the one
// measured: back-to-back probes here agree within a few per cent, the machine drifts 20-40 %.
// Runs that do not say where they ran (CSV rows, older reports) are not checked.
std::vector<std::string> machineWarnings(const hw::Cluster& cluster, const std::vector<MeasuredRun>& runs,
                                         const std::string& thisHost);

}  // namespace paraxis::calib
