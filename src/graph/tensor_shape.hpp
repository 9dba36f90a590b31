#pragma once
// The per-sample shape of an activation: channels and 0, 2 or 3 spatial extents.
// The batch dimension N is not part of the IR; costs are per sample and scale with the batch.
#include <cstdint>
#include <string>
#include <vector>

namespace paraxis::graph {

// Per-dimension hyper-parameters (kernel, stride, ...). One value broadcasts to every
// spatial dimension; the builder expands it to the input's rank.
using Dims = std::vector<std::int64_t>;

struct TensorShape {
  std::int64_t channels = 0;
  std::vector<std::int64_t> spatial;  // {} flat, {H, W} 2-D, {D, H, W} 3-D

  int rank() const { return static_cast<int>(spatial.size()); }
  std::int64_t spatialElements() const;
  // Both OverflowError beyond 2^53 (core/counts.hpp).
  std::int64_t elements() const;

  // "64x56x56"; a flat shape prints as its channel count.
  std::string str() const;

  bool operator==(const TensorShape&) const = default;
};

}  // namespace paraxis::graph
