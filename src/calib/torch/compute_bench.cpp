#include "calib/torch/compute_bench.hpp"

#include <algorithm>
#include <chrono>

#include "cost/compute.hpp"
#include "train/ir_module.hpp"
#include "train/torch_runtime.hpp"

namespace paraxis::calib {

std::vector<TimedCall> benchLayers(const graph::Model& model, std::int64_t batch, int threads, int repeats,
                                         const std::function<void()>& beforePass) {
  train::configureTorchThreads(threads, 1);
  torch::manual_seed(1);
  train::IrNet net(model);
  net->train();
  const graph::TensorShape& shape = model.inputShape();
  std::vector<std::int64_t> dims{batch, shape.channels};
  dims.insert(dims.end(), shape.spatial.begin(), shape.spatial.end());
  const torch::Tensor input = torch::randn(dims);

  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> marks(model.size() + 1);
  net->setBeforeLayer([&](int i) { marks[i] = Clock::now(); });
  std::vector<std::vector<double>> seconds(model.size());
  for (int pass = 0; pass <= repeats; ++pass) {
    if (beforePass) beforePass();
    const std::vector<torch::Tensor> outputs = net->run(input);
    marks[model.size()] = Clock::now();
    if (pass == 0) continue;  // warm-up: allocations, oneDNN's kernel choice
    for (int i = 1; i < model.size(); ++i) {
      seconds[i].push_back(std::chrono::duration<double>(marks[i + 1] - marks[i]).count());
    }
  }
  net->setBeforeLayer(nullptr);

  std::vector<TimedCall> calls;
  for (int i = 1; i < model.size(); ++i) {
    const graph::Layer& layer = model.layer(i);
    if (layer.counts.forwardFlops <= 0 || seconds[i].empty()) continue;
    const graph::Layer& in = layer.inputs.empty() ? layer : model.layer(layer.inputs.front());
    const cost::LayerWork work = cost::layerWork(layer, static_cast<double>(in.counts.activationBytes) / model.bytesPerElement(),
                                                 {.samples = static_cast<double>(batch)}, model.bytesPerElement());
    std::vector<double>& s = seconds[i];
    std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
    const bool matrix = layer.kind == graph::LayerKind::kConv || layer.kind == graph::LayerKind::kDeconv ||
                        layer.kind == graph::LayerKind::kFullyConnected;
    calls.push_back({work.forward.flops, work.forward.bytes, matrix, s[s.size() / 2]});
  }
  return calls;
}

}  // namespace paraxis::calib
