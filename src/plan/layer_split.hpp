#pragma once
// How a strategy's grid splits each layer: the local share every rank computes and which
// layers run channel-split, spatially split or replicated. Internal to plan.
#include <vector>

#include "cost/compute.hpp"
#include "graph/model.hpp"
#include "plan/strategy.hpp"

namespace paraxis::plan::detail {

struct LayerSplit {
  cost::LocalShare share;        // per sample (samples = 1); scale by the local batch
  bool spatial = false;          // before the split point of a spatial grid
  bool channelSplit = false;     // output channels split across the filter axis
  bool gatherInput = false;      // filter axis: the input is allgathered first
  bool channelParallel = false;  // channel axis: partial sums allreduced
  bool gatherAtSplitPoint = false;  // spatial axis: the input is allgathered here
};

bool isWeighted(const graph::Layer& layer);

// The first layer a spatial grid cannot split (too small, or not spatial): from it on,
// layers run replicated on the gathered activation.
int spatialSplitPoint(const graph::Model& model, const Grid& grid);

std::vector<LayerSplit> splitLayers(const graph::Model& model, const Grid& grid);
void splitLayers(const graph::Model& model, const Grid& grid, std::vector<LayerSplit>& out);

}  // namespace paraxis::plan::detail
