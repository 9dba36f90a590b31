#include "graph/layer.hpp"

#include <array>
#include <utility>

namespace paraxis::graph {
namespace {

constexpr std::array kActivationNames{
    std::pair{ActivationFunction::kRelu, std::string_view("relu")},
    std::pair{ActivationFunction::kLeakyRelu, std::string_view("leaky_relu")},
    std::pair{ActivationFunction::kElu, std::string_view("elu")},
    std::pair{ActivationFunction::kGelu, std::string_view("gelu")},
    std::pair{ActivationFunction::kSilu, std::string_view("silu")},
    std::pair{ActivationFunction::kSigmoid, std::string_view("sigmoid")},
    std::pair{ActivationFunction::kTanh, std::string_view("tanh")},
};

}  // namespace

std::string_view kindName(LayerKind kind) {
  switch (kind) {
    case LayerKind::kInput: return "input";
    case LayerKind::kConv: return "conv";
    case LayerKind::kDeconv: return "deconv";
    case LayerKind::kMaxPool: return "maxpool";
    case LayerKind::kAvgPool: return "avgpool";
    case LayerKind::kAdaptiveAvgPool: return "adaptive_avgpool";
    case LayerKind::kGlobalAvgPool: return "global_avgpool";
    case LayerKind::kBatchNorm: return "batchnorm";
    case LayerKind::kActivation: return "activation";
    case LayerKind::kAdd: return "add";
    case LayerKind::kConcat: return "concat";
    case LayerKind::kFlatten: return "flatten";
    case LayerKind::kFullyConnected: return "fc";
    case LayerKind::kDropout: return "dropout";
    case LayerKind::kSoftmaxLoss: return "softmax_loss";
    case LayerKind::kMseLoss: return "mse_loss";
  }
  return "?";
}

std::string kindName(const Layer& layer) {
  if (layer.kind == LayerKind::kActivation) {
    return std::string(activationName(layer.as<ActivationAttrs>().function));
  }
  return std::string(kindName(layer.kind));
}

std::string_view activationName(ActivationFunction function) {
  for (const auto& [f, name] : kActivationNames) {
    if (f == function) return name;
  }
  return "?";
}

std::optional<ActivationFunction> activationFromName(std::string_view name) {
  for (const auto& [f, n] : kActivationNames) {
    if (n == name) return f;
  }
  return std::nullopt;
}

}  // namespace paraxis::graph
