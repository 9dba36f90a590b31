#pragma once
// Loads a model from the YAML format documented in docs/model-format.md.
// Every error names the file, line, column and key.
#include <string>

#include "graph/model.hpp"

namespace paraxis::graph {

Model loadModelFile(const std::string& path);
Model loadModelText(const std::string& text, const std::string& name);

}  // namespace paraxis::graph
