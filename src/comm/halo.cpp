#include "comm/halo.hpp"

#include <fmt/format.h>

#include <cstring>

#include "comm/comm_state.hpp"
#include "core/error.hpp"

namespace paraxis::comm {
namespace {


// A box of the padded buffer: [start, start + extent) per dimension, lead included as dim 0.
struct Box {
  std::vector<std::int64_t> start;
  std::vector<std::int64_t> extent;
  std::int64_t elements() const {
    std::int64_t n = 1;
    for (auto e : extent) n *= e;
    return n;
  }
};

enum class Copy { kPack, kUnpack, kAccumulate, kZero };

// Walks the box in row-major order, one contiguous run of the last dimension at a time.
void walk(std::byte* buffer, const std::vector<std::int64_t>& shape, const Box& box, std::byte* packed,
          std::size_t elementBytes, DataType type, Copy mode) {
  const std::size_t dims = shape.size();
  std::vector<std::int64_t> stride(dims, 1);
  for (std::size_t d = dims - 1; d > 0; --d) stride[d - 1] = stride[d] * shape[d];
  const std::int64_t run = box.extent.back();
  std::vector<std::int64_t> index(dims - 1, 0);
  std::size_t cursor = 0;
  const std::int64_t runs = box.elements() / std::max<std::int64_t>(run, 1);
  for (std::int64_t r = 0; r < runs && run > 0; ++r) {
    std::int64_t offset = box.start.back();
    for (std::size_t d = 0; d + 1 < dims; ++d) offset += (box.start[d] + index[d]) * stride[d];
    std::byte* cells = buffer + offset * elementBytes;
    std::byte* chunk = packed + cursor * elementBytes;
    const std::size_t bytes = run * elementBytes;
    switch (mode) {
      case Copy::kPack: std::memcpy(chunk, cells, bytes); break;
      case Copy::kUnpack: std::memcpy(cells, chunk, bytes); break;
      case Copy::kAccumulate: reduceInto(cells, chunk, run, type, ReduceOp::kSum); break;
      case Copy::kZero: std::memset(cells, 0, bytes); break;
    }
    cursor += run;
    for (std::size_t d = dims - 1; d-- > 0;) {  // odometer over the outer dimensions
      if (++index[d] < box.extent[d]) break;
      index[d] = 0;
    }
  }
}

void validate(const Communicator& comm, const HaloLayout& l) {
  const std::size_t d = l.interior.size();
  if (l.lo.size() != d || l.hi.size() != d || l.grid.size() != d) {
    throw ConfigError(fmt::format("halo exchange: interior, lo, hi and grid need {} entries each", d));
  }
  std::int64_t ranks = 1;
  for (std::size_t i = 0; i < d; ++i) {
    ranks *= l.grid[i];
    if (l.grid[i] > 1 && (l.interior[i] < l.lo[i] || l.interior[i] < l.hi[i])) {
      throw ConfigError(fmt::format("halo exchange: dimension {} has a block of {} cells, smaller than its halo "
                                    "({} below, {} above)", i, l.interior[i], l.lo[i], l.hi[i]));
    }
  }
  if (ranks != comm.size()) {
    throw ConfigError(fmt::format("halo exchange: the grid holds {} ranks but the communicator has {}", ranks,
                                  comm.size()));
  }
}

}  // namespace

std::vector<std::int64_t> HaloLayout::padded() const {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < interior.size(); ++i) out.push_back(lo[i] + interior[i] + hi[i]);
  return out;
}

std::int64_t HaloLayout::elements() const {
  std::int64_t n = lead;
  for (auto e : padded()) n *= e;
  return n;
}

std::vector<int> gridCoordinates(int rank, const std::vector<int>& grid) {
  std::vector<int> c(grid.size());
  for (std::size_t d = grid.size(); d-- > 0;) {
    c[d] = rank % grid[d];
    rank /= grid[d];
  }
  return c;
}

