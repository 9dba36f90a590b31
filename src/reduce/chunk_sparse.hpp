#pragma once
// The chunk-sparse wire format (GradientFlow's coarse-grained sparse communication, with deep
// gradient compression's momentum correction): per group, momentum-corrected accumulation
// into a residual, chunks chosen by their norms summed over ranks (so every rank picks the
// same), a dense allreduce of the chosen chunks; the rest stays in the residual.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"

namespace paraxis::reduce {

class ChunkSparseWire {
 public:
  ChunkSparseWire(double density, std::int64_t chunkElements, double momentum)
      : density_(density), chunk_(chunkElements), momentum_(momentum) {}

  void addGroup(std::int64_t elements);  // in group order
  // Replaces `buffer` (group `group`'s summed local gradient) with the average of the chosen
  // chunks over ranks; blocking, on `comm`. Groups are independent: the engine calls this on
  // its worker thread for one group while backward fills the next.
  void reduce(const comm::Communicator& comm, int group, torch::Tensor& buffer);
  // Velocity and residual per group, for checkpoints.
  std::vector<torch::Tensor> state() const;

 private:
  double density_;
  std::int64_t chunk_;
  double momentum_;
  std::vector<torch::Tensor> velocity_;
  std::vector<torch::Tensor> residual_;
};

}  // namespace paraxis::reduce
