#include "plan/layer_split.hpp"

#include <fmt/format.h>

#include <cmath>
#include <span>

namespace paraxis::plan {
namespace {

using graph::LayerKind;

// The grid's splits of a tensor's spatial dimensions (none for other ranks): a fixed array,
// since the oracle asks for it layer after layer.
struct Splits {
  std::size_t count = 0;
  int value[3] = {1, 1, 1};
  std::size_t size() const { return count; }
  bool empty() const { return count == 0; }
  int operator[](std::size_t d) const { return value[d]; }
};

Splits splitsFor(const Grid& grid, int rank) {
  if (rank == 3) return {3, {grid.depth, grid.height, grid.width}};
  if (rank == 2) return {2, {grid.height, grid.width, 1}};
  return {};
}

// Layers that work channel by channel can run on a channel slice (flatten: its features are the
// channels' runs of positions, so a slice of channels is a contiguous slice of features).
bool channelwise(LayerKind kind) {
  return kind == LayerKind::kBatchNorm || kind == LayerKind::kActivation || kind == LayerKind::kDropout ||
         kind == LayerKind::kMaxPool || kind == LayerKind::kAvgPool || kind == LayerKind::kAdd ||
         kind == LayerKind::kAdaptiveAvgPool || kind == LayerKind::kGlobalAvgPool || kind == LayerKind::kFlatten;
}

// The filter axis's rule for layer i over `ranks` (the header's): its inputs' flags are
// settled. `summed[j]`: a whole tensor whose gradient is summed over the ranks anyway (a
// filter head's input, gathered at the split point), so a split layer reading it leaves its
// partial input gradient as it is.
void filterAxis(const graph::Model& model, int ranks, int i, const std::vector<char>& summed,
                std::vector<LayerSplit>& out) {
  const graph::Layer& layer = model.layer(i);
  LayerSplit& s = out[i];
  bool inputSplit = !layer.inputs.empty();
  bool anySplit = false;
  for (int input : layer.inputs) {
    inputSplit = inputSplit && out[input].channelSplit;
    anySplit = anySplit || out[input].channelSplit;
  }
  if (splitsChannels(layer) && inputSplit) {
    s.channelParallel = true;
    s.share.inputChannels = 1.0 / ranks;
  } else if (splitsChannels(layer)) {
    const int input = layer.inputs.front();
    s.channelSplit = true;
    s.share.outputChannels = 1.0 / ranks;
    s.completeInputGradient = model.layer(input).kind != LayerKind::kInput && summed[input] == 0;
  } else if (inputSplit && channelwise(layer.kind)) {
    // It reads its input's slice as well as writing its own: a batch norm, pooling or ReLU on
    // half the channels moves half the bytes both ways.
    s.channelSplit = true;
    s.share.inputChannels = 1.0 / ranks;
    s.share.outputChannels = 1.0 / ranks;
  } else {
    s.gatherInput = anySplit;
  }
}

}  // namespace

bool isWeighted(const graph::Layer& layer) {
  return layer.kind == LayerKind::kConv || layer.kind == LayerKind::kDeconv ||
         layer.kind == LayerKind::kFullyConnected;
}

bool splitsChannels(const graph::Layer& layer) {
  if (layer.kind == LayerKind::kFullyConnected) return true;
  return isWeighted(layer) && layer.as<graph::ConvAttrs>().groups == 1;
}

int spatialSplitPoint(const graph::Model& model, const Grid& grid) {
  if (grid.spatial() == 1) return model.size();
  for (int i = 1; i < model.size(); ++i) {
    const graph::Layer& layer = model.layer(i);
    const auto splits = splitsFor(grid, layer.output.rank());
    const bool spatialKind = layer.kind != LayerKind::kGlobalAvgPool && layer.kind != LayerKind::kAdaptiveAvgPool &&
                             layer.kind != LayerKind::kFlatten && layer.kind != LayerKind::kFullyConnected &&
                             layer.kind != LayerKind::kSoftmaxLoss && layer.kind != LayerKind::kMseLoss;
    if (!spatialKind || splits.empty()) return i;
    for (std::size_t d = 0; d < splits.size(); ++d) {
      const std::int64_t halo = layer.counts.halo.size() > d ? layer.counts.halo[d] : 0;
      if (layer.output.spatial[d] < splits[d] || layer.output.spatial[d] / splits[d] < std::max<std::int64_t>(1, halo)) {
        return i;
      }
    }
  }
  return model.size();
}

std::vector<LayerSplit> splitLayers(const graph::Model& model, const Grid& grid) {
  std::vector<LayerSplit> out;
  splitLayers(model, grid, out);
  return out;
}

void splitLayers(const graph::Model& model, const Grid& grid, std::vector<LayerSplit>& out) {
  out.assign(model.size(), LayerSplit{});
  if (grid.modelParallel() == 1) return;  // every rank runs whole layers
  const int splitPoint = spatialSplitPoint(model, grid);
  const bool head = grid.filterHead && grid.spatial() > 1;
  std::vector<char> summed(static_cast<std::size_t>(model.size()), 0);  // see filterAxis
  bool seenWeighted = false;
  for (int i = 0; i < model.size(); ++i) {
    const graph::Layer& layer = model.layer(i);
    LayerSplit& s = out[i];
    const graph::TensorShape& in = layer.inputs.empty() ? layer.output : model.layer(layer.inputs.front()).output;
    if (i < splitPoint && grid.spatial() > 1) {
      s.spatial = true;
      const Splits splits = splitsFor(grid, layer.output.rank());
      cost::applySpatialSplit(layer, in, std::span<const int>(splits.value, splits.count), s.share);
    }
    s.gatherAtSplitPoint = grid.spatial() > 1 && i == splitPoint && i < model.size();
    if (grid.filter > 1) filterAxis(model, grid.filter, i, summed, out);
    if (head && i >= splitPoint) {
      filterAxis(model, grid.spatial(), i, summed, out);
      bool gathered = !s.channelSplit && !s.channelParallel;
      for (int input : layer.inputs) gathered = gathered && (input < splitPoint || summed[input] != 0);
      summed[i] = gathered ? 1 : 0;
    }
    if (grid.channel > 1 && seenWeighted && splitsChannels(layer) && !s.channelParallel) {
      s.channelParallel = true;
      s.sliceInput = true;
      s.share.inputChannels = 1.0 / grid.channel;
    }
    seenWeighted = seenWeighted || isWeighted(layer);
  }
}

std::string channelAxisProblem(const graph::Model& model, const Grid& grid) {
  const bool head = grid.filterHead && grid.spatial() > 1;
  if (grid.filter == 1 && grid.channel == 1 && !head) return {};
  // A filter head splits over the spatial ranks; the filter and channel axes need no spatial part.
  const std::vector<LayerSplit> s =
      splitLayers(model, head ? grid : Grid{.channel = grid.channel, .filter = grid.filter});
  const int filterRanks = head ? grid.spatial() : grid.filter;
  const char* filterAxisName = head ? "head=filter over the spatial ranks, " : "filter=";
  const auto refuse = [&](const graph::Layer& l, std::int64_t channels, const char* what, int ranks, const char* axis) {
    return fmt::format("layer '{}' ({}): {} {} channels cannot be split over {} ranks ({}{}): some rank would hold none",
                       l.name, graph::kindName(l.kind), channels, what, ranks, axis, ranks);
  };
  for (int i = 1; i < model.size(); ++i) {
    const graph::Layer& l = model.layer(i);
    if (s[i].channelSplit && isWeighted(l) && l.output.channels < filterRanks) {
      return refuse(l, l.output.channels, "output", filterRanks, filterAxisName);
    }
    const int input = l.inputs.empty() ? 0 : l.inputs.front();
    const std::int64_t inputs = model.layer(input).output.channels;
    const int ranks = s[i].sliceInput ? grid.channel : filterRanks;
    if (s[i].channelParallel && !s[input].channelSplit && inputs < ranks) {
      return refuse(l, inputs, "input", ranks, s[i].sliceInput ? "channel=" : filterAxisName);
    }
  }
  return {};
}

}  // namespace paraxis::plan
