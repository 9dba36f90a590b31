#pragma once
// Loads a cluster from the YAML format documented in docs/cluster-format.md.
#include <string>

#include "hw/cluster.hpp"

namespace paraxis::hw {

Cluster loadClusterFile(const std::string& path);
Cluster loadClusterText(const std::string& text, const std::string& name);

// The cluster as a cluster file (every value explicit, in base units); loads back equal.
std::string clusterYaml(const Cluster& cluster);

// A cluster file's text with its top-level implementation section replaced by (or given)
// `implementation`; the rest of the text, comments included, is kept.
std::string withImplementation(const std::string& yaml, const Implementation& implementation);

}  // namespace paraxis::hw
