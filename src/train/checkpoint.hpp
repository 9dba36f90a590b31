#pragma once
// Checkpoints: model parameters and buffers, optimizer momentum, the gradient engine's
// residuals, the RNG state and the position in training, one file per rank.
//
// A rank's file DIR/step-<N>/rank-<r>.pt is a header line ("paraxis-checkpoint 1", the sizes
// and a 64-bit checksum), the run's configuration (the "option=value" lines a resume must
// match), then LibTorch's archive. Every file is written whole or not at all (a temporary and
// a rename); after every rank succeeded, rank 0 moves DIR/latest. A rank that cannot write
// makes every rank fail with its one line (OutputError), never a hang.
//
// Resuming starts from `latest` and checks every rank's file (present, whole, checksum); when
// any rank's is bad, every rank falls back to the next older step, and rank 0 says so. A
// checkpoint written with another configuration is refused naming the first option that
// differs. Resuming continues bit-identically.
#include <torch/torch.h>

#include <cstdint>
#include <iosfwd>
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

// `configuration`: "option=value" lines (one per line) that a resume must match.
void saveCheckpoint(const comm::Communicator& comm, const std::string& dir, const TrainingState& state,
                    const std::string& configuration);
// Loads the newest usable step into the tensors of `state` (shapes must match) and returns
// iterationsDone; fallbacks are reported on `progress` by rank 0. ConfigError (on every rank)
// when no step is usable or the configuration differs.
std::int64_t loadCheckpoint(const comm::Communicator& comm, const std::string& dir, TrainingState& state,
                            const std::string& configuration, std::ostream& progress);

}  // namespace paraxis::train
