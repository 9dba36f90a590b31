#pragma once
// ONNX models (an exported PyTorch model, say) as the IR: each node mapped to a layer, shapes
// inferred by the IR from the data input's, weights' shapes read from the initializers or,
// for a model exported without its parameters, from the graph inputs that stand for them.
// A node the IR has no layer for is refused in one line naming the node and its operator.
// Needs Debian's libonnx-dev at build time; a build without it refuses .onnx files saying so.
#include <string>

#include "graph/model.hpp"

namespace paraxis::graph {

Model loadOnnxModel(const std::string& path);

// The operators loadOnnxModel maps, for messages and docs.
const char* onnxOperators();

}  // namespace paraxis::graph
