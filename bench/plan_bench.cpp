// The oracle's speed: one configuration evaluation (Calculon, the fastest published analytical
// tool, spends about 3.5 ms per configuration), and the per-layer distribution search.
//   build/bench/plan_bench
#include <benchmark/benchmark.h>

#include "graph/zoo/zoo.hpp"
#include "hw/presets.hpp"
#include "plan/estimator.hpp"
#include "plan/layer_search.hpp"
#include "plan/oracle.hpp"

namespace {

using namespace paraxis;

struct Setup {
  graph::Model model;
  hw::Cluster cluster = hw::loadCluster("abci");
  plan::PlanInputs inputs;
  explicit Setup(const char* name) : model(graph::buildZooModel(name)) {
    inputs.model = &model;
    inputs.cluster = &cluster;
    inputs.datasetSamples = 1281167;
  }
};

void estimateResNet50Data(benchmark::State& state) {
  Setup s("resnet50");
  const plan::Strategy strategy{"data", plan::Grid{.data = 64}, 64 * 32};
  plan::Oracle oracle(s.inputs);
  for (auto _ : state) benchmark::DoNotOptimize(oracle.estimate(strategy, false));
}
BENCHMARK(estimateResNet50Data)->Unit(benchmark::kMicrosecond);

void estimateResNet50DataFilter(benchmark::State& state) {
  Setup s("resnet50");
  const plan::Strategy strategy{"data+filter", plan::Grid{.data = 16, .filter = 4}, 64 * 32};
  plan::Oracle oracle(s.inputs);
  for (auto _ : state) benchmark::DoNotOptimize(oracle.estimate(strategy, false));
}
BENCHMARK(estimateResNet50DataFilter)->Unit(benchmark::kMicrosecond);

void perLayerSearchResNet152(benchmark::State& state) {
  Setup s("resnet152");
  for (auto _ : state) benchmark::DoNotOptimize(plan::searchDistributions(s.inputs, 64, 64 * 32));
}
BENCHMARK(perLayerSearchResNet152)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
