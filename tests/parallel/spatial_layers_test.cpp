// The spatially split layers equal the one-rank torch layers: forward output, input gradient
// and (summed over the group) weight and bias gradients, block by block, on every grid the rank
// count allows (h, w, h x w, h=3 with uneven blocks, depth splits of 3-D inputs) and, at 4
// ranks, on the spatial groups of data=2 x h=2. Convolutions with kernels 1 to 7 and even ones,
// stride 2, dilation 2, padding other than "same", groups; transposed convolutions; max and
// average pooling whose windows cross blocks; batch-norm with group statistics; global average
// pooling. Inputs are random, so a wrong neighbour or offset shows. Run under mpirun (2, 3, 4).
#include <gtest/gtest.h>

#include <functional>
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

double relative(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / std::max(1e-12, b.abs().max().item<double>());
}

torch::Tensor groupSum(const SpatialSplit& split, torch::Tensor t) {
  t = t.contiguous().clone();
  comm::allreduce(split.comm, t.data_ptr<float>(), t.data_ptr<float>(), static_cast<std::size_t>(t.numel()),
                  comm::DataType::kF32);
  return t;
}

std::string gridName(const std::vector<int>& grid) {
  std::string name;
  for (int g : grid) {
    if (!name.empty()) name += 'x';
    name += std::to_string(g);
  }
  return name;
}

// Every way to lay the world's ranks over `dims` spatial dimensions and, at 4 ranks, each data
// replica's group of data=2 x h=2 (the groups run the same test side by side).
void forEachSplit(int dims, const std::function<void(const SpatialSplit&, const std::string&)>& test) {
  const int ranks = gWorld->size();
  std::vector<std::vector<int>> grids;
  if (dims == 2) {
    for (int h = 1; h <= ranks; ++h) {
      if (ranks % h == 0) grids.push_back({h, ranks / h});
    }
  } else {
    for (int d = 1; d <= ranks; ++d) {
      for (int h = 1; d * h <= ranks; ++h) {
        if (ranks % (d * h) == 0) grids.push_back({d, h, ranks / (d * h)});
      }
    }
  }
  for (const auto& grid : grids) test(SpatialSplit{*gWorld, grid}, "grid " + gridName(grid));
  if (ranks == 4) {
    std::vector<int> grid(static_cast<std::size_t>(dims), 1);
    grid[static_cast<std::size_t>(dims) - 2] = 2;
    test(SpatialSplit{gWorld->split(gWorld->rank() / 2, gWorld->rank()), grid}, "grid data=2xh=2");
  }
}

struct ConvCase {
  std::string name;
  std::vector<std::int64_t> input;  // [N, C, spatial...]
  std::int64_t filters;
  std::int64_t kernel;
  std::int64_t stride = 1;
  std::int64_t padding = -1;  // -1: "same" for odd kernels
  std::int64_t dilation = 1;
  std::int64_t groups = 1;
  bool transposed = false;
  std::int64_t outputPadding = 0;
};

void expectConvEqualsOneRank(const ConvCase& c, const SpatialSplit& split, const std::string& where) {
  const auto dims = static_cast<std::int64_t>(c.input.size()) - 2;
  const std::int64_t pad = c.padding >= 0 ? c.padding : c.dilation * (c.kernel - 1) / 2;
  torch::manual_seed(11);  // the same global tensors on every rank
  const torch::Tensor x = torch::randn(c.input, torch::requires_grad());
  std::vector<std::int64_t> wshape = c.transposed ? std::vector<std::int64_t>{c.input[1], c.filters / c.groups}
                                                  : std::vector<std::int64_t>{c.filters, c.input[1] / c.groups};
  for (std::int64_t i = 0; i < dims; ++i) wshape.push_back(c.kernel);
  const torch::Tensor weight = torch::randn(wshape, torch::requires_grad());
  const torch::Tensor bias = torch::randn({c.filters}, torch::requires_grad());
  const std::vector<std::int64_t> stride(dims, c.stride), pads(dims, pad), dil(dims, c.dilation),
      outPad(dims, c.outputPadding);
  const torch::Tensor reference =
      at::convolution(x, weight, bias, stride, pads, dil, c.transposed, outPad, c.groups);
  const torch::Tensor upstream = torch::randn(reference.sizes());
  (reference * upstream).sum().backward();

  const torch::Tensor xLocal = split.local(x.detach()).requires_grad_(true);
  const torch::Tensor w = weight.detach().clone().requires_grad_(true);
  const torch::Tensor b = bias.detach().clone().requires_grad_(true);
  const std::vector<std::int64_t> extents(c.input.begin() + 2, c.input.end());
  const torch::Tensor y =
      spatialConv(split, xLocal, w, b, {extents, stride, pads, dil, outPad, c.groups, c.transposed});
  (y * split.local(upstream)).sum().backward();

  const std::string what = c.name + " on " + where;
  ASSERT_EQ(y.sizes(), split.local(reference).sizes()) << what;
  EXPECT_LT(relative(y, split.local(reference.detach())), 1e-5) << what << ": forward";
  EXPECT_LT(relative(xLocal.grad(), split.local(x.grad())), 1e-5) << what << ": input gradient";
  EXPECT_LT(relative(groupSum(split, w.grad()), weight.grad()), 1e-5) << what << ": weight gradient";
  EXPECT_LT(relative(groupSum(split, b.grad()), bias.grad()), 1e-5) << what << ": bias gradient";
}

