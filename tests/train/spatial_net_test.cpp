// Whole models split spatially ("spatial early, replicated late") train like one rank: after
// five SGD steps every weight equals the one-rank run's. In float64: in float32 a ReLU whose
// input lies within rounding of zero can switch between two runs that sum in different orders,
// and after a few steps that discontinuity, not the distribution, dominates the difference. Linked into parallel_test (mpirun at
// 2, 3 and 4 ranks).
#include <gtest/gtest.h>

#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "graph/zoo/zoo.hpp"
#include "train/spatial_net.hpp"

namespace paraxis::parallel {
extern comm::Communicator* gSpatialWorld;
}

namespace paraxis::train {
namespace {

constexpr int kSteps = 5;
constexpr double kLr = 0.05;

struct Batches {
  torch::Tensor x, y;
};

void sgd(IrNet& net) {
  torch::NoGradGuard noGrad;
  for (torch::Tensor& p : net->parameters()) {
    p.sub_(p.grad(), kLr);
    p.mutable_grad().zero_();
  }
}

double maxRelative(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>() / std::max(1e-12, b[i].abs().max().item<double>()));
  }
  return worst;
}

std::vector<torch::Tensor> snapshot(IrNet& net) {
  std::vector<torch::Tensor> out;
  for (const auto& p : net->parameters()) out.push_back(p.detach().clone());
  for (const auto& b : net->buffers()) out.push_back(b.detach().clone().to(torch::kFloat64));
  return out;
}

TEST(SpatialNet, SmallCnnAfterFiveStepsEqualsOneRank) {
  const comm::Communicator& world = *parallel::gSpatialWorld;
  const int ranks = world.size();
  // A grid with every block a multiple of 16 rows, so each of the four 2x2 poolings stays inside blocks.
  const std::vector<int> grid = ranks == 4 ? std::vector<int>{2, 2} : std::vector<int>{ranks, 1};
  const std::int64_t extent = 16 * std::max(grid[0], grid[1]);
  const graph::Model model = graph::buildZooModel("small-cnn", {.spatial = {extent, extent}});
  torch::manual_seed(3);
  const Batches data{torch::randn({kSteps * 4, 3, extent, extent}, torch::kFloat64),
                     torch::randint(10, {kSteps * 4}, torch::kInt64)};

  torch::manual_seed(7);
  IrNet serial(model);
  serial->to(torch::kFloat64);
  for (int s = 0; s < kSteps; ++s) {
    serial->loss(serial->run(data.x.narrow(0, 4 * s, 4)), data.y.narrow(0, 4 * s, 4)).backward();
    sgd(serial);
  }

  const parallel::SpatialSplit split{world, grid};
  torch::manual_seed(7);
  IrNet net(model);
  net->to(torch::kFloat64);
  SpatialNet spatial(net, split);
  for (int s = 0; s < kSteps; ++s) {
    const auto outputs = spatial.run(split.local(data.x.narrow(0, 4 * s, 4)));
    spatial.net()->loss(outputs, data.y.narrow(0, 4 * s, 4)).backward();
    spatial.reduceSpatialGradients();
    sgd(spatial.net());
  }
  EXPECT_LT(maxRelative(snapshot(spatial.net()), snapshot(serial)), 1e-9) << "grid " << grid[0] << "x" << grid[1];
}

TEST(SpatialNet, AModelWithoutGlobalPoolingIsRefusedNamingTheLayer) {
  const parallel::SpatialSplit split{*parallel::gSpatialWorld, {parallel::gSpatialWorld->size(), 1}};
  try {
    SpatialNet net(IrNet(graph::buildZooModel("lenet")), split);
    FAIL() << "lenet accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'flatten'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace paraxis::train
