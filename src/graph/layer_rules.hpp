#pragma once
// The per-kind rules the builder applies to each new layer: validate and expand its
// hyper-parameters, infer its output shape, and derive its counts.
#include <vector>

#include "graph/layer.hpp"

namespace paraxis::graph {

// Expands broadcast Dims to the input's rank, checks hyper-parameters and input shapes, and
// sets layer.output. Throws ShapeError / ConfigError naming the layer.
void inferShape(Layer& layer, const std::vector<const Layer*>& inputs);

// Params, FLOPs per pass, activation bytes and halo, from the inferred shapes.
LayerCounts countLayer(const Layer& layer, const std::vector<const Layer*>& inputs,
                       int bytesPerElement);

}  // namespace paraxis::graph
