#pragma once
// Built-in machine descriptions, written in the same YAML format users write, so that the
// presets double as examples and go through the same validation.
#include <string>
#include <vector>

#include "hw/cluster.hpp"

namespace paraxis::hw {

struct Preset {
  std::string name;
  std::string yaml;
};

const std::vector<Preset>& presets();

// A preset name or a path to a .yaml file; throws NotFoundError listing the presets.
Cluster loadCluster(const std::string& nameOrPath);

// The YAML text behind loadCluster(nameOrPath): the preset's, or the file's.
std::string clusterText(const std::string& nameOrPath);

}  // namespace paraxis::hw
