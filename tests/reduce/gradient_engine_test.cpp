// "per-layer", "fusion" and "groups" mean the same in the oracle and in the runtime: for real
// models, the groups the oracle schedules (plan::gradientGroupLayers) are the groups the
// gradient engine reduces, layer by layer, under every grouping.
#include <gtest/gtest.h>

#include "comm/self/self_transport.hpp"
#include "graph/zoo/zoo.hpp"
#include "plan/gradient_schedule.hpp"
#include "reduce/gradient_engine.hpp"
#include "train/ir_module.hpp"

namespace paraxis::train {
namespace {

std::vector<std::pair<const char*, GradientComm>> groupings() {
  GradientComm fusion;  // the defaults: 4 MiB buckets after a 1 MiB first one
  GradientComm smallFusion;
  smallFusion.fusionBytes = 256 * 1024;
  smallFusion.firstBucketBytes = 16 * 1024;
  GradientComm perLayer;
  perLayer.grouping = Grouping::kPerLayer;
  GradientComm four;
  four.grouping = Grouping::kGroups;
  four.groups = 4;
  GradientComm seven = four;
  seven.groups = 7;
  return {{"fusion", fusion}, {"small fusion", smallFusion}, {"per-layer", perLayer}, {"4 groups", four},
          {"7 groups", seven}};
}

void expectSameGroups(const char* name) {
  const graph::Model model = graph::buildZooModel(name);
  IrNet net(model);
  for (const auto& [what, settings] : groupings()) {
    reduce::GradientEngine::Layers layers;
    for (int i = 0; i < model.size(); ++i) layers.push_back(net->layerParameters(i));
    const reduce::GradientEngine engine(comm::Communicator(comm::self::makeSelfTransport()), layers, settings);
    std::vector<std::vector<int>> runtime;
    for (int g = 0; g < engine.groupCount(); ++g) runtime.push_back(engine.groupLayers(g));
    const std::vector<std::vector<int>> oracle = plan::gradientGroupLayers(model, settings);
    EXPECT_EQ(oracle, runtime) << name << ", " << what;
    if (settings.grouping == Grouping::kPerLayer) {
      std::size_t weighted = 0;
      for (int i = 0; i < model.size(); ++i) weighted += net->layerParameters(i).empty() ? 0 : 1;
      EXPECT_EQ(runtime.size(), weighted) << name << ": one group per layer with weights";
    }
  }
}

TEST(GradientGroups, OracleAndEngineAgreeOnResNet50) { expectSameGroups("resnet50"); }
TEST(GradientGroups, OracleAndEngineAgreeOnSmallCnn) { expectSameGroups("small-cnn"); }
TEST(GradientGroups, OracleAndEngineAgreeOnInceptionV3) { expectSameGroups("inception-v3"); }


// The engine's readiness hooks go with it: the accumulator that outlives an engine carries none
// of its hooks, and backward still runs.
TEST(GradientEngine, HooksAreRemovedWithTheEngine) {
  torch::Tensor weight = torch::ones({8}, torch::requires_grad());
  const auto accumulator = torch::autograd::impl::grad_accumulator(weight);
  const std::size_t before = accumulator->post_hooks().size();
  {
    const reduce::GradientEngine engine(comm::Communicator(comm::self::makeSelfTransport()),
                                        reduce::GradientEngine::eachTensorALayer({weight}), GradientComm{});
    EXPECT_EQ(accumulator->post_hooks().size(), before + 1);
  }
  EXPECT_EQ(accumulator->post_hooks().size(), before);
  (weight * 2).sum().backward();
  EXPECT_FLOAT_EQ(weight.grad()[0].item<float>(), 2.0F);
}

}  // namespace
}  // namespace paraxis::train
