#pragma once
// One mechanism for every change of data placement on a group of ranks (Distconv's halo
// exchange and shuffle alike): each rank owns one box of a global tensor (the boxes partition
// it) and needs another box, which may overlap its neighbours' (a convolution's window with
// its halos), lie elsewhere (spatial blocks -> whole samples) or reach past the global tensor
// (zero padding; -inf for max pooling). Forward sends every needed cell from its owner
// (one all-to-all-v over the group); backward sends each needed cell's gradient back to its
// owner, who adds them up, so overlapping windows reverse-accumulate as halo exchange does.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"
#include "parallel/comm_time.hpp"

namespace paraxis::parallel {

struct Range {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end > begin ? end - begin : 0; }
};

using Box = std::vector<Range>;  // one range per tensor dimension, in global coordinates

struct Placement {
  std::vector<std::int64_t> globalShape;
  std::vector<Box> owned;   // per rank of the group; together a partition of the global tensor
  std::vector<Box> needed;  // per rank; cells outside the global tensor read as `fill`
  double fill = 0;
  CommKind kind = CommKind::kHalo;  // what its time counts as
};

// The cells both boxes hold (empty ranges where they do not meet).
Box intersect(const Box& a, const Box& b);
std::int64_t cells(const Box& box);

// This rank's needed box of the global tensor whose owned block is `local`. Differentiable:
// the gradient of each owned cell is the sum of the gradients of every copy of it.
// `placement` must describe the same tensor on every rank of `comm`; `comm` must outlive the
// backward pass.
torch::Tensor redistribute(const comm::Communicator& comm, const torch::Tensor& local, const Placement& placement);

}  // namespace paraxis::parallel
