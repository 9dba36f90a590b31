#include "graph/onnx_loader.hpp"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <fstream>
#include <map>
#include <set>

#include "core/error.hpp"

namespace paraxis::graph {
namespace {

using Dims64 = std::vector<std::int64_t>;

// The state of one model's reading: which layer each tensor is, and the shapes and values of
// the tensors that are not layers (weights, constants).
struct Reader {
  std::string path;
  ModelBuilder* builder = nullptr;
  std::map<std::string, Dims64> weightDims;
  std::map<std::string, const onnx::TensorProto*> constants;
  std::map<std::string, int> layerOf;
  std::map<std::string, Dims64> padOf;  // a Pad's output: its layer's, with this padding per spatial axis
  std::set<std::string> names;

  std::string fail(const onnx::NodeProto& n, const std::string& what) const {
    return fmt::format("{}: node '{}' ({}): {}", path, n.name(), n.op_type(), what);
  }

  int layer(const onnx::NodeProto& n, int input) const {
    if (input >= n.input_size()) throw ConfigError(fail(n, fmt::format("expected an input #{}", input)));
    if (padOf.count(n.input(input)) > 0) {
      throw ConfigError(fail(n, fmt::format("its input '{}' comes from a Pad: padding maps only into a convolution or "
                                            "pooling", n.input(input))));
    }
    return padded(n, input, nullptr);
  }

  // The layer of input #input, and in `pads` (when given) the padding a Pad before it added.
  int padded(const onnx::NodeProto& n, int input, Dims64* pads) const {
    if (pads != nullptr) {
      const auto p = padOf.find(n.input(input));
      if (p != padOf.end()) *pads = p->second;
    }
    const auto it = layerOf.find(n.input(input));
    if (it == layerOf.end()) {
      throw ConfigError(fail(n, fmt::format("its input '{}' is not the output of a layer the model has", n.input(input))));
    }
    return it->second;
  }

  const Dims64& weight(const onnx::NodeProto& n, int input) const {
    const auto it = input < n.input_size() ? weightDims.find(n.input(input)) : weightDims.end();
    if (it == weightDims.end()) throw ConfigError(fail(n, fmt::format("expected a weight as input #{}", input)));
    return it->second;
  }

  std::string nameOf(const onnx::NodeProto& n) {
    std::string name = n.name().empty() ? n.op_type() : n.name();
    for (int k = 1; names.count(name) > 0; ++k) name = fmt::format("{}_{}", n.name().empty() ? n.op_type() : n.name(), k);
    names.insert(name);
    return name;
  }

