#pragma once
// An IR model run "spatial early, sample late" (Dryden et al.) on a group of ranks that share
// one data replica: every layer that can runs on each rank's spatial block through the
// distributed layers of src/parallel (convolutions, transposed convolutions, pooling,
// batch-norm with group statistics, element-wise, add, concat, dropout); global average pooling
// ends the split with the pooled tensor whole on every rank; at the first layer that needs a
// whole sample (flatten, fully connected, ...) the tensor is shuffled to whole samples, each
// rank taking its share of the batch, and the rest of the model runs sample-parallel.
//
// The loss of each rank is scaled so that its gradients, averaged over all ranks of all
// replicas (the gradient engine's allreduce), are the gradients of the global batch's mean
// loss: every parameter is reduced by the one allreduce, spatial partial sums included. A
// filter head (SpatialOptions::filterHead) runs the head on the whole batch instead, its
// weights split over the group.
//
// With a filter or channel axis (SpatialOptions::slices; spatial_net_channels.cpp) each layer
// also follows plan's channel rule (plan/layer_split.hpp): filter layers hold their slice of
// the weights and compute a slice of the channels, channel-parallel layers sum partial outputs
// over the group, slices are gathered where a layer needs the whole tensor. The grid's spatial
// part may then be a single rank.
#include <torch/torch.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "parallel/channel_split.hpp"
#include "parallel/spatial_split.hpp"
#include "plan/layer_split.hpp"
#include "train/executor.hpp"
#include "train/ir_module.hpp"

namespace paraxis::train {

struct SpatialOptions {
  // > 0: layers from this IR index on run on whole samples even where they could run split
  // (a per-layer plan's switch; the shuffle moves there).
  int sampleFrom = 0;
  // Batch-norm statistics of each rank's block alone (Distconv's local option: no
  // communication, statistics of fewer cells) instead of the whole group's.
  bool localBatchNorm = false;
  // Per IR layer, the spatial grid of its output over the same group (a per-layer plan that
  // changes grids: the tensor is regridded, or the windowed layer reads across grids); empty:
  // the split's grid throughout.
  std::vector<std::vector<int>> layerGrids;
  // The grid's filter or channel axis: the group of ranks (of this replica and spatial block)
  // that split channels by plan's rule (plan/layer_split.hpp); null: none. The group must
  // outlive every backward pass.
  const parallel::ChannelSplit* slices = nullptr;
  bool filterAxis = true;  // the group is the filter axis (else the channel axis)
  // Both axes (filter x channel): `slices` is the filter axis's group and this the channel
  // axis's (ranks of the same filter slice); layers the rule gives both split their weights
  // over both (output channels by filter, input channels by channel). Null: one axis.
  const parallel::ChannelSplit* channelSlices = nullptr;
  // A filter head (plan::Grid::filterHead): the layers from the shuffle point on run on the
  // replica's whole batch on every rank, their weights split over the spatial group by the
  // filter axis's rule (`slices` must then be that group). The spatial layers' weight gradients
  // are summed over the group as they are computed, so the gradient engine reduces over the
  // data replicas only (the head's slices differ from rank to rank of the group).
  bool filterHead = false;
};

class SpatialNet final : public BatchExecutor {
 public:
  enum class Layout : std::uint8_t { kSpatial, kReplicated, kSamples };

  // Throws ConfigError naming the first layer whose extents the grid cannot split (a rank
  // would hold an empty block). `split` must outlive every backward pass through run().
  SpatialNet(IrNet net, const parallel::SpatialSplit& split, SpatialOptions options = {});

  // The replica's whole batch in; this rank's block taken here. Loss layers hold their input,
  // as this rank computes the loss on it (spatial block or its samples).
  std::vector<torch::Tensor> run(const torch::Tensor& batch) override;
  torch::Tensor loss(const std::vector<torch::Tensor>& outputs, const torch::Tensor& target) override;
  torch::Tensor prediction(const std::vector<torch::Tensor>& outputs) override;
  torch::Tensor targetPart(const torch::Tensor& target) override;
  double replicaLoss(double local) override;
  double share() const override;
  // The parameters with every channel slice gathered (collective over the channel group).
  std::vector<torch::Tensor> wholeParameters() override;
  LayerComm layerComm() const override { return comm_; }
  ~SpatialNet() override;
  SpatialNet(const SpatialNet&) = delete;  // the thread's time sink points into it
  SpatialNet& operator=(const SpatialNet&) = delete;

