#pragma once
// Whether a cluster description describes the machine a measured run ran on.
#include <string>
#include <vector>

#include "calib/calibration.hpp"
#include "hw/cluster.hpp"

namespace paraxis::calib {

// One line per run whose machine the cluster does not describe: it ran on CPU cores and the
// cluster's device is not a CPU (its name does not say "CPU") or the other way round; the
// cluster places the run's ranks on other nodes than it had (devices per node against ranks
// per host); or it is the `local` preset, whose figures are read from `thisHost`, and the run
// ran on another host.
// Runs that do not say where they ran (CSV rows, older reports) are not checked.
std::vector<std::string> machineWarnings(const hw::Cluster& cluster, const std::vector<MeasuredRun>& runs,
                                         const std::string& thisHost);

}  // namespace paraxis::calib
