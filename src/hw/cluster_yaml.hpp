#pragma once
// Loads a cluster from the YAML format documented in docs/cluster-format.md.
#include <string>

#include "hw/cluster.hpp"

namespace paraxis::hw {

Cluster loadClusterFile(const std::string& path);
Cluster loadClusterText(const std::string& text, const std::string& name);

}  // namespace paraxis::hw
