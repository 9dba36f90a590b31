#pragma once
// The ring and recursive-halving building blocks shared by allreduce, reduce-scatter and
// allgather. Internal to comm.
#include <cstddef>
#include <vector>

#include "comm/wire.hpp"

namespace paraxis::comm::detail {

// `total` elements split into `parts` nearly equal chunks (the first total % parts one larger).
struct Chunks {
  Chunks(std::size_t total, int parts);
  std::vector<std::size_t> offset;  // parts + 1 entries
  std::size_t begin(int i) const { return offset[i]; }
  std::size_t count(int i) const { return offset[i + 1] - offset[i]; }
  std::size_t span(int first, int last) const { return offset[last] - offset[first]; }
};

// Rank r ends owning chunk r, reduced over all ranks.
void ringReduceScatter(OpContext& context, Wire& wire, std::byte* acc, const Chunks& chunks);
// Rank r starts owning chunk r; every rank ends with every chunk.
void ringAllgather(OpContext& context, Wire& wire, std::byte* acc, const Chunks& chunks);

void recursiveDoubling(OpContext& context, Wire& wire, std::byte* acc, std::size_t count);
void rabenseifner(OpContext& context, Wire& wire, std::byte* acc, std::size_t count);

}  // namespace paraxis::comm::detail
