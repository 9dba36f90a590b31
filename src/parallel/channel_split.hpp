#pragma once
// How a tensor's channels are split over a group of ranks (ParaDL's filter and channel
// parallelism; Megatron's column/row pairing), and the four moves between a whole tensor and
// a channel slice. Each move's gradient is the move that keeps this rule: the gradient of a
// whole tensor is whole on every rank of the group.
//
//   gatherChannels    slice -> whole: allgather. Backward: a reduce-scatter when the consumer
//                     is split (each rank's gradient is a partial sum), this rank's slice of the
//                     gradient when every rank computes the same thing with it.
//   sliceChannels     whole -> slice: no communication. Backward: allgather of the slices.
//   sumPartials       partial sums -> whole: allreduce. Backward: the gradient as it is.
//   completeGradient  whole -> whole, read by a split consumer: nothing forward. Backward:
//                     allreduce of the partial gradients.
//
// Slices may be uneven (C channels over p ranks: the first C % p ranks one more, the rule
// SpatialSplit uses). The group must outlive every backward pass through these moves. Their
// time counts as layer collectives (comm_time.hpp).
#include <torch/torch.h>

#include <cstdint>

#include "comm/communicator.hpp"
#include "parallel/redistribute.hpp"

namespace paraxis::parallel {

// What a dimension holds: `channels` runs of `unit` elements (unit > 1 once a channel slice is
// flattened into features: a slice of channels is then a contiguous slice of features).
struct Slicing {
  std::int64_t channels = 0;
  std::int64_t unit = 1;
};

struct ChannelSplit {
  comm::Communicator comm;
  // Rank `rank`'s slice (in elements of the dimension).
  static Range sliceAt(int rank, int ranks, Slicing slicing);
  Range slice(Slicing slicing) const { return sliceAt(comm.rank(), comm.size(), slicing); }
  // This rank's slice of dimension `dim` of `t` (a weight's output or input channels).
  torch::Tensor local(const torch::Tensor& t, std::int64_t dim = 1, std::int64_t unit = 1) const;
  // Every rank's slice of dimension `dim` -> the whole tensor (not differentiable: weights).
  torch::Tensor gather(const torch::Tensor& slice, std::int64_t dim, Slicing slicing) const;
};

enum class Consumer : std::uint8_t { kSplit, kRedundant };

// `x` holds this rank's slice of dimension 1.
torch::Tensor gatherChannels(const ChannelSplit& split, const torch::Tensor& x, Slicing slicing, Consumer consumer);
torch::Tensor sliceChannels(const ChannelSplit& split, const torch::Tensor& x, std::int64_t unit = 1);
torch::Tensor sumPartials(const ChannelSplit& split, const torch::Tensor& x);
torch::Tensor completeGradient(const ChannelSplit& split, const torch::Tensor& x);
// The sum of `x` over the group, into a new tensor (not differentiable: the moves' wire, and
// gradients summed outside autograd); counted as a layer collective.
torch::Tensor sumOverGroup(const ChannelSplit& split, const torch::Tensor& x);

}  // namespace paraxis::parallel
