#pragma once
// One layer of the model IR: its kind, hyper-parameters, inputs, inferred output shape and
// derived counts. Counts are per sample (multiply by the batch) except params.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "graph/tensor_shape.hpp"

namespace paraxis::graph {

enum class LayerKind {
  kInput,
  kConv,
  kDeconv,  // transposed convolution
  kMaxPool,
  kAvgPool,
  kAdaptiveAvgPool,
  kGlobalAvgPool,
  kBatchNorm,
  kActivation,
  kAdd,
  kConcat,  // along channels
  kFlatten,
  kFullyConnected,
  kDropout,
  kSoftmaxLoss,  // softmax cross-entropy over channels (per position for spatial inputs)
  kMseLoss,      // mean squared error, for regression heads
};

enum class ActivationFunction { kRelu, kLeakyRelu, kElu, kGelu, kSilu, kSigmoid, kTanh };

struct ConvAttrs {  // kConv and kDeconv
  std::int64_t filters = 0;
  Dims kernel{1};
  Dims stride{1};
  Dims padding{0};
  Dims dilation{1};
  Dims outputPadding{0};  // kDeconv only
  std::int64_t groups = 1;
  bool bias = true;
};

struct PoolAttrs {  // kMaxPool and kAvgPool
  Dims kernel{2};
  Dims stride{};  // empty: equal to the kernel, as in torch
  Dims padding{0};
  bool ceilMode = false;
};

struct AdaptivePoolAttrs {
  Dims output{1};
};

struct BatchNormAttrs {
  double eps = 1e-5;
  double momentum = 0.1;
};

struct ActivationAttrs {
  ActivationFunction function = ActivationFunction::kRelu;
  double slope = 0.01;  // kLeakyRelu's negative slope, kElu's alpha
};

struct FcAttrs {
  std::int64_t outputs = 0;
  bool bias = true;
};

struct DropoutAttrs {
  double probability = 0.5;
};

using LayerAttrs = std::variant<std::monostate, ConvAttrs, PoolAttrs, AdaptivePoolAttrs,
                                BatchNormAttrs, ActivationAttrs, FcAttrs, DropoutAttrs>;

struct LayerCounts {
  std::int64_t params = 0;
  double forwardFlops = 0;         // per sample
  double backwardDataFlops = 0;    // per sample: gradient with respect to the input
  double backwardWeightFlops = 0;  // per sample: gradient with respect to the weights
  std::int64_t activationBytes = 0;  // per sample: the output, kept for backward
  std::vector<std::int64_t> halo;    // per spatial dimension of the input, in elements
};

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::kInput;
  LayerAttrs attrs;
  std::vector<int> inputs;  // indices of earlier layers
  TensorShape output;
  LayerCounts counts;

  bool hasWeights() const { return counts.params > 0; }
  template <typename T>
  const T& as() const { return std::get<T>(attrs); }
};

// Names as used in model files and reports ("conv", "maxpool", "relu", ...).
std::string kindName(const Layer& layer);
std::string_view kindName(LayerKind kind);
std::string_view activationName(ActivationFunction function);
std::optional<ActivationFunction> activationFromName(std::string_view name);

}  // namespace paraxis::graph