// The window path, and the interior computed while the halos travel: on grids that split one
// dimension, "same" stride-1 convolutions then take halo_conv's path, the rest the window path.
void bothPaths(const ConvCase& c, const SpatialSplit& split, const std::string& where) {
  for (bool overlap : {false, true}) {
    SpatialSplit s = split;
    s.overlap = overlap;
    expectConvEqualsOneRank(c, s, where + (overlap ? ", halo overlap" : ""));
  }
}

TEST(SpatialConv, TwoDimensionalMatchesOneRankOnEveryGrid) {
  const std::vector<ConvCase> cases{
      {"3x3", {2, 3, 13, 11}, 4, 3},
      {"1x1", {2, 3, 9, 10}, 5, 1},
      {"5x5", {1, 4, 14, 12}, 3, 5},
      {"7x7", {1, 2, 17, 16}, 3, 7},
      {"3x3 dilation 2", {2, 3, 12, 13}, 4, 3, 1, -1, 2},
      {"3x3 grouped", {2, 4, 10, 9}, 6, 3, 1, -1, 1, 2},
      {"3x3 stride 2", {2, 3, 13, 12}, 4, 3, 2},
      {"7x7 stride 2 (ResNet's stem)", {1, 3, 20, 19}, 4, 7, 2, 3},
      {"1x1 stride 2 (a projection)", {1, 4, 12, 11}, 3, 1, 2},
      {"4x4 stride 2, no padding", {1, 2, 14, 13}, 3, 4, 2, 0},
      {"3x3 valid", {1, 2, 11, 10}, 3, 3, 1, 0},
      {"transposed 4x4 stride 2 (the mesh FCN's)", {1, 3, 7, 6}, 4, 4, 2, 1, 1, 1, true},
      {"transposed 3x3", {2, 2, 9, 8}, 3, 3, 1, 1, 1, 1, true},
      {"transposed 2x2 stride 2", {1, 4, 6, 5}, 2, 2, 2, 0, 1, 2, true},
      {"transposed 3x3 stride 2, output padding", {1, 2, 6, 7}, 3, 3, 2, 1, 1, 1, true, 1},
  };
  for (const ConvCase& c : cases) forEachSplit(2, [&](const SpatialSplit& split, const std::string& where) { bothPaths(c, split, where); });
}

TEST(SpatialConv, ThreeDimensionalMatchesOneRankOnEveryGrid) {
  const std::vector<ConvCase> cases{{"3x3x3", {1, 2, 9, 8, 7}, 3, 3},
                                    {"5x5x5", {1, 2, 11, 10, 10}, 2, 5},
                                    {"3x3x3 stride 2", {1, 2, 10, 9, 8}, 3, 3, 2},
                                    {"transposed 2x2x2 stride 2", {1, 2, 5, 4, 4}, 2, 2, 2, 0, 1, 1, true}};
  for (const ConvCase& c : cases) forEachSplit(3, [&](const SpatialSplit& split, const std::string& where) { bothPaths(c, split, where); });
}

