// The spatially split layers equal the one-rank torch layers. The convolution: forward output,
// input gradient and (summed over ranks) weight and bias gradients, block by block, on every
// grid the rank count allows: h, w, h x w, uneven blocks, depth splits of 3-D inputs, kernels
// 1 to 7, dilation 2, grouped. Inputs are random, so a wrong neighbour or offset shows.
// Run under mpirun (2, 3 and 4 ranks).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/allreduce.hpp"
#include "common/mpi_test_main.hpp"
#include "core/error.hpp"
#include "parallel/spatial_conv.hpp"
#include "parallel/spatial_layers.hpp"

namespace paraxis::parallel {

comm::Communicator* gSpatialWorld = nullptr;  // for the whole-model tests (tests/train/spatial_net_test.cpp)

namespace {

comm::Communicator* gWorld = nullptr;

struct Case {
  std::string name;
  std::vector<std::int64_t> input;  // [N, C, spatial...]
  std::int64_t filters;
  std::int64_t kernel;
  std::int64_t dilation = 1;
  std::int64_t groups = 1;
};

double relative(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / std::max(1e-12, b.abs().max().item<double>());
}

torch::Tensor allreduced(torch::Tensor t) {
  t = t.contiguous().clone();
  comm::allreduce(*gWorld, t.data_ptr<float>(), t.data_ptr<float>(), static_cast<std::size_t>(t.numel()),
                  comm::DataType::kF32);
  return t;
}

void expectEqualToOneRank(const Case& c, const std::vector<int>& grid) {
  const auto dims = static_cast<std::int64_t>(c.input.size()) - 2;
  torch::manual_seed(11);  // the same global tensors on every rank
  const torch::Tensor x = torch::randn(c.input, torch::requires_grad());
  std::vector<std::int64_t> wshape{c.filters, c.input[1] / c.groups};
  for (std::int64_t i = 0; i < dims; ++i) wshape.push_back(c.kernel);
  const torch::Tensor weight = torch::randn(wshape, torch::requires_grad());
  const torch::Tensor bias = torch::randn({c.filters}, torch::requires_grad());
  const std::int64_t pad = c.dilation * (c.kernel - 1) / 2;
  const std::vector<std::int64_t> ones(dims, 1), pads(dims, pad), dil(dims, c.dilation), zeros(dims, 0);
  const torch::Tensor reference = at::convolution(x, weight, bias, ones, pads, dil, false, zeros, c.groups);
  const torch::Tensor upstream = torch::randn(reference.sizes());
  (reference * upstream).sum().backward();

  const SpatialSplit split{*gWorld, grid};
  const torch::Tensor xLocal = split.local(x.detach()).requires_grad_(true);
  const torch::Tensor w = weight.detach().clone().requires_grad_(true);
  const torch::Tensor b = bias.detach().clone().requires_grad_(true);
  const torch::Tensor y = spatialConv(split, xLocal, w, b, {dil, c.groups});
  (y * split.local(upstream)).sum().backward();

  const std::string what = c.name + " on grid " + std::to_string(grid.front()) +
                           (grid.size() > 1 ? "x" + std::to_string(grid[1]) : "") +
                           (grid.size() > 2 ? "x" + std::to_string(grid[2]) : "");
  EXPECT_LT(relative(y, split.local(reference.detach())), 1e-5) << what << ": forward";
  EXPECT_LT(relative(xLocal.grad(), split.local(x.grad())), 1e-5) << what << ": input gradient";
  EXPECT_LT(relative(allreduced(w.grad()), weight.grad()), 1e-5) << what << ": weight gradient";
  EXPECT_LT(relative(allreduced(b.grad()), bias.grad()), 1e-5) << what << ": bias gradient";
}

// Every way to lay the world's ranks over `dims` spatial dimensions.
std::vector<std::vector<int>> gridsOf(int ranks, int dims) {
  std::vector<std::vector<int>> out;
  if (dims == 2) {
    for (int h = 1; h <= ranks; ++h) {
      if (ranks % h == 0) out.push_back({h, ranks / h});
    }
  } else {
    for (int d = 1; d <= ranks; ++d) {
      for (int h = 1; d * h <= ranks; ++h) {
        if (ranks % (d * h) == 0) out.push_back({d, h, ranks / (d * h)});
      }
    }
  }
  return out;
}

TEST(SpatialConv, TwoDimensionalMatchesOneRankOnEveryGrid) {
  const std::vector<Case> cases{
      {"3x3", {2, 3, 13, 11}, 4, 3},
      {"1x1", {2, 3, 9, 10}, 5, 1},
      {"5x5", {1, 4, 14, 12}, 3, 5},
      {"7x7", {1, 2, 17, 16}, 3, 7},
      {"3x3 dilation 2", {2, 3, 12, 13}, 4, 3, 2},
      {"3x3 grouped", {2, 4, 10, 9}, 6, 3, 1, 2},
  };
  for (const Case& c : cases) {
    for (const auto& grid : gridsOf(gWorld->size(), 2)) expectEqualToOneRank(c, grid);
  }
}

TEST(SpatialConv, ThreeDimensionalMatchesOneRankOnEveryGrid) {
  const std::vector<Case> cases{{"3x3x3", {1, 2, 9, 8, 7}, 3, 3}, {"5x5x5", {1, 2, 11, 10, 10}, 2, 5}};
  for (const Case& c : cases) {
    for (const auto& grid : gridsOf(gWorld->size(), 3)) expectEqualToOneRank(c, grid);
  }
}

TEST(SpatialConv, ShapesItCannotSplitAreRefusedWithOneLine) {
  const SpatialSplit split{*gWorld, {gWorld->size(), 1}};
  const torch::Tensor x = torch::randn({1, 1, 2 * gWorld->size(), 8});
  try {
    spatialConv(split, x.narrow(2, 0, 1), torch::randn({1, 1, 7, 7}), torch::Tensor(), {});
    if (gWorld->size() > 1) ADD_FAILURE() << "a block thinner than its halo was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("thinner than its halo"), std::string::npos) << e.what();
  }
  EXPECT_THROW(spatialConv(split, x, torch::randn({1, 1, 2, 2}), torch::Tensor(), {}), ConfigError);
}


std::string gridName(const std::vector<int>& grid) {
  std::string name;
  for (int g : grid) name += (name.empty() ? "" : "x") + std::to_string(g);
  return name;
}

// Batch-norm with global statistics: output, input gradient, summed weight and bias gradients
// and the running statistics equal torch's batch-norm over the whole tensor.
TEST(SpatialBatchNorm, GlobalStatisticsMatchOneRankOnEveryGrid) {
  for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{3, 4, 11, 10},
                                                 std::vector<std::int64_t>{2, 3, 7, 6, 5}}) {
    const int dims = static_cast<int>(shape.size()) - 2;
    for (const auto& grid : gridsOf(gWorld->size(), dims)) {
      torch::manual_seed(5);
      const torch::Tensor x = (torch::randn(shape) * 3 + 1).requires_grad_(true);
      const torch::Tensor weight = torch::randn({shape[1]}, torch::requires_grad());
      const torch::Tensor bias = torch::randn({shape[1]}, torch::requires_grad());
      torch::Tensor mean = torch::zeros({shape[1]}), var = torch::ones({shape[1]});
      const torch::Tensor reference = torch::batch_norm(x, weight, bias, mean, var, true, 0.1, 1e-5, false);
      const torch::Tensor upstream = torch::randn(reference.sizes());
      (reference * upstream).sum().backward();

      const SpatialSplit split{*gWorld, grid};
      const torch::Tensor xLocal = split.local(x.detach()).requires_grad_(true);
      const torch::Tensor w = weight.detach().clone().requires_grad_(true);
      const torch::Tensor b = bias.detach().clone().requires_grad_(true);
      torch::Tensor localMean = torch::zeros({shape[1]}), localVar = torch::ones({shape[1]});
      const torch::Tensor y = spatialBatchNorm(split, xLocal, w, b, localMean, localVar, {});
      (y * split.local(upstream)).sum().backward();
      const std::string what = "batch-norm on grid " + gridName(grid);
      EXPECT_LT(relative(y, split.local(reference.detach())), 1e-5) << what << ": forward";
      EXPECT_LT(relative(xLocal.grad(), split.local(x.grad())), 1e-4) << what << ": input gradient";
      EXPECT_LT(relative(allreduced(w.grad()), weight.grad()), 1e-5) << what << ": weight gradient";
      EXPECT_LT(relative(allreduced(b.grad()), bias.grad()), 1e-5) << what << ": bias gradient";
      EXPECT_LT(relative(localMean, mean), 1e-5) << what << ": running mean";
      EXPECT_LT(relative(localVar, var), 1e-5) << what << ": running variance";
    }
  }
}

