#pragma once
// Loads a model named on the command line: a zoo name, or a YAML file.
#include <cstdint>
#include <string>

#include "graph/model.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace paraxis::cli {

struct ModelSource {
  std::string model;
  std::string input;          // spatial extents "224", "224x224", "128x128x128"
  std::int64_t channels = 0;  // 0: the model's
  std::int64_t classes = 0;   // 0: the model's
};

graph::Model loadModel(const ModelSource& source);

// The model options, registered once for every command that builds a model: --input,
// --channels and --classes (how a zoo model is built), and --model (unless the command takes the
// model as a positional argument) with its default named in `modelHelp`.
void addModelShapeOptions(CLI::App& command, ModelSource& source);
CLI::Option* addModelOptions(CLI::App& command, ModelSource& source, const std::string& modelHelp);

// Before long work whose result goes to `path`: fails (naming `option`) unless the folder it
// would be written in exists. An empty path passes.
void requireWritableDirectory(const std::string& path, const char* option);

}  // namespace paraxis::cli
