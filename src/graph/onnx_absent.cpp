// The ONNX reader of a build without Debian's libonnx-dev: .onnx files are refused, saying so.
#include <fmt/format.h>

#include "core/error.hpp"
#include "graph/onnx_loader.hpp"

namespace paraxis::graph {

const char* onnxOperators() { return "none: this build has no ONNX reader"; }

Model loadOnnxModel(const std::string& path) {
  throw ConfigError(fmt::format("{}: this build reads no ONNX files (apt-get install libonnx-dev and rebuild)", path));
}

}  // namespace paraxis::graph
