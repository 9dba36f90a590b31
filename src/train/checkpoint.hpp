#pragma once
// Checkpoints: model parameters and buffers, optimizer momentum, the gradient engine's
// residuals, the RNG state and the position in training, one file per rank.
//
// Written atomically: every rank writes DIR/step-<N>/rank-<r>.pt through a temporary file and
// a rename; after a barrier rank 0 replaces DIR/latest (also by rename). A crash at any point
// leaves `latest` naming a complete checkpoint, and resuming continues bit-identically.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.hpp"

namespace paraxis::train {

struct TrainingState {
  std::vector<torch::Tensor> parameters;
  std::vector<torch::Tensor> buffers;
  std::vector<torch::Tensor> momentum;
  std::vector<torch::Tensor> residuals;
  std::int64_t iterationsDone = 0;
};

void saveCheckpoint(const comm::Communicator& comm, const std::string& dir, const TrainingState& state);
// Loads into the tensors of `state` (shapes must match) and returns iterationsDone; throws
// ConfigError naming the file when it is missing, from another model, or from another rank count.
std::int64_t loadCheckpoint(const comm::Communicator& comm, const std::string& dir, TrainingState& state);

}  // namespace paraxis::train
