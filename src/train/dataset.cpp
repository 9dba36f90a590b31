#include "train/dataset.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>

#include "core/error.hpp"

namespace paraxis::train {
namespace {

std::vector<std::uint8_t> readMaybeGzipped(const std::string& base) {
  std::string path = base + ".gz";
  if (!std::filesystem::exists(path)) path = base;
  gzFile file = gzopen(path.c_str(), "rb");  // reads plain files too
  if (file == nullptr) throw ConfigError(fmt::format("{}(.gz): cannot open the file", base));
  std::vector<std::uint8_t> data;
  std::uint8_t chunk[1 << 16];
  int n = 0;
  while ((n = gzread(file, chunk, sizeof(chunk))) > 0) data.insert(data.end(), chunk, chunk + n);
  gzclose(file);
  if (n < 0) throw ConfigError(fmt::format("{}: not a readable gzip or IDX file", path));
  return data;
}

std::uint32_t bigEndian(const std::vector<std::uint8_t>& d, std::size_t at) {
  return (std::uint32_t{d[at]} << 24) | (std::uint32_t{d[at + 1]} << 16) | (std::uint32_t{d[at + 2]} << 8) | d[at + 3];
}

}  // namespace

Dataset loadFashionMnist(const std::string& dir, bool trainSplit) {
  const std::string prefix = dir + "/" + (trainSplit ? "train" : "t10k");
  const auto images = readMaybeGzipped(prefix + "-images-idx3-ubyte");
  const auto labels = readMaybeGzipped(prefix + "-labels-idx1-ubyte");
  if (images.size() < 16 || bigEndian(images, 0) != 0x803) {
    throw ConfigError(fmt::format("{}-images-idx3-ubyte: expected an IDX image file (magic 0x803)", prefix));
  }
  if (labels.size() < 8 || bigEndian(labels, 0) != 0x801) {
    throw ConfigError(fmt::format("{}-labels-idx1-ubyte: expected an IDX label file (magic 0x801)", prefix));
  }
  const std::int64_t n = bigEndian(images, 4);
  const std::int64_t rows = bigEndian(images, 8);
  const std::int64_t cols = bigEndian(images, 12);
  if (static_cast<std::int64_t>(bigEndian(labels, 4)) != n || static_cast<std::int64_t>(images.size()) != 16 + n * rows * cols ||
      static_cast<std::int64_t>(labels.size()) != 8 + n) {
    throw ConfigError(fmt::format("{}: image and label files disagree in size", prefix));
  }
  Dataset d;
  d.images = torch::from_blob(const_cast<std::uint8_t*>(images.data() + 16), {n, 1, rows, cols}, torch::kUInt8)
                 .to(torch::kFloat32)
                 .div_(255.0)
                 .sub_(0.2860)
                 .div_(0.3530);
  d.labels = torch::from_blob(const_cast<std::uint8_t*>(labels.data() + 8), {n}, torch::kUInt8).to(torch::kInt64);
  return d;
}

TargetShape targetOf(const graph::Model& model) {
  for (int i = model.size() - 1; i >= 0; --i) {
    const graph::Layer& loss = model.layer(i);
    if (loss.kind != graph::LayerKind::kSoftmaxLoss && loss.kind != graph::LayerKind::kMseLoss) continue;
    const graph::TensorShape& x = model.layer(loss.inputs.front()).output;
    TargetShape t;
    t.classes = x.channels;
    if (loss.kind == graph::LayerKind::kMseLoss) {
      t.kind = TargetShape::Kind::kRegression;
      t.classes = x.elements();
    } else if (!x.spatial.empty()) {
      t.kind = TargetShape::Kind::kPerPosition;
      t.spatial = x.spatial;
    }
    return t;
  }
  throw ConfigError(fmt::format("model '{}' has no loss layer to train against", model.name()));
}

std::int64_t defaultSyntheticSamples(const graph::TensorShape& input) {
  const double bytes = static_cast<double>(input.elements()) * 4;
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(256.0 * (1 << 20) / bytes), 8, 4096);
}

