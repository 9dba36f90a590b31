#pragma once
// What the whole-model equivalence tests of the distributed executors share (spatial, channel,
// pipeline): the one-rank reference trained by plain SGD in float64, the engine's gradient
// average, and the largest relative difference of two weight lists.
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "comm/allreduce.hpp"
#include "comm/communicator.hpp"
#include "graph/model.hpp"
#include "train/dataset.hpp"
#include "train/ir_module.hpp"

namespace paraxis::train::testing {

constexpr int kSteps = 5;
constexpr double kLr = 0.05;

// Plain SGD on the parameters that have gradients (a pipeline stage's), gradients zeroed after.
inline void sgd(const std::vector<torch::Tensor>& parameters) {
  torch::NoGradGuard noGrad;
  for (const torch::Tensor& p : parameters) {
    if (!p.grad().defined()) continue;
    torch::Tensor w = p;
    w.sub_(p.grad(), kLr);
    w.mutable_grad().zero_();
  }
}

// The gradient engine's average over every rank that holds the weights.
inline void averageGradients(IrNet& net, const comm::Communicator& group) {
  for (torch::Tensor& p : net->parameters()) {
    torch::Tensor g = p.grad().contiguous();
    comm::allreduce(group, g.data_ptr<double>(), g.data_ptr<double>(), static_cast<std::size_t>(g.numel()),
                    comm::DataType::kF64);
    p.mutable_grad().copy_(g / group.size());
  }
}

// Both runs start from the same generator state: the same weights and the same dropout masks.
inline IrNet freshNet(const graph::Model& model) {
  torch::manual_seed(7);
  IrNet net(model, IrNetOptions{.inPlace = true, .channelsLast = true});
  net->to(torch::kFloat64);
  return net;
}

// The one-rank reference: kSteps SGD steps on consecutive batches of `batch` samples of `data`.
// Trained once per process for each (model, data, batch): the filter and channel cases of a
// model share it, and every rank of an oversubscribed run trains it (resnet18 in float64).
inline IrNet trainSerially(const graph::Model& model, const Dataset& data, std::int64_t batch) {
  static std::map<std::string, IrNet> trained;
  std::ostringstream key;
  key.precision(17);
  key << model.name() << ' ' << model.layers().size() << ' ' << data.images.sizes() << ' ' << data.labels.sizes() << ' ' << batch << ' '
      << data.images.sum().item<double>() << ' ' << data.labels.sum().item<double>();
  if (const auto found = trained.find(key.str()); found != trained.end()) return found->second;
  IrNet net = freshNet(model);
  const torch::Tensor x = data.images.to(torch::kFloat64);
  for (int s = 0; s < kSteps; ++s) {
    net->loss(net->run(x.narrow(0, batch * s, batch)), data.labels.narrow(0, batch * s, batch)).backward();
    sgd(net->parameters());
  }
  trained.emplace(key.str(), net);
  return net;
}

inline double maxRelative(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>() / std::max(1e-12, b[i].abs().max().item<double>()));
  }
  return worst;
}

}  // namespace paraxis::train::testing
