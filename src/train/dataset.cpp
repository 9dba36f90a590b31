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

Dataset syntheticDataset(const graph::TensorShape& input, std::int64_t classes, std::int64_t samples,
                         std::uint64_t seed) {
  torch::Generator gen = torch::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<std::int64_t> shape{samples, input.channels};
  for (auto e : input.spatial) shape.push_back(e);
  Dataset d;
  d.labels = torch::randint(classes, {samples}, gen, torch::kInt64);
  // Each class brightens its own band of the image, plus noise.
  d.images = torch::randn(shape, gen);
  const std::int64_t bands = std::max<std::int64_t>(1, input.spatial.empty() ? 1 : input.spatial.front());
  for (std::int64_t i = 0; i < samples; ++i) {
    const std::int64_t c = d.labels[i].item<std::int64_t>();
    if (input.spatial.empty()) continue;
    const std::int64_t band = c * bands / classes;
    d.images[i].narrow(1, band, std::max<std::int64_t>(1, bands / classes)).add_(1.5);
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
