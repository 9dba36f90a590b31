// Redistribution, the one data-movement mechanism of spatial parallelism, checked with the
// global index as the data (a wrong neighbour, offset or order cannot give the right number):
// windows with halos of every width, strides that skip cells, padding past the global edge;
// the reverse accumulation of the gradients (each owned cell gets one contribution per window
// that holds it); the shuffles from spatial blocks and from replicated tensors to samples.
// Linked into parallel_test (mpirun at 2, 3 and 4 ranks).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parallel/spatial_layers.hpp"
#include "parallel/spatial_split.hpp"

namespace paraxis::parallel {
extern comm::Communicator* gSpatialWorld;

namespace {

torch::Tensor globalIndex(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return torch::arange(n, torch::kFloat64).view(shape);
}

// The global tensor padded with `fill` by `margin` cells each side of every spatial dimension.
torch::Tensor padded(const torch::Tensor& global, std::int64_t margin, double fill) {
  std::vector<std::int64_t> pads(2 * static_cast<std::size_t>(global.dim() - 2), margin);
  return torch::constant_pad_nd(global, pads, fill);
}

torch::Tensor cut(torch::Tensor t, const Box& box, std::int64_t margin) {
  for (std::size_t d = 0; d < box.size(); ++d) {
    const std::int64_t shift = d >= 2 ? margin : 0;
    t = t.narrow(static_cast<std::int64_t>(d), box[d].begin + shift, box[d].size());
  }
  return t;
}

struct Rule {
  std::int64_t stride, padding, span;
};

TEST(Redistribute, WindowsCarryTheRightCellsAndReturnOneGradientPerCopy) {
  const comm::Communicator& world = *gSpatialWorld;
  const std::vector<std::int64_t> shape{2, 3, 13, 11};
  const torch::Tensor global = globalIndex(shape);
  constexpr std::int64_t kMargin = 8;
  for (const std::vector<int>& grid : {std::vector<int>{world.size(), 1}, std::vector<int>{1, world.size()}}) {
    const SpatialSplit split{world, grid};
    for (const Rule& r : {Rule{1, 1, 3}, Rule{1, 3, 7}, Rule{2, 3, 7}, Rule{2, 0, 1}, Rule{2, 0, 2}, Rule{1, 0, 1}}) {
      std::vector<std::int64_t> out;
      for (int i = 0; i < 2; ++i) out.push_back((shape[i + 2] + 2 * r.padding - r.span) / r.stride + 1);
      const Placement p = windowPlacement(
          split, shape, out, [&](int, Range o) { return Range{o.begin * r.stride - r.padding, (o.end - 1) * r.stride - r.padding + r.span}; },
          -1.0);
      const torch::Tensor local = split.local(global).requires_grad_(true);
      const torch::Tensor window = redistribute(world, local, p);
      const std::string what = "grid " + std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + ", stride " +
                               std::to_string(r.stride) + ", padding " + std::to_string(r.padding) + ", span " +
                               std::to_string(r.span);
      EXPECT_TRUE(torch::equal(window, cut(padded(global, kMargin, -1.0), p.needed[world.rank()], kMargin))) << what;

      window.sum().backward();
      torch::Tensor copies = torch::zeros(shape, torch::kFloat64);
      for (const Box& needed : p.needed) {
        const Box inside = intersect(needed, {{0, 2}, {0, 3}, {0, 13}, {0, 11}});
        if (cells(inside) > 0) cut(copies, inside, 0).add_(1);
      }
      EXPECT_TRUE(torch::equal(local.grad(), split.local(copies))) << what << ": gradient";
    }
  }
}

TEST(Redistribute, ShufflesToSamplesCarryWholeSamples) {
  const comm::Communicator& world = *gSpatialWorld;
  const std::vector<int> grid = world.size() == 4 ? std::vector<int>{2, 2} : std::vector<int>{world.size(), 1};
  const SpatialSplit split{world, grid};
  for (std::int64_t samples : {std::int64_t{5}, std::int64_t{1}}) {  // uneven shares, and ranks with none
    const std::vector<std::int64_t> shape{samples, 3, 9, 7};
    const torch::Tensor global = globalIndex(shape);
    const Range mine = sampleRange(split, world.rank(), samples);

    const torch::Tensor local = split.local(global).requires_grad_(true);
    const torch::Tensor whole = spatialToSamples(split, local, {9, 7});
    EXPECT_TRUE(torch::equal(whole, global.narrow(0, mine.begin, mine.size()))) << samples << " samples";
    (whole * global.narrow(0, mine.begin, mine.size())).sum().backward();
    EXPECT_TRUE(torch::equal(local.grad(), split.local(global))) << samples << " samples: gradient";

    const torch::Tensor replicated = global.clone().requires_grad_(true);
    const torch::Tensor slice = replicatedToSamples(split, replicated);
    EXPECT_TRUE(torch::equal(slice, global.narrow(0, mine.begin, mine.size())));
    (slice * global.narrow(0, mine.begin, mine.size())).sum().backward();
    EXPECT_TRUE(torch::equal(replicated.grad(), global)) << samples << " samples: every rank holds the whole gradient";
  }
}

}  // namespace
}  // namespace paraxis::parallel
