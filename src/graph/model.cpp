#include "graph/model.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/counts.hpp"
#include "core/error.hpp"
#include "graph/layer_rules.hpp"

namespace paraxis::graph {

int Model::find(const std::string& layerName) const {
  for (int i = 0; i < size(); ++i) {
    if (layers_[i].name == layerName) return i;
  }
  throw NotFoundError(fmt::format("model '{}' has no layer named '{}'", name_, layerName));
}

std::vector<int> Model::outputs() const {
  std::vector<bool> consumed(layers_.size(), false);
  for (const Layer& layer : layers_) {
    for (int input : layer.inputs) consumed[input] = true;
  }
  std::vector<int> out;
  for (int i = 0; i < size(); ++i) {
    if (!consumed[i]) out.push_back(i);
  }
  return out;
}

namespace {

ModelTotals sumTotals(const std::vector<Layer>& layers) {
  ModelTotals t;
  for (const Layer& layer : layers) {
    t.params = countSum(t.params, layer.counts.params);
    t.forwardFlops += layer.counts.forwardFlops;
    t.backwardDataFlops += layer.counts.backwardDataFlops;
    t.backwardWeightFlops += layer.counts.backwardWeightFlops;
    t.activationBytes = countSum(t.activationBytes, layer.counts.activationBytes);
  }
  return t;
}

}  // namespace

ModelBuilder::ModelBuilder(std::string name, TensorShape input, int bytesPerElement) {
  model_.name_ = std::move(name);
  model_.bytesPerElement_ = bytesPerElement;
  if (input.channels < 1 || std::any_of(input.spatial.begin(), input.spatial.end(),
                                        [](std::int64_t e) { return e < 1; })) {
    throw ShapeError(fmt::format("model '{}': input shape {} must have positive extents",
                                 model_.name_, input.str()));
  }
  Layer layer{.name = "input", .kind = LayerKind::kInput, .output = std::move(input)};
  try {
    layer.counts = countLayer(layer, {}, bytesPerElement);
  } catch (const OverflowError& e) {
    throw ShapeError(fmt::format("model '{}': input {}: {}", model_.name_, layer.output.str(), e.what()));
  }
  names_.insert(layer.name);
  model_.layers_.push_back(std::move(layer));
}

int ModelBuilder::add(std::string name, LayerKind kind, LayerAttrs attrs, std::vector<int> inputs) {
  if (!names_.insert(name).second) throw ConfigError(fmt::format("model '{}': two layers are named '{}'", model_.name_, name));
  Layer layer{.name = std::move(name), .kind = kind, .attrs = std::move(attrs),
              .inputs = std::move(inputs)};
  std::vector<const Layer*> sources;
  for (int input : layer.inputs) {
    if (input < 0 || input >= model_.size()) {
      throw ConfigError(fmt::format("layer '{}': input index {} does not name an earlier layer",
                                    layer.name, input));
    }
    sources.push_back(&model_.layers_[input]);
  }
  try {
    inferShape(layer, sources);
    layer.counts = countLayer(layer, sources, model_.bytesPerElement_);
  } catch (const OverflowError& e) {
    throw ShapeError(fmt::format("model '{}': layer '{}': {}", model_.name_, layer.name, e.what()));
  }
  const bool gradientIn = std::any_of(layer.inputs.begin(), layer.inputs.end(), [&](int i) { return carriesGradient_[i]; });
  if (!gradientIn) layer.counts.backwardDataFlops = 0;
  carriesGradient_.push_back(gradientIn || layer.counts.params > 0);
  model_.layers_.push_back(std::move(layer));
  return model_.size() - 1;
}

int ModelBuilder::conv(std::string name, int x, ConvAttrs attrs) {
  return add(std::move(name), LayerKind::kConv, std::move(attrs), {x});
}
int ModelBuilder::deconv(std::string name, int x, ConvAttrs attrs) {
  return add(std::move(name), LayerKind::kDeconv, std::move(attrs), {x});
}
int ModelBuilder::maxPool(std::string name, int x, PoolAttrs attrs) {
  return add(std::move(name), LayerKind::kMaxPool, std::move(attrs), {x});
}
int ModelBuilder::avgPool(std::string name, int x, PoolAttrs attrs) {
  return add(std::move(name), LayerKind::kAvgPool, std::move(attrs), {x});
}
int ModelBuilder::adaptiveAvgPool(std::string name, int x, Dims output) {
  return add(std::move(name), LayerKind::kAdaptiveAvgPool, AdaptivePoolAttrs{std::move(output)}, {x});
}
int ModelBuilder::globalAvgPool(std::string name, int x) {
  return add(std::move(name), LayerKind::kGlobalAvgPool, {}, {x});
}
int ModelBuilder::batchNorm(std::string name, int x, double eps) {
  return add(std::move(name), LayerKind::kBatchNorm, BatchNormAttrs{.eps = eps}, {x});
}
int ModelBuilder::relu(std::string name, int x) {
  return add(std::move(name), LayerKind::kActivation, ActivationAttrs{}, {x});
}
int ModelBuilder::activation(std::string name, int x, ActivationAttrs attrs) {
  return add(std::move(name), LayerKind::kActivation, attrs, {x});
}
int ModelBuilder::sum(std::string name, std::vector<int> inputs) {
  return add(std::move(name), LayerKind::kAdd, {}, std::move(inputs));
}
int ModelBuilder::concat(std::string name, std::vector<int> inputs) {
  return add(std::move(name), LayerKind::kConcat, {}, std::move(inputs));
}
int ModelBuilder::flatten(std::string name, int x) {
  return add(std::move(name), LayerKind::kFlatten, {}, {x});
}
int ModelBuilder::fc(std::string name, int x, std::int64_t outputs, bool bias) {
  return add(std::move(name), LayerKind::kFullyConnected, FcAttrs{outputs, bias}, {x});
}
int ModelBuilder::dropout(std::string name, int x, double probability) {
  return add(std::move(name), LayerKind::kDropout, DropoutAttrs{probability}, {x});
}
int ModelBuilder::softmaxLoss(std::string name, int x) {
  return add(std::move(name), LayerKind::kSoftmaxLoss, {}, {x});
}
int ModelBuilder::mseLoss(std::string name, int x) {
  return add(std::move(name), LayerKind::kMseLoss, {}, {x});
}

Model ModelBuilder::build() && {
  try {
    model_.totals_ = sumTotals(model_.layers_);
  } catch (const OverflowError& e) {
    throw ShapeError(fmt::format("model '{}': the totals over its layers: {}", model_.name_, e.what()));
  }
  return std::move(model_);
}

}  // namespace paraxis::graph
