#pragma once
// The model zoo: named models built in C++ through ModelBuilder. Each takes an input shape
// (channels and spatial extents) and a class count, with published defaults.
// Layer names follow torchvision's module names where torchvision has the model, so that
// the two can be compared layer by layer.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/model.hpp"

namespace paraxis::graph {

struct ZooEntry {
  std::string name;
  std::string description;
  TensorShape defaultInput;
  std::int64_t defaultClasses;  // output units (classes, or regression targets)
  std::function<Model(const TensorShape& input, std::int64_t classes)> build;
};

const std::vector<ZooEntry>& zooEntries();

// The entry of that name ('_' and '-' are interchangeable); throws NotFoundError listing all.
const ZooEntry& findZooEntry(const std::string& name);

struct ZooOptions {
  std::vector<std::int64_t> spatial;  // empty: the default; one value: every dimension
  std::int64_t channels = 0;          // 0: the default
  std::int64_t classes = 0;           // 0: the default
};

Model buildZooModel(const std::string& name, const ZooOptions& options = {});

}  // namespace paraxis::graph
