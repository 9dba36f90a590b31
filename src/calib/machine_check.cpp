#include "calib/machine_check.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "core/thread_slice.hpp"

namespace paraxis::calib {
namespace {

// Empty when the cluster puts the run's ranks on nodes as the run had them on hosts.
std::string placementMismatch(const hw::Cluster& cluster, const RunMachine& m, std::int64_t ranks) {
  const std::string ran = fmt::format("ran {} rank{} on {} host{} ({} per host)", ranks, ranks == 1 ? "" : "s", m.hosts,
                                      m.hosts == 1 ? "" : "s", m.ranksPerHost);
  const std::string described = fmt::format("cluster '{}' places {} device{} per node", cluster.name,
                                            cluster.devicesPerNode, cluster.devicesPerNode == 1 ? "" : "s");
  if (m.hosts == 1 && cluster.devicesPerNode < ranks) return ran + "; " + described;
  if (m.hosts > 1 && cluster.devicesPerNode != m.ranksPerHost) return ran + "; " + described;
  if (m.hosts > cluster.nodes) return ran + fmt::format("; cluster '{}' has {} node{}", cluster.name, cluster.nodes,
                                                        cluster.nodes == 1 ? "" : "s");
  return "";
}

// A device description is a CPU's when its name says so ("CPU core", the local preset's).
bool describesCpu(const hw::Device& device) {
  std::string name = device.name;
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return name.find("cpu") != std::string::npos;
}

}  // namespace

std::vector<std::string> machineWarnings(const hw::Cluster& cluster, const std::vector<MeasuredRun>& runs,
                                         const std::string& thisHost) {
  std::vector<std::string> warnings;
  for (const MeasuredRun& run : runs) {
    const RunMachine& m = run.machine;
    if (m.hosts == 0) continue;
    if (!m.device.empty() && (m.device == "cpu") != describesCpu(cluster.device)) {
      warnings.push_back(fmt::format("{}: ran on {}; cluster '{}' describes {} devices", run.label,
                                     m.device == "cpu" ? "CPU cores" : m.device, cluster.name, cluster.device.name));
    }
    const std::string placement = placementMismatch(cluster, m, run.strategy.grid.total());
    if (!placement.empty()) warnings.push_back(fmt::format("{}: {}", run.label, placement));
    if (const double slowdown = m.slowdownAgainst(cluster.device);
        slowdown > 0 && std::abs(std::log(slowdown)) > std::log(kSpeedTolerance)) {
      warnings.push_back(fmt::format("{}: the machine ran {:.2f}x {} than when cluster '{}' was measured (speed probe "
                                     "{:.2f} ms against {:.2f} ms): its predicted compute is off by about that much",
                                     run.label, slowdown > 1 ? slowdown : 1 / slowdown, slowdown > 1 ? "slower" : "faster",
                                     cluster.name, m.speedProbe * 1e3, cluster.device.speedProbe * 1e3));
    }
    if (const auto& measured = cluster.implementation.commThreadSlice;
        measured && m.commThreadSlice && std::abs(*measured - *m.commThreadSlice) > 1e-9) {
      warnings.push_back(fmt::format("{}: its communication threads ran with {}; cluster '{}' was measured with {} "
                                     "(implementation.comm_thread_slice): its predicted overlap and waits may not hold",
                                     run.label, core::threadSliceText(*m.commThreadSlice), cluster.name,
                                     core::threadSliceText(*measured)));
    }
    if (cluster.name == "local" && !m.host.empty() && m.host != thisHost) {
      warnings.push_back(fmt::format("{}: ran on host '{}'; the local preset describes this host ('{}'): give the cluster "
                                     "file of the host it ran on", run.label, m.host, thisHost));
    }
  }
  return warnings;
}

}  // namespace paraxis::calib
