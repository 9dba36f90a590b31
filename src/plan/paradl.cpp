#include "plan/paradl.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "core/error.hpp"

namespace paraxis::plan {
namespace {

constexpr double kBytesPerItem = 4;

std::int64_t product(const std::vector<std::int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{1}, std::multiplies<>());
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string cell;
  while (std::getline(in, cell, separator)) out.push_back(cell);
  return out;
}

// ParaDL names a layer by its kind with a suffix: CONV_2a1, FC6, BNORM.
std::string kindOf(const std::string& name) {
  for (const char* kind : {"CONV", "FC", "BNORM", "RELU", "MPOOL", "APOOL", "ADD"}) {
    if (name.find(kind) != std::string::npos) return kind;
  }
  return "OTHER";
}

std::vector<std::int64_t> dims(const std::string& text, const std::string& where) {
  std::vector<std::int64_t> out;
  for (const std::string& d : split(text, 'x')) {
    try {
      std::size_t used = 0;
      out.push_back(std::stoll(d, &used));
      if (used != d.size()) throw std::invalid_argument(d);
    } catch (const std::exception&) {
      throw ConfigError(fmt::format("{}: expected dimensions like 64x56x56, found '{}'", where, text));
    }
  }
  return out;
}

std::vector<std::int64_t> shapeDims(const graph::TensorShape& s) {
  std::vector<std::int64_t> out{s.channels};
  out.insert(out.end(), s.spatial.begin(), s.spatial.end());
  return out;
}

std::vector<std::int64_t> kernelOf(const graph::Dims& kernel, int rank) {
  if (kernel.size() == 1) return std::vector<std::int64_t>(rank, kernel.front());
  return kernel;
}

}  // namespace

std::int64_t ParadlLayer::in() const { return product(x); }
std::int64_t ParadlLayer::weight() const { return product(w); }
std::int64_t ParadlLayer::out() const { return product(y); }

double ParadlLayer::flops() const {
  // Forward, per kind as ParaDL counts it (pools count C x F with F = C, as it does).
  double forward = 0;
  auto window = [&] {
    double f = 1;
    for (std::size_t i = 2; i < w.size() && i - 1 < y.size(); ++i) f *= static_cast<double>(w[i] * y[i - 1]);
    return f;
  };
  if (kind == "CONV") {
    forward = 2.0 * static_cast<double>(w.at(0) * w.at(1)) * window();
  } else if (kind == "MPOOL" || kind == "APOOL") {
    forward = static_cast<double>(x.at(0) * y.at(0)) * window();
  } else if (kind == "RELU" || kind == "ADD") {
    forward = static_cast<double>(out());
  } else if (kind == "FC") {
    forward = static_cast<double>(weight());
  } else if (kind == "BNORM") {
    forward = 4.0 * static_cast<double>(in());
  }
  // Backward twice the forward (input and output gradients), plus the weight gradient.
  return 2 * forward + static_cast<double>(weight());
}

double ParadlNetwork::totalWeight() const {
  double total = 0;
  for (const ParadlLayer& l : layers) total += static_cast<double>(l.weight());
  return total;
}

ParadlNetwork readParadlNetwork(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot open ParaDL network file", path));
  ParadlNetwork net;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string> f = split(line, '|');
    const std::string where = fmt::format("{}:{}", path, number);
    if (f.size() == 2 && f[0] == "Input") {
      net.samples = static_cast<double>(dims(f[1], where).front());
      continue;
    }
    if (f.size() == 2 && (f[0] == "Dataset" || f[0] == "Model")) {
      if (f[0] == "Model") net.name = f[1];
      continue;
    }
    if (f.size() < 4) throw ConfigError(fmt::format("{}: expected name|x|w|y[|comp], found '{}'", where, line));
    ParadlLayer layer{f[0], kindOf(f[0]), dims(f[1], where + " x"), dims(f[2], where + " w"), dims(f[3], where + " y")};
    net.layers.push_back(std::move(layer));
  }
  if (net.layers.empty()) throw ConfigError(fmt::format("{}: no layers", path));
  return net;
}