  // The layers one at a time (a pipeline stage runs its own): startRun for a batch of `samples`
  // (the replica's, or a micro-batch), then runLayer for each layer in order, on outputs that
  // hold the batch's local part at 0 (localInput) or tensors as this rank holds them
  // (localShape: its spatial block, sample share, channel slice); countBackward before the
  // backward pass. The layers' communication adds up in layerComm() until resetCommTimes().
  void startRun(std::int64_t samples);
  torch::Tensor localInput(const torch::Tensor& batch) const { return net_->laidOut(splitOf(0).local(batch)); }
  void runLayer(int index, std::vector<torch::Tensor>& outputs);
  void countBackward() { parallel::setCommTimeSink(&comm_.backward); }
  void resetCommTimes() { comm_ = {}; }
  std::vector<std::int64_t> localShape(int layer, std::int64_t samples) const;

  IrNet& net() { return net_; }
  Layout layout(int layer) const { return layout_.at(layer); }
  // The first layer that runs on whole samples (the shuffle point), or the model's size.
  int sampleStart() const;
  // "spatial to layer 'pool3', then samples from 'flatten'": for progress output.
  std::string describe() const override;
  std::string describeChannels() const;  // the channel axis's part of it (empty: none)

 private:
  bool runsSpatially(int index) const;
  void checkExtents(int index) const;
  torch::Tensor applySpatial(int index, const std::vector<torch::Tensor>& outputs);
  // The inputs of a non-windowed layer on its own grid (regridded where a plan changes grids).
  torch::Tensor applyOnGrid(int index, const std::vector<torch::Tensor>& outputs);
  const parallel::SpatialSplit& splitOf(int layer) const { return *splitOf_.at(layer); }
  torch::Tensor toSamples(int source, const std::vector<torch::Tensor>& outputs);
  // Dropout draws the replica batch's whole mask on every rank and keeps this rank's part, so a
  // sample's mask does not depend on how the batch is split (it equals a one-rank run's).
  torch::Tensor dropout(int index, const torch::Tensor& x) const;
  torch::Tensor targetPart(const torch::Tensor& target, Layout layout, const parallel::SpatialSplit& split) const;
  // The channel axis (options_.slices): the rule, each output's slicing, the sliced weights.
  void planChannels();
  plan::Grid headGrid() const;  // the spatial grid as plan's, with a filter head
  void sliceParameters();
  void sliceParameter(const torch::Tensor& p, std::int64_t dim, parallel::Slicing slicing,
                      const parallel::ChannelSplit& group);
  // The group a channel-parallel layer's input is split over: the channel axis's where it
  // slices a whole input (sliceInput), else the filter axis's (or the one axis's).
  const parallel::ChannelSplit& inputGroup(int index) const;
  parallel::Slicing inputSlicing(int index) const;  // what a channel-parallel layer's input features hold
  bool sliced(int layer) const { return !slicing_.empty() && slicing_[layer].channels > 0; }
  // Layer `index`'s inputs as its channel rule reads them: slices gathered, whole inputs of
  // filter layers with their gradients completed (a copy of the handles only where one moves).
  const std::vector<torch::Tensor>& channelInputs(int index, const std::vector<torch::Tensor>& outputs);
  // Channel-parallel layers: the input channels this rank reads (sliced from a whole input on
  // the channel axis; FC inputs flattened), and the partial sums of its output summed over the
  // group in the layers' layout (IrNet::laidOut), then the bias once.
  bool channelParallel(int index) const { return !rule_.empty() && rule_[index].channelParallel; }
  torch::Tensor parallelInput(int index, torch::Tensor x) const;
  torch::Tensor finishPartial(int index, const torch::Tensor& partial) const;
  // A layer on whole samples (after the shuffle, or no spatial grid).
  torch::Tensor applySamples(int index, const std::vector<torch::Tensor>& in);

  // Filter head: the spatial layers' parameters sum their gradients over the group.
  void sumSpatialGradients();

  IrNet net_;
  const parallel::SpatialSplit& split_;
  SpatialOptions options_;
  std::vector<std::pair<torch::Tensor, unsigned>> gradientHooks_;  // removed with the net
  std::deque<parallel::SpatialSplit> grids_;  // one per distinct grid (stable addresses: backward holds them)
  std::vector<const parallel::SpatialSplit*> splitOf_;  // per layer's output
  std::vector<Layout> layout_;  // per layer's output (loss layers: their input's, as converted)
  std::vector<int> losses_;
  std::vector<plan::LayerSplit> rule_;        // per layer, when channels are split
  std::vector<parallel::Slicing> slicing_;    // per layer's output: channels 0 = whole
  struct SlicedParameter {
    torch::Tensor tensor;
    std::int64_t dim = 0;
    parallel::Slicing slicing;
    const parallel::ChannelSplit* group = nullptr;
  };
  std::vector<SlicedParameter> slicedParameters_;
  std::vector<torch::Tensor> moved_;  // channelInputs' copy
  std::vector<torch::Tensor> converted_;  // per layer: its output shuffled to samples, in this run
  LayerComm comm_;  // run() counts into .forward, then points the thread's sink at .backward
  std::int64_t samples_ = 0;  // the replica batch of this run
};

}  // namespace paraxis::train
