#pragma once
// Halo exchange on a block-distributed N-dimensional tensor.
//
// Each rank holds a buffer of shape [lead, P0, ..., Pd-1], row-major, where Pi = lo[i] +
// interior[i] + hi[i]: its block of the global tensor (interior) surrounded by halo cells.
// `lead` gathers the dimensions that are not split (samples x channels). Ranks are laid out
// row-major over `grid` (the last dimension fastest).
//
// kFill (forward): every halo cell that lies inside the global tensor receives the value of
// the rank that owns it. Dimensions are exchanged one after another, each slab spanning the
// full padded extent of the other dimensions, so edges and corners ride along. Halo cells
// outside the global tensor (at boundary ranks) are left as they are.
// kAccumulate (reverse, for backward passes): every halo cell's value is added into the
// owner's interior cell, and the halos end zeroed. Dimensions go in reverse order so that
// corner contributions travel through the intermediate rank.
//
// Per dimension i a rank sends at most two slabs: hi[i] rows to the lower neighbour and
// lo[i] rows to the upper one (reverse: the halos themselves), T ≈ 2·d·(α + slab·β).
#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"

namespace paraxis::comm {

struct HaloLayout {
  std::int64_t lead = 1;
  std::vector<std::int64_t> interior;  // this rank's block extents, one per split dimension
  std::vector<std::int64_t> lo;        // halo width below the block (cells it needs from the lower neighbour)
  std::vector<std::int64_t> hi;        // halo width above the block
  std::vector<int> grid;               // ranks along each dimension

  std::vector<std::int64_t> padded() const;
  std::int64_t elements() const;  // of the whole buffer, halos included
};

enum class HaloMode { kFill, kAccumulate };

struct HaloOptions {
  HaloMode mode = HaloMode::kFill;
  double deadlineSeconds = 0;
};

void haloExchange(const Communicator& comm, void* data, DataType type, const HaloLayout& layout,
                  const HaloOptions& options = {});

// Coordinates of `rank` on `grid` (row-major, last dimension fastest), and back.
std::vector<int> gridCoordinates(int rank, const std::vector<int>& grid);
int gridRank(const std::vector<int>& coordinates, const std::vector<int>& grid);

}  // namespace paraxis::comm
