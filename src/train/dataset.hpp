#pragma once
// Training data: Fashion-MNIST from Debian's dataset-fashion-mnist (gzipped IDX files) or a
// directory in the same format, and synthetic data of any input shape. Sharding gives each
// rank a disjoint slice of a per-epoch permutation that every rank derives from the seed.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph/model.hpp"
#include "graph/tensor_shape.hpp"

namespace paraxis::train {

struct Dataset {
  torch::Tensor images;  // float [N, C, spatial...]
  torch::Tensor labels;  // the targets: int64 [N] (classes), int64 [N, spatial...] (per position), float [N, K]
  std::int64_t size() const { return images.size(0); }
};

// What a model's main (last) loss compares its prediction with: a class per sample, a class per
// output position (a fully convolutional softmax loss), or K values (an MSE regression head).
struct TargetShape {
  enum class Kind { kClass, kPerPosition, kRegression };
  Kind kind = Kind::kClass;
  std::int64_t classes = 10;           // prediction channels: classes, or regression targets
  std::vector<std::int64_t> spatial;   // kPerPosition: the prediction's spatial extents
};
// Throws ConfigError when the model has no loss layer.
TargetShape targetOf(const graph::Model& model);

inline const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Reads <dir>/{train,t10k}-{images-idx3,labels-idx1}-ubyte(.gz), normalised to zero mean and
// unit variance. Throws ConfigError naming the file when it is missing or malformed.
Dataset loadFashionMnist(const std::string& dir, bool trainSplit);

// Random inputs whose target is a fixed function of the input, so a model can learn it: each
// class brightens its own band; each position's class sets its brightness; each regression
// target scales its own band.
Dataset syntheticDataset(const graph::TensorShape& input, const TargetShape& target, std::int64_t samples,
                         std::uint64_t seed);
// Samples of synthetic data when the user names none: 4096, fewer for large samples so that the
// set stays near 256 MiB (at least 8).
std::int64_t defaultSyntheticSamples(const graph::TensorShape& input);

// This rank's sample indices for `epoch`: a permutation seeded by (seed, epoch), rank r taking
// every P-th entry, truncated to whole batches so every rank runs the same iterations.
std::vector<std::int64_t> shardIndices(std::int64_t samples, int rank, int ranks, std::int64_t batch,
                                       std::uint64_t seed, int epoch);

}  // namespace paraxis::train