ParadlNetwork paradlNetworkOf(const graph::Model& model) {
  using graph::LayerKind;
  ParadlNetwork net;
  net.name = model.name();
  for (const graph::Layer& layer : model.layers()) {
    if (layer.inputs.empty()) continue;
    const graph::TensorShape& x = model.layer(layer.inputs.front()).output;
    ParadlLayer row{layer.name, "", shapeDims(x), {}, shapeDims(layer.output)};
    const int rank = x.rank();
    switch (layer.kind) {
      case LayerKind::kConv:
      case LayerKind::kDeconv: {
        row.kind = "CONV";
        row.w = {x.channels, layer.output.channels};
        for (std::int64_t k : kernelOf(layer.as<graph::ConvAttrs>().kernel, rank)) row.w.push_back(k);
        break;
      }
      case LayerKind::kFullyConnected: row.kind = "FC"; row.w = {x.elements(), layer.output.channels, 1, 1}; break;
      case LayerKind::kBatchNorm: row.kind = "BNORM"; row.w = {x.channels, x.channels, 0, 0}; break;
      case LayerKind::kActivation: row.kind = "RELU"; row.w = {x.channels, x.channels, 0, 0}; break;
      case LayerKind::kAdd: row.kind = "ADD"; row.w = {x.channels, x.channels, 0, 0}; break;
      case LayerKind::kMaxPool:
      case LayerKind::kAvgPool: {
        row.kind = layer.kind == LayerKind::kMaxPool ? "MPOOL" : "APOOL";
        row.w = {0, 0};
        for (std::int64_t k : kernelOf(layer.as<graph::PoolAttrs>().kernel, rank)) row.w.push_back(k);
        break;
      }
      case LayerKind::kAdaptiveAvgPool:
      case LayerKind::kGlobalAvgPool: {
        // The window that leads to the output: the input's extent over the output's.
        row.kind = "APOOL";
        row.w = {0, 0};
        for (int d = 0; d < rank; ++d) {
          const std::int64_t o = layer.output.rank() == rank ? layer.output.spatial[d] : 1;
          row.w.push_back(x.spatial[d] / std::max<std::int64_t>(1, o));
        }
        break;
      }
      case LayerKind::kFlatten:
      case LayerKind::kSoftmaxLoss:
      case LayerKind::kMseLoss:
      case LayerKind::kInput: continue;
      default: row.kind = "OTHER"; row.w = {0}; break;
    }
    net.layers.push_back(std::move(row));
  }
  return net;
}

void shareCompute(ParadlNetwork& network, double sampleSeconds) {
  double total = 0;
  for (const ParadlLayer& l : network.layers) total += l.flops();
  if (total <= 0) throw ConfigError(fmt::format("ParaDL network '{}' has no FLOPs to share compute over", network.name));
  for (ParadlLayer& l : network.layers) l.comp = sampleSeconds * l.flops() / total;
}

cost::LinkParams ParadlPlatform::ring(std::int64_t ranks) const {
  for (const Tier& t : tiers) {
    if (ranks <= t.ranks) return {t.alpha, t.beta, 0};
  }
  return {tiers.back().alpha, tiers.back().beta, 0};
}