int gridRank(const std::vector<int>& coordinates, const std::vector<int>& grid) {
  int rank = 0;
  for (std::size_t d = 0; d < grid.size(); ++d) rank = rank * grid[d] + coordinates[d];
  return rank;
}

void haloExchange(const Communicator& comm, void* data, DataType type, const HaloLayout& layout,
                  const HaloOptions& options) {
  validate(comm, layout);
  const std::size_t size = elementSize(type);
  const CallInfo info{.op = Operation::kHaloExchange, .type = type, .count = 0,
                      .bytes = static_cast<std::size_t>(layout.elements()) * size,
                      .deadlineSeconds = options.deadlineSeconds};
  comm.state().run(info, [&](OpContext& context) {
    auto* buffer = static_cast<std::byte*>(data);
    const std::size_t d = layout.interior.size();
    std::vector<std::int64_t> shape{layout.lead};
    for (auto e : layout.padded()) shape.push_back(e);
    const std::vector<int> me = gridCoordinates(context.rank(), layout.grid);
    const bool fill = options.mode == HaloMode::kFill;
    for (std::size_t step = 0; step < d; ++step) {
      const std::size_t i = fill ? step : d - 1 - step;
      const std::int64_t lo = layout.lo[i];
      const std::int64_t hi = layout.hi[i];
      const std::int64_t inner = layout.interior[i];
      // A slab spans everything in the other dimensions and [from, from + width) in dim i.
      auto slab = [&](std::int64_t from, std::int64_t width) {
        Box box{std::vector<std::int64_t>(d + 1, 0), shape};
        box.start[i + 1] = from;
        box.extent[i + 1] = width;
        return box;
      };
      // What goes down and up, and where what comes from below and above lands.
      const Box sendDown = fill ? slab(lo, hi) : slab(0, lo);
      const Box sendUp = fill ? slab(lo + inner - lo, lo) : slab(lo + inner, hi);
      const Box fromBelow = fill ? slab(0, lo) : slab(lo, hi);
      const Box fromAbove = fill ? slab(lo + inner, hi) : slab(lo + inner - lo, lo);
      std::vector<int> neighbour = me;
      neighbour[i] = me[i] - 1;
      const int below = me[i] > 0 ? gridRank(neighbour, layout.grid) : -1;
      neighbour[i] = me[i] + 1;
      const int above = me[i] + 1 < layout.grid[i] ? gridRank(neighbour, layout.grid) : -1;

      const std::size_t downBytes = sendDown.elements() * size;
      const std::size_t upBytes = sendUp.elements() * size;
      std::byte* out = context.scratch(ScratchSlot::kHaloPack, downBytes + upBytes);
      std::byte* in = context.scratch(ScratchSlot::kHaloUnpack, (fromBelow.elements() + fromAbove.elements()) * size);
      std::byte* inAbove = in + fromBelow.elements() * size;
      std::vector<Request> requests;
      if (below >= 0) {
        walk(buffer, shape, sendDown, out, size, type, Copy::kPack);
        requests.push_back(context.recv(in, fromBelow.elements() * size, below));
        requests.push_back(context.send(out, downBytes, below));
      }
      if (above >= 0) {
        walk(buffer, shape, sendUp, out + downBytes, size, type, Copy::kPack);
        requests.push_back(context.recv(inAbove, fromAbove.elements() * size, above));
        requests.push_back(context.send(out + downBytes, upBytes, above));
      }
      context.wait(requests);
      const Copy apply = fill ? Copy::kUnpack : Copy::kAccumulate;
      if (below >= 0) walk(buffer, shape, fromBelow, in, size, type, apply);
      if (above >= 0) walk(buffer, shape, fromAbove, inAbove, size, type, apply);
      if (!fill) {  // contributions have left: the halos hold nothing more to add
        walk(buffer, shape, slab(0, lo), nullptr, size, type, Copy::kZero);
        walk(buffer, shape, slab(lo + inner, hi), nullptr, size, type, Copy::kZero);
      }
    }
  });
}

}  // namespace paraxis::comm