TEST(SpatialConv, AGridFinerThanTheTensorIsRefusedWithOneLine) {
  const int ranks = gWorld->size();
  if (ranks < 2) GTEST_SKIP() << "one rank always has a block";
  const SpatialSplit split{*gWorld, {ranks, 1}};
  // An output of ranks - 1 rows (stride 2 over 2 * ranks - 2 rows) leaves some rank nothing.
  const std::int64_t rows = 2 * ranks - 2;
  const torch::Tensor x = split.local(torch::randn({1, 1, rows, 8}));
  try {
    spatialConv(split, x, torch::randn({1, 1, 1, 1}), torch::Tensor(), {{rows, 8}, {2, 2}});
    ADD_FAILURE() << "an empty output block was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("some rank would hold nothing"), std::string::npos) << e.what();
  }
}

// Batch-norm with global statistics: output, input gradient, summed weight and bias gradients
// and the running statistics equal torch's batch-norm over the whole tensor.
TEST(SpatialBatchNorm, GlobalStatisticsMatchOneRankOnEveryGrid) {
  for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{3, 4, 11, 10},
                                                 std::vector<std::int64_t>{2, 3, 7, 6, 5}}) {
    const int dims = static_cast<int>(shape.size()) - 2;
    forEachSplit(dims, [&](const SpatialSplit& split, const std::string& where) {
      torch::manual_seed(5);
      const torch::Tensor x = (torch::randn(shape) * 3 + 1).requires_grad_(true);
      const torch::Tensor weight = torch::randn({shape[1]}, torch::requires_grad());
      const torch::Tensor bias = torch::randn({shape[1]}, torch::requires_grad());
      torch::Tensor mean = torch::zeros({shape[1]}), var = torch::ones({shape[1]});
      const torch::Tensor reference = torch::batch_norm(x, weight, bias, mean, var, true, 0.1, 1e-5, false);
      const torch::Tensor upstream = torch::randn(reference.sizes());
      (reference * upstream).sum().backward();

      // NHWC blocks as IrNet lays 2-D samples out (torch's kernels take either layout).
      torch::Tensor block = split.local(x.detach());
      if (dims == 2) block = block.contiguous(torch::MemoryFormat::ChannelsLast);
      const torch::Tensor xLocal = block.requires_grad_(true);
      const torch::Tensor w = weight.detach().clone().requires_grad_(true);
      const torch::Tensor b = bias.detach().clone().requires_grad_(true);
      torch::Tensor localMean = torch::zeros({shape[1]}), localVar = torch::ones({shape[1]});
      const torch::Tensor y = spatialBatchNorm(split, xLocal, w, b, localMean, localVar, {});
      (y * split.local(upstream)).sum().backward();
      const std::string what = "batch-norm on " + where;
      EXPECT_LT(relative(y, split.local(reference.detach())), 1e-5) << what << ": forward";
      EXPECT_LT(relative(xLocal.grad(), split.local(x.grad())), 1e-4) << what << ": input gradient";
      EXPECT_LT(relative(groupSum(split, w.grad()), weight.grad()), 1e-5) << what << ": weight gradient";
      EXPECT_LT(relative(groupSum(split, b.grad()), bias.grad()), 1e-5) << what << ": bias gradient";
      EXPECT_LT(relative(localMean, mean), 1e-5) << what << ": running mean";
      EXPECT_LT(relative(localVar, var), 1e-5) << what << ": running variance";
    });
  }
}

TEST(SpatialPooling, GlobalAverageMatchesOneRank) {
  forEachSplit(2, [&](const SpatialSplit& split, const std::string& where) {
    torch::manual_seed(3);
    const torch::Tensor x = torch::randn({2, 3, 13, 11}, torch::requires_grad());
    const torch::Tensor reference = torch::adaptive_avg_pool2d(x, {1, 1});
    const torch::Tensor upstream = torch::randn(reference.sizes());
    (reference * upstream).sum().backward();
    const torch::Tensor xLocal = split.local(x.detach()).requires_grad_(true);
    const torch::Tensor y = spatialGlobalAvgPool(split, xLocal);
    (y * upstream).sum().backward();
    EXPECT_LT(relative(y, reference.detach()), 1e-5) << where << ": global average";
    EXPECT_LT(relative(xLocal.grad(), split.local(x.grad())), 1e-5) << where << ": global average gradient";
  });
}

