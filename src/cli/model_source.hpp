#pragma once
// Loads a model named on the command line: a zoo name, or a YAML file.
#include <cstdint>
#include <string>

#include "graph/model.hpp"

namespace paraxis::cli {

struct ModelSource {
  std::string model;
  std::string input;          // spatial extents "224", "224x224", "128x128x128"
  std::int64_t channels = 0;  // 0: the model's
  std::int64_t classes = 0;   // 0: the model's
};

graph::Model loadModel(const ModelSource& source);

// Before long work whose result goes to `path`: fails (naming `option`) unless the folder it
// would be written in exists. An empty path passes.
void requireWritableDirectory(const std::string& path, const char* option);

}  // namespace paraxis::cli