ParadlPlatform ParadlPlatform::forCluster(const hw::Cluster& c) {
  if (c.name == "abci") {
    // ParaDL's ABCI constants (its analysis code, GPUDirect on): NVLink 50 GB/s with 9 us per
    // hop inside a node; beyond it 12.5 GB/s and a GPU-PLX-switch path of 2 x (15 us + 110 ns)
    // plus the switches crossed: leaf 90 ns (68 GPUs), FBB 90 ns + 2 leaves (a rack, 136
    // GPUs), spine 400 ns + 2 FBB + 2 leaves.
    const double path = 2 * (15e-6 + 110e-9);
    return {{{4, 9e-6, 1 / 50e9},
             {68, path + 90e-9, 1 / 12.5e9},
             {136, path + 90e-9 + 2 * 90e-9, 1 / 12.5e9},
             {std::int64_t{1} << 40, path + 400e-9 + 4 * 90e-9, 1 / 12.5e9}}};
  }
  // Elsewhere: the device start-up (innermost α) plus the outermost level's α and bandwidth.
  ParadlPlatform p;
  for (std::size_t i = 0; i < c.levels.size(); ++i) {
    const double alpha = c.levels[0].alpha + (i > 0 ? c.levels[i].alpha : 0.0);
    p.tiers.push_back({c.levels[i].ranks, alpha, c.levels[i].beta});
  }
  return p;
}

ParadlEpoch paradlEpoch(const ParadlNetwork& net, const ParadlPlatform& platform, const Strategy& s,
                        double samples) {
  const Grid& g = s.grid;
  const auto p = static_cast<std::int64_t>(g.total());
  const double iterations = std::ceil(samples / static_cast<double>(s.globalBatch));
  double sampleSeconds = 0;
  for (const ParadlLayer& l : net.layers) sampleSeconds += l.comp;
  ParadlEpoch e;
  if (g.modelParallel() == 1) {
    // Compute divides the epoch's samples over the devices; the gradient ring runs once per
    // iteration over every device.
    e.compute = samples * sampleSeconds / static_cast<double>(p);
    if (p > 1) {
      const cost::LinkParams link = platform.ring(p);
      e.communication = iterations * 2.0 * static_cast<double>(p - 1) *
                        (link.alpha + net.totalWeight() * kBytesPerItem * link.beta / static_cast<double>(p));
    }
    return e;
  }
  if (g.filter > 1 && g.modelParallel() == g.filter) {
    // Convolutions split their filters over the group (p2); the rest run whole. Per
    // iteration: 3(p2-1)(α count + B|y|δβ/p2) inside the group over the split layers' outputs
    // (the last layer's excepted), then the weights' ring across the p1 groups, whose p2 flows
    // share one node's link.
    const std::int64_t p1 = g.data;
    const std::int64_t p2 = g.filter;
    const double micro = static_cast<double>(s.globalBatch) / static_cast<double>(p1);
    double comp = 0;
    double weights = 0;
    double outputs = 0;
    double count = 0;
    for (const ParadlLayer& l : net.layers) {
      const bool splitLayer = l.kind == "CONV";
      comp += splitLayer ? l.comp / static_cast<double>(p2) : l.comp;
      weights += splitLayer ? static_cast<double>(l.weight()) / static_cast<double>(p2) : static_cast<double>(l.weight());
      if (splitLayer) {
        outputs += static_cast<double>(l.out());
        count += 1;
      }
    }
    if (!net.layers.empty() && net.layers.back().kind == "CONV") {
      outputs -= static_cast<double>(net.layers.back().out());
      count -= 1;
    }
    e.compute = iterations * micro * comp;
    const cost::LinkParams inside = platform.ring(p2);
    const double filter = 3.0 * static_cast<double>(p2 - 1) *
                          (inside.alpha * count + micro * outputs * kBytesPerItem * inside.beta / static_cast<double>(p2));
    double data = 0;
    if (p1 > 1) {
      const cost::LinkParams across = platform.ring(p);
      data = 2.0 * static_cast<double>(p1 - 1) *
             (across.alpha + weights * kBytesPerItem * across.beta * static_cast<double>(p2) / static_cast<double>(p1));
    }
    e.communication = iterations * (filter + data);
    return e;
  }
  throw ConfigError(fmt::format("the paradl variant covers serial, data and data+filter; '{}' is not one of them",
                                s.name));
}

}  // namespace paraxis::plan
