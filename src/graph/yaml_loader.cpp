#include "graph/yaml_loader.hpp"

#include <fmt/format.h>

#include <array>
#include <map>
#include <string_view>

#include "core/error.hpp"
#include "core/yaml_value.hpp"
#include "graph/onnx_loader.hpp"

namespace paraxis::graph {
namespace {

constexpr std::array<std::string_view, 20> kKinds{
    "conv",    "deconv",     "maxpool", "avgpool", "adaptive_avgpool", "global_avgpool",
    "batchnorm", "relu",     "leaky_relu", "elu",  "gelu",             "silu",
    "sigmoid", "tanh",       "add",     "concat",  "flatten",          "fc",
    "dropout", "softmax_loss"};

std::string kindList() { return fmt::format("{}, mse_loss", fmt::join(kKinds, ", ")); }

ConvAttrs readConv(const YamlValue& v, bool transposed) {
  if (transposed) {
    v.requireKeys({"name", "kind", "inputs", "filters", "kernel", "stride", "padding", "dilation",
                   "groups", "bias", "output_padding"});
  } else {
    v.requireKeys({"name", "kind", "inputs", "filters", "kernel", "stride", "padding", "dilation",
                   "groups", "bias"});
  }
  ConvAttrs a;
  a.filters = v.at("filters").integer(1);
  a.kernel = v.at("kernel").integers(1);
  if (auto s = v.find("stride")) a.stride = s->integers(1);
  if (auto p = v.find("padding")) a.padding = p->integers(0);
  if (auto d = v.find("dilation")) a.dilation = d->integers(1);
  if (auto o = v.find("output_padding")) a.outputPadding = o->integers(0);
  a.groups = v.integer("groups", 1, 1);
  a.bias = v.boolean("bias", true);
  return a;
}

PoolAttrs readPool(const YamlValue& v) {
  v.requireKeys({"name", "kind", "inputs", "kernel", "stride", "padding", "ceil_mode"});
  PoolAttrs a;
  a.kernel = v.at("kernel").integers(1);
  if (auto s = v.find("stride")) a.stride = s->integers(1);
  if (auto p = v.find("padding")) a.padding = p->integers(0);
  a.ceilMode = v.boolean("ceil_mode", false);
  return a;
}

// Returns the kind and attributes of one layer entry, validating its keys.
std::pair<LayerKind, LayerAttrs> readLayer(const YamlValue& v, const std::string& kind) {
  if (kind == "conv") return {LayerKind::kConv, readConv(v, false)};
  if (kind == "deconv") return {LayerKind::kDeconv, readConv(v, true)};
  if (kind == "maxpool") return {LayerKind::kMaxPool, readPool(v)};
  if (kind == "avgpool") return {LayerKind::kAvgPool, readPool(v)};
  if (kind == "adaptive_avgpool") {
    v.requireKeys({"name", "kind", "inputs", "output"});
    return {LayerKind::kAdaptiveAvgPool, AdaptivePoolAttrs{v.at("output").integers(1)}};
  }
  if (kind == "batchnorm") {
    v.requireKeys({"name", "kind", "inputs", "eps", "momentum"});
    return {LayerKind::kBatchNorm,
            BatchNormAttrs{.eps = v.number("eps", 1e-5), .momentum = v.number("momentum", 0.1)}};
  }
  if (auto function = activationFromName(kind)) {
    v.requireKeys({"name", "kind", "inputs", "slope"});
    return {LayerKind::kActivation, ActivationAttrs{*function, v.number("slope", 0.01)}};
  }
  if (kind == "fc") {
    v.requireKeys({"name", "kind", "inputs", "outputs", "bias"});
    return {LayerKind::kFullyConnected, FcAttrs{v.at("outputs").integer(1), v.boolean("bias", true)}};
  }
  if (kind == "dropout") {
    v.requireKeys({"name", "kind", "inputs", "p"});
    const double p = v.number("p", 0.5);
    if (p < 0.0 || p >= 1.0) v.at("p").fail(fmt::format("expected a probability in [0, 1), found {}", p));
    return {LayerKind::kDropout, DropoutAttrs{p}};
  }
  static const std::map<std::string, LayerKind, std::less<>> kPlain{
      {"global_avgpool", LayerKind::kGlobalAvgPool}, {"add", LayerKind::kAdd},
      {"concat", LayerKind::kConcat},                {"flatten", LayerKind::kFlatten},
      {"softmax_loss", LayerKind::kSoftmaxLoss},     {"mse_loss", LayerKind::kMseLoss}};
  if (const auto it = kPlain.find(kind); it != kPlain.end()) {
    v.requireKeys({"name", "kind", "inputs"});
    return {it->second, std::monostate{}};
  }
  v.at("kind").fail(fmt::format("unknown layer kind '{}' (expected one of: {})", kind, kindList()));
}

TensorShape readInput(const YamlValue& v) {
  v.requireKeys({"channels", "size"});
  TensorShape shape{v.at("channels").integer(1), {}};
  const YamlValue size = v.at("size");
  shape.spatial = size.integers(1);
  if (shape.rank() != 2 && shape.rank() != 3) {
    size.fail(fmt::format("expected 2 or 3 spatial extents ([H, W] or [D, H, W]), found {}", shape.rank()));
  }
  return shape;
}

// dataset: {name: ..., samples: N, epochs: E, at_batch: B}; samples required, epochs and
// at_batch optional (at_batch only with epochs).
DatasetSpec readDataset(const YamlValue& v) {
  if (!v.isMap()) v.fail("expected a mapping such as {name: my volumes, samples: 10000, epochs: 50, at_batch: 256}");
  v.requireKeys({"name", "samples", "epochs", "at_batch"});
  DatasetSpec d;
  d.name = v.text("name", "the model file's data set");
  const auto inRange = [&](const char* key, double low, double high) {
    const YamlValue field = v.at(key);
    const double x = field.number();
    if (!(x >= low && x <= high)) field.fail(fmt::format("expected a number in [{:g}, {:g}], found {}", low, high, field.text()));
    return x;
  };
  d.samples = inRange("samples", 1, 1e15);
  if (v.has("epochs")) d.epochs = inRange("epochs", 1e-3, 1e6);
  if (v.has("at_batch")) {
    if (!v.has("epochs")) v.at("at_batch").fail("at_batch anchors 'epochs': give both");
    d.atBatch = inRange("at_batch", 1, 1e12);
  }
  return d;
}

Model buildFrom(const YamlValue& root) {
  root.requireKeys({"name", "input", "bytes_per_element", "dataset", "layers"});
  ModelBuilder builder(root.at("name").text(), readInput(root.at("input")),
                       static_cast<int>(root.integer("bytes_per_element", 4, 1)));
  if (auto dataset = root.find("dataset")) builder.setDataset(readDataset(*dataset));
  std::map<std::string, int> byName{{"input", 0}};
  int previous = 0;
  const std::vector<YamlValue> layers = root.at("layers").items();
  if (layers.empty()) root.at("layers").fail("expected at least one layer");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const YamlValue& v = layers[i];
    if (!v.isMap()) v.fail("expected a mapping with at least 'kind'");
    const std::string kind = v.at("kind").text();
    const std::string name = v.text("name", fmt::format("{}{}", kind, i));
    std::vector<int> inputs{previous};
    if (auto given = v.find("inputs")) {
      inputs.clear();
      const std::vector<YamlValue> names = given->isScalar() ? std::vector<YamlValue>{*given} : given->items();
      for (const YamlValue& n : names) {
        const auto it = byName.find(n.text());
        if (it == byName.end()) n.fail(fmt::format("no earlier layer is named '{}'", n.text()));
        inputs.push_back(it->second);
      }
    }
    auto [layerKind, attrs] = readLayer(v, kind);
    if (byName.count(name) != 0) v.fail(fmt::format("a layer named '{}' already exists", name));
    try {
      previous = builder.add(name, layerKind, std::move(attrs), inputs);
    } catch (const Error& e) {
      v.fail(e.what());
    }
    byName[name] = previous;
  }
  return std::move(builder).build();
}

}  // namespace

Model loadModelFile(const std::string& path) {
  if (path.ends_with(".onnx")) return loadOnnxModel(path);
  try {
    return buildFrom(loadYamlFile(path));
  } catch (const YAML::Exception& e) {
    failOnYamlError(e, path);
  }
}

Model loadModelText(const std::string& text, const std::string& name) {
  try {
    return buildFrom(loadYamlText(text, name));
  } catch (const YAML::Exception& e) {
    failOnYamlError(e, name);
  }
}

}  // namespace paraxis::graph