  void define(const onnx::NodeProto& n, int layerIndex) {
    if (n.output_size() > 0) layerOf[n.output(0)] = layerIndex;
  }
};

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

Dims64 ints(const onnx::NodeProto& n, const char* name, Dims64 fallback) {
  const onnx::AttributeProto* a = attribute(n, name);
  return a == nullptr ? fallback : Dims64(a->ints().begin(), a->ints().end());
}

std::int64_t integer(const onnx::NodeProto& n, const char* name, std::int64_t fallback) {
  const onnx::AttributeProto* a = attribute(n, name);
  return a == nullptr ? fallback : a->i();
}

double real(const onnx::NodeProto& n, const char* name, double fallback) {
  const onnx::AttributeProto* a = attribute(n, name);
  return a == nullptr ? fallback : a->f();
}

// ONNX pads list every axis's start, then every axis's end; the IR pads both ends alike.
Dims64 symmetricPads(const Reader& r, const onnx::NodeProto& n, std::size_t axes) {
  const Dims64 pads = ints(n, "pads", Dims64(2 * axes, 0));
  if (pads.size() != 2 * axes) throw ConfigError(r.fail(n, fmt::format("expected {} pads, found {}", 2 * axes, pads.size())));
  for (std::size_t i = 0; i < axes; ++i) {
    if (pads[i] != pads[i + axes]) throw ConfigError(r.fail(n, "padding that differs at the two ends of an axis"));
  }
  return {pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(axes)};
}

// Padding of the layer plus what a Pad before it added.
Dims64 withPad(Dims64 own, const Dims64& extra) {
  for (std::size_t i = 0; i < own.size() && i < extra.size(); ++i) own[i] += extra[i];
  return own;
}

int conv(Reader& r, const onnx::NodeProto& n) {
  const Dims64& w = r.weight(n, 1);  // filters, channels per group, kernel...
  if (w.size() < 3) throw ConfigError(r.fail(n, "expected a weight of rank 3 to 5"));
  const std::size_t axes = w.size() - 2;
  ConvAttrs a;
  a.filters = w[0];
  a.kernel = ints(n, "kernel_shape", Dims64(w.begin() + 2, w.end()));
  a.stride = ints(n, "strides", Dims64(axes, 1));
  Dims64 extra;
  const int x = r.padded(n, 0, &extra);
  a.padding = withPad(symmetricPads(r, n, axes), extra);
  a.dilation = ints(n, "dilations", Dims64(axes, 1));
  a.groups = integer(n, "group", 1);
  a.bias = n.input_size() > 2 && !n.input(2).empty();
  return r.builder->conv(r.nameOf(n), x, a);
}

// ConvTranspose's weight is [input channels, output channels per group, kernel...].
int deconv(Reader& r, const onnx::NodeProto& n) {
  const Dims64& w = r.weight(n, 1);
  if (w.size() < 3) throw ConfigError(r.fail(n, "expected a weight of rank 3 to 5"));
  if (attribute(n, "output_shape") != nullptr) throw ConfigError(r.fail(n, "output_shape: give pads and output_padding"));
  const std::size_t axes = w.size() - 2;
  ConvAttrs a;
  a.groups = integer(n, "group", 1);
  a.filters = w[1] * a.groups;
  a.kernel = ints(n, "kernel_shape", Dims64(w.begin() + 2, w.end()));
  a.stride = ints(n, "strides", Dims64(axes, 1));
  a.padding = symmetricPads(r, n, axes);
  a.dilation = ints(n, "dilations", Dims64(axes, 1));
  a.outputPadding = ints(n, "output_padding", Dims64(axes, 0));
  a.bias = n.input_size() > 2 && !n.input(2).empty();
  return r.builder->deconv(r.nameOf(n), r.layer(n, 0), a);
}

int pool(Reader& r, const onnx::NodeProto& n, bool max) {
  const Dims64 kernel = ints(n, "kernel_shape", {});
  if (kernel.empty()) throw ConfigError(r.fail(n, "expected kernel_shape"));
  PoolAttrs a;
  a.kernel = kernel;
  a.stride = ints(n, "strides", Dims64(kernel.size(), 1));
  Dims64 extra;
  const int x = r.padded(n, 0, &extra);
  a.padding = withPad(symmetricPads(r, n, kernel.size()), extra);
  a.ceilMode = integer(n, "ceil_mode", 0) != 0;
  return max ? r.builder->maxPool(r.nameOf(n), x, a) : r.builder->avgPool(r.nameOf(n), x, a);
}

int gemm(Reader& r, const onnx::NodeProto& n) {
  const Dims64& b = r.weight(n, 1);
  if (b.size() != 2) throw ConfigError(r.fail(n, "expected a 2-D weight"));
  if (integer(n, "transA", 0) != 0) throw ConfigError(r.fail(n, "a transposed input (transA) is not a layer"));
  const std::int64_t outputs = integer(n, "transB", 0) != 0 ? b[0] : b[1];
  return r.builder->fc(r.nameOf(n), r.layer(n, 0), outputs, n.input_size() > 2 && !n.input(2).empty());
}

// A float held by a constant tensor (an initializer or a Constant node), for Dropout's ratio.
std::optional<double> constantValue(const Reader& r, const std::string& name) {
  const auto it = r.constants.find(name);
  if (it == r.constants.end()) return std::nullopt;
  const onnx::TensorProto& t = *it->second;
  if (t.data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
  if (t.float_data_size() > 0) return t.float_data(0);
  if (t.raw_data().size() >= sizeof(float)) {
    float v = 0;
    std::memcpy(&v, t.raw_data().data(), sizeof(float));
    return v;
  }
  return std::nullopt;
}

// Integers held by a constant tensor (Pad's pads).
std::optional<Dims64> constantInts(const Reader& r, const std::string& name) {
  const auto it = r.constants.find(name);
  if (it == r.constants.end() || it->second->data_type() != onnx::TensorProto::INT64) return std::nullopt;
  const onnx::TensorProto& t = *it->second;
  if (t.int64_data_size() > 0) return Dims64(t.int64_data().begin(), t.int64_data().end());
  Dims64 out(t.raw_data().size() / sizeof(std::int64_t));
  if (!out.empty()) std::memcpy(out.data(), t.raw_data().data(), out.size() * sizeof(std::int64_t));
  return out;
}

// A zero padding of the spatial axes, alike at both ends, before a convolution or pooling (how
// torch exports an average pool that counts the padding): folded into that layer.
int pad(Reader& r, const onnx::NodeProto& n) {
  const onnx::AttributeProto* mode = attribute(n, "mode");
  if (mode != nullptr && mode->s() != "constant") throw ConfigError(r.fail(n, "only constant (zero) padding"));
  const std::optional<Dims64> pads = n.input_size() > 1 ? constantInts(r, n.input(1)) : ints(n, "pads", {});
  if (!pads || pads->size() < 6 || pads->size() % 2 != 0) throw ConfigError(r.fail(n, "expected constant pads over every axis"));
  const std::size_t axes = pads->size() / 2;
  Dims64 spatial;
  for (std::size_t i = 0; i < axes; ++i) {
    const bool batchOrChannels = i < 2;
    if ((*pads)[i] != (*pads)[i + axes] || (batchOrChannels && (*pads)[i] != 0)) {
      throw ConfigError(r.fail(n, "only padding of the spatial axes, alike at both ends"));
    }
    if (!batchOrChannels) spatial.push_back((*pads)[i]);
  }
  const int x = r.layer(n, 0);
  r.layerOf[n.output(0)] = x;
  r.padOf[n.output(0)] = spatial;
  return -1;
}

std::vector<int> allInputs(const Reader& r, const onnx::NodeProto& n) {
  std::vector<int> inputs;
  for (int i = 0; i < n.input_size(); ++i) inputs.push_back(r.layer(n, i));
  return inputs;
}

int activation(Reader& r, const onnx::NodeProto& n, ActivationFunction f, double slope) {
  return r.builder->activation(r.nameOf(n), r.layer(n, 0), {.function = f, .slope = slope});
}

// The node's layer, or -1 for a node that only names a value (Constant) or passes it on.
int mapNode(Reader& r, const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (op == "Constant") {
    if (const onnx::AttributeProto* v = attribute(n, "value"); v != nullptr && n.output_size() > 0) r.constants[n.output(0)] = &v->t();
    return -1;
  }
  if (op == "Identity") return r.layer(n, 0);
  if (op == "Pad") return pad(r, n);
  if (op == "Conv") return conv(r, n);
  if (op == "ConvTranspose") return deconv(r, n);
  if (op == "MaxPool") return pool(r, n, true);
  if (op == "AveragePool") return pool(r, n, false);
  if (op == "GlobalAveragePool") return r.builder->globalAvgPool(r.nameOf(n), r.layer(n, 0));
  if (op == "BatchNormalization") return r.builder->batchNorm(r.nameOf(n), r.layer(n, 0), real(n, "epsilon", 1e-5));
  if (op == "Relu") return r.builder->relu(r.nameOf(n), r.layer(n, 0));
  if (op == "LeakyRelu") return activation(r, n, ActivationFunction::kLeakyRelu, real(n, "alpha", 0.01));
  if (op == "Elu") return activation(r, n, ActivationFunction::kElu, real(n, "alpha", 1.0));
  if (op == "Sigmoid") return activation(r, n, ActivationFunction::kSigmoid, 0);
  if (op == "Tanh") return activation(r, n, ActivationFunction::kTanh, 0);
  if (op == "Add" || op == "Sum") return r.builder->sum(r.nameOf(n), allInputs(r, n));
  if (op == "Concat") {
    if (integer(n, "axis", 1) != 1) throw ConfigError(r.fail(n, "only concatenation along the channels (axis 1)"));
    return r.builder->concat(r.nameOf(n), allInputs(r, n));
  }
  if (op == "Flatten") {
    if (integer(n, "axis", 1) != 1) throw ConfigError(r.fail(n, "only flattening from axis 1"));
    return r.builder->flatten(r.nameOf(n), r.layer(n, 0));
  }
  if (op == "Gemm") return gemm(r, n);
  if (op == "Dropout") {
    const double ratio = n.input_size() > 1 ? constantValue(r, n.input(1)).value_or(0.5) : real(n, "ratio", 0.5);
    return r.builder->dropout(r.nameOf(n), r.layer(n, 0), ratio);
  }
  if (op == "Softmax" || op == "LogSoftmax") return r.builder->softmaxLoss(r.nameOf(n), r.layer(n, 0));
  throw ConfigError(r.fail(n, fmt::format("operator not supported (paraxis maps {})", onnxOperators())));
}

Dims64 dimsOf(const onnx::ValueInfoProto& v) {
  Dims64 dims;
  for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

onnx::ModelProto readProto(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NotFoundError(fmt::format("{}: cannot read it", path));
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in) || !model.has_graph()) {
    throw ConfigError(fmt::format("{}: not an ONNX model (it does not parse as an ONNX ModelProto)", path));
  }
  return model;
}

// The data input: the first graph input that is not a weight, as [batch, channels, spatial...].
TensorShape dataShape(const Reader& r, const onnx::GraphProto& g, std::string* name) {
  for (const auto& v : g.input()) {
    if (r.constants.count(v.name()) > 0) continue;
    const Dims64 dims = dimsOf(v);
    if (dims.size() < 3 || dims.size() > 5) continue;
    for (std::size_t i = 1; i < dims.size(); ++i) {
      if (dims[i] <= 0) throw ConfigError(fmt::format("{}: input '{}': dimension {} has no fixed size", r.path, v.name(), i));
    }
    *name = v.name();
    return {dims[1], Dims64(dims.begin() + 2, dims.end())};
  }
  throw ConfigError(fmt::format("{}: no data input of rank 3 to 5 ([batch, channels, spatial...])", r.path));
}

}  // namespace

const char* onnxOperators() {
  return "Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool, BatchNormalization, Relu, LeakyRelu, Elu, Sigmoid, Tanh, "
         "Add, Sum, Concat, Flatten, Gemm, Dropout, Softmax, LogSoftmax, Identity, Constant, and a zero Pad before a "
         "convolution or pooling";
}

Model loadOnnxModel(const std::string& path) {
  const onnx::ModelProto proto = readProto(path);
  const onnx::GraphProto& g = proto.graph();
  Reader r{.path = path, .builder = nullptr, .weightDims = {}, .constants = {}, .layerOf = {}, .names = {}};
  for (const auto& t : g.initializer()) {
    r.weightDims[t.name()] = Dims64(t.dims().begin(), t.dims().end());
    r.constants[t.name()] = &t;
  }
  std::string dataName;
  const TensorShape input = dataShape(r, g, &dataName);
  for (const auto& v : g.input()) {
    if (v.name() != dataName && r.weightDims.count(v.name()) == 0) r.weightDims[v.name()] = dimsOf(v);
  }
  // Named for its file: exporters name every graph alike (torch: "torch_jit").
  ModelBuilder builder(std::filesystem::path(path).stem().string(), input);
  r.builder = &builder;
  r.layerOf[dataName] = builder.input();
  for (const auto& n : g.node()) {
    if (const int layer = mapNode(r, n); layer >= 0) r.define(n, layer);
  }
  int losses = 0;
  for (const auto& out : g.output()) {
    const auto it = r.layerOf.find(out.name());
    if (it == r.layerOf.end()) throw ConfigError(fmt::format("{}: output '{}' is not a layer's", path, out.name()));
    const LayerKind kind = builder.kindOf(it->second);
    if (kind != LayerKind::kSoftmaxLoss && kind != LayerKind::kMseLoss) {
      builder.softmaxLoss(losses == 0 ? "loss" : fmt::format("loss_{}", losses), it->second);
    }
    ++losses;
  }
  return std::move(builder).build();
}

}  // namespace paraxis::graph
