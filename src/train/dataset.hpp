#pragma once
// Training data: Fashion-MNIST from Debian's dataset-fashion-mnist (gzipped IDX files) or a
// directory in the same format, and synthetic data of any input shape. Sharding gives each
// rank a disjoint slice of a per-epoch permutation that every rank derives from the seed.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph/tensor_shape.hpp"

namespace paraxis::train {

struct Dataset {
  torch::Tensor images;  // float [N, C, spatial...]
  torch::Tensor labels;  // int64 [N]
  std::int64_t size() const { return images.size(0); }
};

inline const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Reads <dir>/{train,t10k}-{images-idx3,labels-idx1}-ubyte(.gz), normalised to zero mean and
// unit variance. Throws ConfigError naming the file when it is missing or malformed.
Dataset loadFashionMnist(const std::string& dir, bool trainSplit);

// Random inputs whose class is a fixed function of the input (so a model can learn it).
Dataset syntheticDataset(const graph::TensorShape& input, std::int64_t classes, std::int64_t samples,
                         std::uint64_t seed);

// This rank's sample indices for `epoch`: a permutation seeded by (seed, epoch), rank r taking
// every P-th entry, truncated to whole batches so every rank runs the same iterations.
std::vector<std::int64_t> shardIndices(std::int64_t samples, int rank, int ranks, std::int64_t batch,
                                       std::uint64_t seed, int epoch);

}  // namespace paraxis::train
