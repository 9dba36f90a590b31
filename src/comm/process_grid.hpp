#pragma once
// A process grid with named axes. Ranks are laid out row-major in the order the axes are
// given, the last axis fastest: give inner axes (spatial, filter) last so they share a node.
// The communicator of any set of axes joins the ranks that differ only along those axes.
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"

namespace paraxis::comm {

enum class Axis { kData, kSpatialD, kSpatialH, kSpatialW, kChannel, kFilter, kPipeline };

std::string_view axisName(Axis axis);

class ProcessGrid {
 public:
  // Collective over `world`; the axis sizes must multiply to its size.
  ProcessGrid(const Communicator& world, std::vector<std::pair<Axis, int>> axes);

  int size(Axis axis) const;        // 1 for an axis the grid does not have
  int coordinate(Axis axis) const;  // this rank's position along the axis
  // The communicator along these axes (built on first request; collective then).
  const Communicator& along(std::vector<Axis> axes);
  const Communicator& along(Axis axis) { return along(std::vector<Axis>{axis}); }
  const Communicator& world() const { return world_; }

 private:
  int index(Axis axis) const;
  Communicator world_;
  std::vector<std::pair<Axis, int>> axes_;
  std::vector<int> coordinates_;
  std::map<std::vector<Axis>, Communicator> cache_;
};

}  // namespace paraxis::comm