// NHWC blocks get NHWC gradients back: a windowed convolution (its exchange's backward) and the
// global average's backward. An NCHW gradient of an NHWC block sends the layers below down
// torch's mixed-layout paths (max pooling's backward ran 3x data-parallel's on half the rows).
TEST(SpatialLayers, GradientsKeepTheChannelsLastLayout) {
  // The gradient as the layer below receives it (a leaf's .grad is restrided to the leaf's own).
  const auto gradientOf = [](const torch::Tensor& block, const std::function<torch::Tensor(const torch::Tensor&)>& layer) {
    const torch::Tensor leaf = block.detach().requires_grad_(true);
    const torch::Tensor input = leaf * 1;
    torch::Tensor seen;
    input.register_hook([&seen](const torch::Tensor& g) { seen = g; });
    layer(input).sum().backward();
    return seen;
  };
  forEachSplit(2, [&](const SpatialSplit& split, const std::string& where) {
    torch::manual_seed(3);
    const auto nhwc = torch::MemoryFormat::ChannelsLast;
    const torch::Tensor w = torch::randn({6, 4, 3, 3}).contiguous(nhwc);
    const torch::Tensor convolved = gradientOf(split.local(torch::randn({2, 4, 12, 10})).contiguous(nhwc), [&](const torch::Tensor& x) {
      return spatialConv(split, x, w, torch::Tensor(), {{12, 10}, {}, {1, 1}}).square();
    });
    EXPECT_TRUE(convolved.is_contiguous(nhwc)) << where << ": a windowed convolution's, strides " << convolved.strides();
    const torch::Tensor averaged = gradientOf(split.local(torch::randn({2, 6, 12, 10})).contiguous(nhwc),
                                              [&](const torch::Tensor& x) { return spatialGlobalAvgPool(split, x).square(); });
    EXPECT_TRUE(averaged.is_contiguous(nhwc)) << where << ": the global average's, strides " << averaged.strides();
  });
}

struct PoolCase {
  std::string name;
  std::vector<std::int64_t> input;
  std::int64_t kernel, stride, padding;
};

// Windows that cross blocks on every grid: odd extents, overlapping windows, padding.
TEST(SpatialPooling, WindowsAcrossBlocksMatchOneRank) {
  const std::vector<PoolCase> cases{{"2x2", {2, 3, 14, 12}, 2, 2, 0},
                                    {"2x2 odd extents", {1, 2, 13, 11}, 2, 2, 0},
                                    {"3x3 stride 2 pad 1 (ResNet's)", {2, 3, 15, 14}, 3, 2, 1},
                                    {"3x3 stride 1 pad 1", {1, 2, 9, 10}, 3, 1, 1},
                                    {"3x3x3 stride 2", {1, 2, 9, 8, 8}, 3, 2, 1}};
  for (const PoolCase& c : cases) {
    const int dims = static_cast<int>(c.input.size()) - 2;
    forEachSplit(dims, [&](const SpatialSplit& split, const std::string& where) {
      for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage}) {
        torch::manual_seed(3);
        const torch::Tensor x = torch::randn(c.input, torch::requires_grad());
        const std::vector<std::int64_t> k(dims, c.kernel), s(dims, c.stride), p(dims, c.padding);
        const bool max = kind == PoolKind::kMax;
        const torch::Tensor ref = dims == 2 ? (max ? torch::max_pool2d(x, k, s, p) : torch::avg_pool2d(x, k, s, p))
                                            : (max ? torch::max_pool3d(x, k, s, p) : torch::avg_pool3d(x, k, s, p));
        const torch::Tensor up = torch::randn(ref.sizes());
        (ref * up).sum().backward();
        const torch::Tensor xl = split.local(x.detach()).requires_grad_(true);
        const torch::Tensor yl = spatialPool(split, xl, {kind, {c.input.begin() + 2, c.input.end()}, k, s, p});
        (yl * split.local(up)).sum().backward();
        const std::string what = c.name + (max ? " max" : " average") + " pooling on " + where;
        ASSERT_EQ(yl.sizes(), split.local(ref).sizes()) << what;
        EXPECT_LT(relative(yl, split.local(ref.detach())), 1e-6) << what;
        EXPECT_LT(relative(xl.grad(), split.local(x.grad())), 1e-6) << what << ": gradient";
      }
    });
  }
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