TEST(SpatialPooling, GlobalAverageAndAlignedWindowsMatchOneRank) {
  for (const auto& grid : gridsOf(gWorld->size(), 2)) {
    torch::manual_seed(3);
    // Extents every grid of up to 4 ranks divides into multiples of 2.
    const torch::Tensor x = torch::randn({2, 3, 24, 24}, torch::requires_grad());
    const SpatialSplit split{*gWorld, grid};
    const std::string what = "grid " + gridName(grid);

    const torch::Tensor reference = torch::adaptive_avg_pool2d(x, {1, 1});
    const torch::Tensor upstream = torch::randn(reference.sizes());
    (reference * upstream).sum().backward();
    const torch::Tensor xLocal = split.local(x.detach()).requires_grad_(true);
    const torch::Tensor y = spatialGlobalAvgPool(split, xLocal);
    (y * upstream).sum().backward();
    EXPECT_LT(relative(y, reference.detach()), 1e-5) << what << ": global average";
    EXPECT_LT(relative(xLocal.grad(), split.local(x.grad())), 1e-5) << what << ": global average gradient";

    for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage}) {
      x.mutable_grad() = torch::Tensor();
      const torch::Tensor ref = kind == PoolKind::kMax ? torch::max_pool2d(x, {2, 2}, {2, 2}) : torch::avg_pool2d(x, {2, 2}, {2, 2});
      const torch::Tensor up = torch::randn(ref.sizes());
      (ref * up).sum().backward();
      const torch::Tensor xl = split.local(x.detach()).requires_grad_(true);
      const torch::Tensor yl = spatialPool(split, xl, kind, 2, {24, 24});
      (yl * split.local(up)).sum().backward();
      EXPECT_LT(relative(yl, split.local(ref.detach())), 1e-6) << what << ": pooling";
      EXPECT_LT(relative(xl.grad(), split.local(x.grad())), 1e-6) << what << ": pooling gradient";
    }
  }
}

TEST(SpatialPooling, AWindowAcrossBlocksIsRefused) {
  if (gWorld->size() < 2) GTEST_SKIP() << "one block has no boundary";
  const SpatialSplit split{*gWorld, {gWorld->size(), 1}};
  const std::int64_t extent = 3 * gWorld->size();  // blocks of 3 rows: the first ends mid-window
  const torch::Tensor x = split.local(torch::randn({1, 1, extent, 4}));
  EXPECT_THROW(spatialPool(split, x, PoolKind::kMax, 2, {extent, 4}), ConfigError);
}

}  // namespace
}  // namespace paraxis::parallel

int main(int argc, char** argv) {
  torch::set_num_threads(1);
  return paraxis::testing::runMpiTests(argc, argv, "spatial layers",
                                       [](paraxis::comm::Communicator* world) {
                                         paraxis::parallel::gWorld = world;
                                         paraxis::parallel::gSpatialWorld = world;
                                       });
}