namespace {

// Each class brightens its own band of the first spatial axis.
void classBands(Dataset& d, const graph::TensorShape& input, std::int64_t classes, torch::Generator& gen) {
  const std::int64_t samples = d.size();
  d.labels = torch::randint(classes, {samples}, gen, torch::kInt64);
  if (input.spatial.empty()) return;
  const std::int64_t bands = std::max<std::int64_t>(1, input.spatial.front());
  for (std::int64_t i = 0; i < samples; ++i) {
    const std::int64_t c = d.labels[i].item<std::int64_t>();
    d.images[i].narrow(1, c * bands / classes, std::max<std::int64_t>(1, bands / classes)).add_(1.5);
  }
}

// A class per output position (constant over blocks); the input at that position (upsampled to
// the input's extents) is brighter the higher the class.
void positionClasses(Dataset& d, const graph::TensorShape& input, const TargetShape& t, torch::Generator& gen) {
  // Classes in blocks of a 4-per-axis grid, so a network that downsamples can still resolve them.
  std::vector<std::int64_t> coarse{d.size(), 1};
  for (std::int64_t e : t.spatial) coarse.push_back(std::min<std::int64_t>(4, e));
  const torch::Tensor blocks = torch::randint(t.classes, coarse, gen, torch::kInt64).to(torch::kFloat);
  const std::vector<std::int64_t> out(t.spatial.begin(), t.spatial.end());
  d.labels = torch::nn::functional::interpolate(
                 blocks, torch::nn::functional::InterpolateFuncOptions().size(out).mode(torch::kNearest))
                 .squeeze(1)
                 .to(torch::kInt64);
  std::vector<std::int64_t> size(input.spatial.begin(), input.spatial.end());
  const torch::Tensor level = d.labels.unsqueeze(1).to(torch::kFloat) * (3.0 / std::max<std::int64_t>(1, t.classes - 1));
  const torch::Tensor up = torch::nn::functional::interpolate(
      level, torch::nn::functional::InterpolateFuncOptions().size(size).mode(torch::kNearest));
  d.images.add_(up);  // every input channel carries it
}

// K values per sample, each scaling its own band of the first spatial axis.
void regressionBands(Dataset& d, const graph::TensorShape& input, std::int64_t targets, torch::Generator& gen) {
  const std::int64_t samples = d.size();
  d.labels = torch::rand({samples, targets}, gen) * 2 - 1;
  const std::int64_t bands = input.spatial.empty() ? 1 : std::max<std::int64_t>(1, input.spatial.front());
  for (std::int64_t k = 0; k < targets; ++k) {
    const std::int64_t width = std::max<std::int64_t>(1, bands / targets);
    const std::int64_t begin = std::min(bands - width, k * bands / targets);
    std::vector<std::int64_t> view(input.spatial.size() + 1, 1);
    view.front() = samples;
    torch::Tensor amplitude = d.labels.select(1, k).view(view);  // [N, 1, ...]
    if (input.spatial.empty()) continue;
    d.images.narrow(2, begin, width).add_(amplitude.unsqueeze(1) * 2);
  }
}

}  // namespace

Dataset syntheticDataset(const graph::TensorShape& input, const TargetShape& target, std::int64_t samples,
                         std::uint64_t seed) {
  torch::Generator gen = torch::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<std::int64_t> shape{samples, input.channels};
  for (auto e : input.spatial) shape.push_back(e);
  Dataset d;
  d.images = torch::randn(shape, gen);
  switch (target.kind) {
    case TargetShape::Kind::kClass: classBands(d, input, target.classes, gen); break;
    case TargetShape::Kind::kPerPosition: positionClasses(d, input, target, gen); break;
    case TargetShape::Kind::kRegression: regressionBands(d, input, target.classes, gen); break;
  }
  return d;
}

std::vector<std::int64_t> shardIndices(std::int64_t samples, int rank, int ranks, std::int64_t batch,
                                       std::uint64_t seed, int epoch) {
  std::vector<std::int64_t> order(samples);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed * 1000003ULL + static_cast<std::uint64_t>(epoch));
  std::shuffle(order.begin(), order.end(), rng);
  const std::int64_t perRank = samples / ranks / batch * batch;
  std::vector<std::int64_t> mine;
  mine.reserve(perRank);
  for (std::int64_t k = 0; k < perRank; ++k) mine.push_back(order[k * ranks + rank]);
  return mine;
}

}  // namespace paraxis::train
