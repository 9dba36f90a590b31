#pragma once
// How a strategy's grid splits each layer: the local share every rank computes, which layers
// run spatially split, channel-sliced (filter axis), channel-parallel or replicated, and the
// moves between them. One rule for both sides: the oracle prices these flags and `train`
// executes them (src/train/spatial_net), so a prediction and its run do the same thing.
//
// Filter axis (ParaDL's filter parallelism with Megatron's column/row pairing): a weighted
// layer reading a whole tensor splits its output channels (filters); the channel slice passes
// through channel-wise layers (batch-norm keeps per-channel statistics, no communication); the
// next weighted layer takes the slice as its input channels (channel-parallel: partial sums
// allreduced into a whole output), so a pair of layers costs one allreduce forward and one
// backward (the whole input's gradient, completed by the split layer's group). Any other layer
// reading a slice gathers it first.
//
// Channel axis (ParaDL's channel parallelism): every weighted layer after the first slices its
// whole input's channels (no communication; backward allgathers the gradient) and allreduces
// its partial output.
#include <string>
#include <vector>

#include "cost/compute.hpp"
#include "graph/model.hpp"
#include "plan/strategy.hpp"

namespace paraxis::plan {

struct LayerSplit {
  cost::LocalShare share;           // per sample (samples = 1); scale by the local batch
  bool spatial = false;             // before the split point of a spatial grid
  bool gatherAtSplitPoint = false;  // spatial axis: the input is allgathered here
  bool channelSplit = false;        // the output is a channel slice (filter axis)
  bool gatherInput = false;         // the input's slices are allgathered first
  bool completeInputGradient = false;  // filter axis: a whole input read by split filters; its gradient is allreduced
  bool channelParallel = false;     // input channels split, partial outputs allreduced into a whole output
  bool sliceInput = false;          // channel axis: the channel-parallel layer slices its whole input
};

// Convolutions (ungrouped), transposed convolutions and fully connected layers: the layers
// whose weights a filter or channel axis splits.
bool isWeighted(const graph::Layer& layer);
bool splitsChannels(const graph::Layer& layer);

// The first layer a spatial grid cannot split (too small, or not spatial): from it on,
// layers run replicated on the gathered activation.
int spatialSplitPoint(const graph::Model& model, const Grid& grid);

std::vector<LayerSplit> splitLayers(const graph::Model& model, const Grid& grid);
// The first layer whose channels the grid's filter or channel axis cannot split (a rank would
// hold none), as one line naming it and the axis; empty when there is none.
std::string channelAxisProblem(const graph::Model& model, const Grid& grid);
void splitLayers(const graph::Model& model, const Grid& grid, std::vector<LayerSplit>& out);

}  // namespace paraxis::plan
