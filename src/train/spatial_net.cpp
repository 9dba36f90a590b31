#include "train/spatial_net.hpp"

#include <fmt/format.h>

#include "comm/allreduce.hpp"
#include "core/error.hpp"
#include "parallel/spatial_layers.hpp"

namespace paraxis::train {
namespace {

using graph::Layer;
using graph::LayerKind;

std::int64_t at(const graph::Dims& v, std::size_t i) { return v.size() == 1 ? v.front() : v.at(i); }

torch::Tensor parameter(const torch::nn::Module& m, const char* name) {
  const auto* p = m.named_parameters(false).find(name);
  return p == nullptr ? torch::Tensor() : *p;
}

torch::Tensor buffer(const torch::nn::Module& m, const char* name) {
  const auto* b = m.named_buffers(false).find(name);
  return b == nullptr ? torch::Tensor() : *b;
}

}  // namespace

SpatialNet::SpatialNet(IrNet net, const parallel::SpatialSplit& split) : net_(std::move(net)), split_(split) {
  const graph::Model& model = net_->model();
  splitPoint_ = -1;
  for (int i = 1; i < model.size() && splitPoint_ < 0; ++i) {
    checkLayer(i);
    if (model.layer(i).kind == LayerKind::kGlobalAvgPool) splitPoint_ = i + 1;
  }
  if (splitPoint_ < 0) {
    throw ConfigError(fmt::format("model '{}': a spatial split ends at a global average pooling, and the model has none",
                                  model.name()));
  }
}

void SpatialNet::checkLayer(int index) const {
  const Layer& l = net_->model().layer(index);
  const auto fail = [&](const std::string& why) {
    throw ConfigError(fmt::format("layer '{}' ({}) cannot run spatially split: {}", l.name, graph::kindName(l.kind), why));
  };
  const std::size_t dims = split_.grid.size();
  switch (l.kind) {
    case LayerKind::kConv: {
      const auto& a = l.as<graph::ConvAttrs>();
      for (std::size_t i = 0; i < dims; ++i) {
        const std::int64_t k = at(a.kernel, i), d = at(a.dilation, i);
        if (at(a.stride, i) != 1 || k % 2 == 0 || at(a.padding, i) != d * (k - 1) / 2) {
          fail("only 'same' convolutions (stride 1, odd kernel, padding dilation x (kernel - 1) / 2) so far");
        }
      }
      return;
    }
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: {
      const auto& a = l.as<graph::PoolAttrs>();
      const graph::Dims& stride = a.stride.empty() ? a.kernel : a.stride;
      for (std::size_t i = 0; i < dims; ++i) {
        if (at(stride, i) != at(a.kernel, i) || at(a.padding, i) != 0 || at(a.kernel, i) != at(a.kernel, 0)) {
          fail("only pooling with equal square windows and strides, without padding, so far");
        }
      }
      return;
    }
    case LayerKind::kBatchNorm:
    case LayerKind::kActivation:
    case LayerKind::kAdd:
    case LayerKind::kConcat:
    case LayerKind::kGlobalAvgPool: return;
    default: fail("it needs the whole spatial extent before the model's global pooling");
  }
}

torch::Tensor SpatialNet::applySpatial(int index, const std::vector<torch::Tensor>& outputs) {
  const Layer& l = net_->model().layer(index);
  const torch::Tensor& x = outputs[l.inputs.front()];
  const std::shared_ptr<torch::nn::Module> m = net_->layerModule(index);
  switch (l.kind) {
    case LayerKind::kConv: {
      const auto& a = l.as<graph::ConvAttrs>();
      std::vector<std::int64_t> dilation;
      for (std::size_t i = 0; i < split_.grid.size(); ++i) dilation.push_back(at(a.dilation, i));
      return parallel::spatialConv(split_, x, parameter(*m, "weight"), parameter(*m, "bias"), {dilation, a.groups});
    }
    case LayerKind::kBatchNorm: {
      if (!net_->is_training()) return net_->applyLayer(index, outputs);  // running statistics: local
      const auto& a = l.as<graph::BatchNormAttrs>();
      if (torch::Tensor tracked = buffer(*m, "num_batches_tracked"); tracked.defined()) {
        torch::NoGradGuard noGrad;
        tracked.add_(1);  // as torch's batch-norm counts its training steps
      }
      return parallel::spatialBatchNorm(split_, x, parameter(*m, "weight"), parameter(*m, "bias"),
                                        buffer(*m, "running_mean"), buffer(*m, "running_var"), {a.momentum, a.eps});
    }
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: {
      std::vector<std::int64_t> extents(net_->model().layer(l.inputs.front()).output.spatial.begin(),
                                        net_->model().layer(l.inputs.front()).output.spatial.end());
      return parallel::spatialPool(split_, x, l.kind == LayerKind::kMaxPool ? parallel::PoolKind::kMax
                                                                           : parallel::PoolKind::kAverage,
                                   at(l.as<graph::PoolAttrs>().kernel, 0), extents);
    }
    case LayerKind::kGlobalAvgPool: return parallel::spatialGlobalAvgPool(split_, x);
    default: return net_->applyLayer(index, outputs);
  }
}

std::vector<torch::Tensor> SpatialNet::run(const torch::Tensor& localInput) {
  const graph::Model& model = net_->model();
  std::vector<torch::Tensor> outputs(model.size());
  outputs[0] = localInput.contiguous();
  for (int i = 1; i < model.size(); ++i) {
    outputs[i] = i < splitPoint_ ? applySpatial(i, outputs) : net_->applyLayer(i, outputs);
  }
  return outputs;
}

void SpatialNet::reduceSpatialGradients() {
  for (int i = 1; i < splitPoint_; ++i) {
    for (torch::Tensor& p : net_->layerParameters(i)) {
      if (!p.grad().defined()) continue;
      torch::Tensor g = p.grad().contiguous();
      comm::allreduce(split_.comm, g.data_ptr(), g.data_ptr(), static_cast<std::size_t>(g.numel()),
                      parallel::commTypeOf(g));
      p.mutable_grad().copy_(g);
    }
  }
}

}  // namespace paraxis::train
