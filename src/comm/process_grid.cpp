#include "comm/process_grid.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace paraxis::comm {

std::string_view axisName(Axis axis) {
  switch (axis) {
    case Axis::kData: return "data";
    case Axis::kSpatialD: return "spatial-d";
    case Axis::kSpatialH: return "spatial-h";
    case Axis::kSpatialW: return "spatial-w";
    case Axis::kChannel: return "channel";
    case Axis::kFilter: return "filter";
    case Axis::kPipeline: return "pipeline";
  }
  return "?";
}

ProcessGrid::ProcessGrid(const Communicator& world, std::vector<std::pair<Axis, int>> axes)
    : world_(world), axes_(std::move(axes)) {
  long long total = 1;
  std::vector<std::string> shape;
  for (const auto& [axis, n] : axes_) {
    if (n < 1) throw ConfigError(fmt::format("process grid: axis {} has size {}", axisName(axis), n));
    total *= n;
    shape.push_back(fmt::format("{}={}", axisName(axis), n));
  }
  if (total != world_.size()) {
    throw ConfigError(fmt::format("process grid {} holds {} ranks, but {} were started",
                                  fmt::join(shape, " x "), total, world_.size()));
  }
  int rest = world_.rank();
  coordinates_.resize(axes_.size());
  for (std::size_t i = axes_.size(); i-- > 0;) {
    coordinates_[i] = rest % axes_[i].second;
    rest /= axes_[i].second;
  }
}

int ProcessGrid::index(Axis axis) const {
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].first == axis) return static_cast<int>(i);
  }
  return -1;
}

int ProcessGrid::size(Axis axis) const {
  const int i = index(axis);
  return i < 0 ? 1 : axes_[i].second;
}

int ProcessGrid::coordinate(Axis axis) const {
  const int i = index(axis);
  return i < 0 ? 0 : coordinates_[i];
}

const Communicator& ProcessGrid::along(std::vector<Axis> axes) {
  std::sort(axes.begin(), axes.end());
  if (auto it = cache_.find(axes); it != cache_.end()) return it->second;
  // Ranks that agree on every other axis share a colour; the key orders them by rank.
  int color = 0;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const bool inside = std::find(axes.begin(), axes.end(), axes_[i].first) != axes.end();
    color = color * axes_[i].second + (inside ? 0 : coordinates_[i]);
  }
  return cache_.emplace(axes, world_.split(color, world_.rank())).first->second;
}

}  // namespace paraxis::comm
