// Halo exchange checked cell by cell: tensors are filled with their global index, so every
// halo cell must hold exactly the index of the global cell it mirrors.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "comm/halo.hpp"
#include "comm_test_world.hpp"

namespace paraxis::comm {
namespace {

using testing::freshComm;

struct Case {
  std::vector<int> grid;
  std::vector<std::int64_t> global;  // extents of the split dimensions
  std::vector<std::int64_t> lo, hi;
};

// Block distribution: the first (extent % parts) blocks are one larger.
std::int64_t blockStart(std::int64_t extent, int parts, int index) {
  const std::int64_t base = extent / parts;
  const std::int64_t extra = extent % parts;
  return index * base + std::min<std::int64_t>(index, extra);
}

struct Local {
  HaloLayout layout;
  std::vector<std::int64_t> start;  // global coordinate of the first interior cell
};

Local localBlock(const Case& c, int rank) {
  const std::vector<int> coords = gridCoordinates(rank, c.grid);
  Local l;
  l.layout = {.lead = 2, .lo = c.lo, .hi = c.hi, .grid = c.grid};
  for (std::size_t d = 0; d < c.grid.size(); ++d) {
    const std::int64_t s = blockStart(c.global[d], c.grid[d], coords[d]);
    l.start.push_back(s);
    l.layout.interior.push_back(blockStart(c.global[d], c.grid[d], coords[d] + 1) - s);
  }
  return l;
}

// Calls fn(bufferIndex, lead, globalCoordinates, insideGlobal, insideInterior) for every cell.
template <typename Fn>
void forEachCell(const Case& c, const Local& l, Fn fn) {
  const std::vector<std::int64_t> padded = l.layout.padded();
  const std::size_t d = padded.size();
  std::int64_t cells = 1;
  for (auto e : padded) cells *= e;
  for (std::int64_t lead = 0; lead < l.layout.lead; ++lead) {
    for (std::int64_t k = 0; k < cells; ++k) {
      std::int64_t rest = k;
      std::vector<std::int64_t> g(d);
      bool global = true;
      bool interior = true;
      for (std::size_t i = d; i-- > 0;) {
        const std::int64_t local = rest % padded[i];
        rest /= padded[i];
        g[i] = l.start[i] + local - c.lo[i];
        global = global && g[i] >= 0 && g[i] < c.global[i];
        interior = interior && local >= c.lo[i] && local < c.lo[i] + l.layout.interior[i];
      }
      fn(lead * cells + k, lead, g, global, interior);
    }
  }
}

double globalIndex(const Case& c, std::int64_t lead, const std::vector<std::int64_t>& g) {
  double index = static_cast<double>(lead);
  for (std::size_t i = 0; i < g.size(); ++i) index = index * static_cast<double>(c.global[i]) + static_cast<double>(g[i]);
  return index;
}

void checkFill(const Communicator& comm, const Case& c) {
  const Local l = localBlock(c, comm.rank());
  std::vector<double> buffer(l.layout.elements(), -1.0);
  forEachCell(c, l, [&](std::int64_t at, std::int64_t lead, const auto& g, bool, bool interior) {
    if (interior) buffer[at] = globalIndex(c, lead, g);
  });
  haloExchange(comm, buffer.data(), DataType::kF64, l.layout);
  forEachCell(c, l, [&](std::int64_t at, std::int64_t lead, const auto& g, bool global, bool) {
    const double want = global ? globalIndex(c, lead, g) : -1.0;
    ASSERT_EQ(buffer[at], want) << "rank " << comm.rank() << " cell " << at;
  });
}

// Reverse: every rank puts 1 in each halo cell; afterwards an interior cell holds the number
// of other ranks whose halo covers it, and every halo is zero.
void checkAccumulate(const Communicator& comm, const Case& c) {
  const Local l = localBlock(c, comm.rank());
  std::vector<double> buffer(l.layout.elements(), 0.0);
  forEachCell(c, l, [&](std::int64_t at, std::int64_t, const auto&, bool, bool interior) {
    if (!interior) buffer[at] = 1.0;
  });
  haloExchange(comm, buffer.data(), DataType::kF64, l.layout, {.mode = HaloMode::kAccumulate});
  std::vector<Local> others;
  for (int r = 0; r < comm.size(); ++r) {
    if (r != comm.rank()) others.push_back(localBlock(c, r));
  }
  forEachCell(c, l, [&](std::int64_t at, std::int64_t, const auto& g, bool, bool interior) {
    double want = 0;
    if (interior) {
      for (const Local& o : others) {
        bool covered = true;
        for (std::size_t i = 0; i < g.size(); ++i) {
          covered = covered && g[i] >= o.start[i] - c.lo[i] && g[i] < o.start[i] + o.layout.interior[i] + c.hi[i];
        }
        want += covered ? 1.0 : 0.0;
      }
    }
    ASSERT_EQ(buffer[at], want) << "rank " << comm.rank() << " cell " << at;
  });
}

std::vector<Case> cases(int p) {
  std::vector<Case> out{
      {{p}, {4 * p + 3}, {1}, {1}},              // 1-D, uneven blocks
      {{p}, {5 * p}, {2}, {1}},                  // asymmetric widths
      {{1, p}, {6, 3 * p + 1}, {1, 1}, {1, 2}},  // 2-D, 1 x N
      {{p, 1}, {3 * p + 2, 5}, {1, 1}, {1, 1}},  // 2-D, N x 1
      {{p, 1, 1}, {2 * p + 1, 3, 4}, {1, 1, 1}, {1, 1, 1}},
  };
  if (p == 4) {
    out.push_back({{2, 2}, {7, 6}, {1, 2}, {2, 1}});                   // 2 x 2: corners
    out.push_back({{1, 2, 2}, {3, 5, 6}, {1, 1, 1}, {1, 1, 1}});       // 3-D grid
    out.push_back({{2, 1, 2}, {4, 3, 5}, {1, 0, 2}, {1, 0, 1}});
  }
  return out;
}

TEST(Halo, FillMakesEveryHaloCellMirrorItsOwner) {
  const Communicator comm = freshComm();
  for (const Case& c : cases(comm.size())) checkFill(comm, c);
}

TEST(Halo, AccumulateSumsHalosIntoOwnersAndClearsThem) {
  const Communicator comm = freshComm();
  for (const Case& c : cases(comm.size())) checkAccumulate(comm, c);
}

TEST(Halo, RejectsAGridOfTheWrongSize) {
  const Communicator comm = freshComm();
  HaloLayout layout{.interior = {4}, .lo = {1}, .hi = {1}, .grid = {comm.size() + 1}};
  std::vector<float> buffer(layout.elements());
  EXPECT_THROW(haloExchange(comm, buffer.data(), DataType::kF32, layout), ConfigError);
}

}  // namespace
}  // namespace paraxis::comm
