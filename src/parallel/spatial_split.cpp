#include "parallel/spatial_split.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "comm/halo.hpp"
#include "core/error.hpp"

namespace paraxis::parallel {
namespace {

std::int64_t floorDiv(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

std::int64_t WindowAxis::outputExtent() const {
  if (transposed) return (extent - 1) * stride - 2 * padding + span() + outputPadding;
  return floorDiv(extent + 2 * padding - span(), stride) + 1;
}

Range WindowAxis::inputOf(Range out) const {
  if (!transposed) return {out.begin * stride - padding, (out.end - 1) * stride - padding + span()};
  const std::int64_t first = floorDiv(out.begin + padding - span() + stride, stride);
  const std::int64_t last = floorDiv(out.end - 1 + padding, stride);
  return {std::max<std::int64_t>(0, first), std::max(std::max<std::int64_t>(0, first), std::min(extent, last + 1))};
}

comm::DataType commTypeOf(const torch::Tensor& t) {
  if (t.scalar_type() == torch::kFloat) return comm::DataType::kF32;
  if (t.scalar_type() == torch::kDouble) return comm::DataType::kF64;
  throw ConfigError(fmt::format("spatial layers: float32 or float64 tensors only, found {}", c10::toString(t.scalar_type())));
}

std::pair<std::int64_t, std::int64_t> SpatialSplit::blockAt(std::int64_t r, std::int64_t p, std::int64_t extent) {
  const std::int64_t base = extent / p, extra = extent % p;
  const std::int64_t begin = r * base + std::min(r, extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

std::pair<std::int64_t, std::int64_t> SpatialSplit::block(int dim, std::int64_t extent) const {
  return blockAt(comm::gridCoordinates(comm.rank(), grid).at(dim), grid.at(dim), extent);
}

int SpatialSplit::ranks() const {
  int n = 1;
  for (int g : grid) n *= g;
  return n;
}

Box SpatialSplit::blockBox(int rank, const std::vector<std::int64_t>& globalShape) const {
  const std::vector<int> at = comm::gridCoordinates(rank, grid);
  const std::size_t first = globalShape.size() - grid.size();
  Box box;
  for (std::size_t d = 0; d < globalShape.size(); ++d) {
    if (d < first) {
      box.push_back({0, globalShape[d]});
    } else {
      const auto [begin, end] = blockAt(at[d - first], grid[d - first], globalShape[d]);
      box.push_back({begin, end});
    }
  }
  return box;
}

torch::Tensor SpatialSplit::local(const torch::Tensor& global) const {
  const Box box = blockBox(comm.rank(), global.sizes().vec());
  torch::Tensor view = global;
  for (std::size_t d = 0; d < box.size(); ++d) {
    view = view.narrow(static_cast<std::int64_t>(d), box[d].begin, box[d].size());
  }
  return view.contiguous();
}

std::string SpatialSplit::str() const {
  static const char* const kNames2[] = {"h", "w"};
  static const char* const kNames3[] = {"d", "h", "w"};
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const char* name = grid.size() == 3 ? kNames3[i] : grid.size() == 2 ? kNames2[i] : "axis";
    if (grid[i] > 1) parts.push_back(fmt::format("{}={}", name, grid[i]));
  }
  return parts.empty() ? "1" : fmt::format("{}", fmt::join(parts, "x"));
}

void requireBlocks(const SpatialSplit& split, const std::vector<std::int64_t>& extents, const char* what) {
  for (std::size_t i = 0; i < split.grid.size(); ++i) {
    if (extents.at(i) < split.grid[i]) {
      throw ConfigError(fmt::format("{}: an extent of {} along spatial dimension {} cannot be split over {} ranks "
                                    "(grid {}): some rank would hold nothing",
                                    what, extents[i], i, split.grid[i], split.str()));
    }
  }
}

Placement windowPlacement(const SpatialSplit& split, const std::vector<std::int64_t>& inputShape,
                          const std::vector<std::int64_t>& outputExtents, const WindowRule& rule, double fill,
                          const SpatialSplit* inputSplit) {
  const SpatialSplit& owner = inputSplit != nullptr ? *inputSplit : split;
  const std::vector<std::int64_t> inputExtents(inputShape.begin() + 2, inputShape.end());
  requireBlocks(owner, inputExtents, "input");
  requireBlocks(split, outputExtents, "output");
  Placement p{inputShape, {}, {}, fill};
  std::vector<std::int64_t> outputShape{inputShape[0], inputShape[1]};
  outputShape.insert(outputShape.end(), outputExtents.begin(), outputExtents.end());
  for (int q = 0; q < split.comm.size(); ++q) {
    p.owned.push_back(owner.blockBox(q, inputShape));
    const Box out = split.blockBox(q, outputShape);
    Box needed{p.owned.back()[0], p.owned.back()[1]};
    for (int i = 0; i < static_cast<int>(split.grid.size()); ++i) needed.push_back(rule(i, out[i + 2]));
    p.needed.push_back(std::move(needed));
  }
  return p;
}

}  // namespace paraxis::parallel
