#include "reduce/chunk_sparse.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "comm/allreduce.hpp"

namespace paraxis::reduce {
namespace {

// The `keep` chunks of largest norm, ascending; stable by norm, ties to the lower index, so
// identical on every rank.
std::vector<std::int64_t> chooseChunks(const float* norm, std::int64_t chunks, std::int64_t keep) {
  std::vector<std::int64_t> order(chunks);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return norm[a] > norm[b]; });
  order.resize(keep);
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace

void ChunkSparseWire::addGroup(std::int64_t elements) {
  velocity_.push_back(torch::zeros({elements}));
  residual_.push_back(torch::zeros({elements}));
}

void ChunkSparseWire::reduce(const comm::Communicator& comm, int group, torch::Tensor& buffer) {
  torch::Tensor& velocity = velocity_.at(group);
  torch::Tensor& residual = residual_.at(group);
  const std::int64_t n = buffer.numel();
  const std::int64_t chunks = (n + chunk_ - 1) / chunk_;
  velocity.mul_(momentum_).add_(buffer);
  residual.add_(velocity);
  const torch::Tensor padded = torch::constant_pad_nd(residual, {0, chunks * chunk_ - n});
  torch::Tensor norms = padded.view({chunks, chunk_}).pow(2).sum(1).contiguous();
  // Through the progress thread (i-calls), whose polling yields to the backward pass that this
  // group's reduction overlaps.
  comm::iallreduce(comm, norms.data_ptr<float>(), norms.data_ptr<float>(), static_cast<std::size_t>(chunks),
                   comm::DataType::kF32)
      .wait();
  const std::int64_t keep = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(density_ * chunks)));
  const std::vector<std::int64_t> order = chooseChunks(norms.data_ptr<float>(), chunks, keep);
  std::vector<float> send;
  send.reserve(keep * chunk_);
  const float* res = residual.data_ptr<float>();
  for (std::int64_t c : order) send.insert(send.end(), res + c * chunk_, res + std::min(n, (c + 1) * chunk_));
  comm::iallreduce(comm, send.data(), send.data(), send.size(), comm::DataType::kF32,
                   {.prescale = 1.0F / static_cast<float>(comm.size())})
      .wait();
  buffer.zero_();
  float* out = buffer.data_ptr<float>();
  float* vel = velocity.data_ptr<float>();
  float* resid = residual.data_ptr<float>();
  std::size_t cursor = 0;
  for (std::int64_t c : order) {
    for (std::int64_t i = c * chunk_; i < std::min(n, (c + 1) * chunk_); ++i) {
      out[i] = send[cursor++];
      resid[i] = 0;
      vel[i] = 0;  // momentum factor masking
    }
  }
}

std::vector<torch::Tensor> ChunkSparseWire::state() const {
  std::vector<torch::Tensor> out;
  for (std::size_t g = 0; g < velocity_.size(); ++g) {
    out.push_back(velocity_[g]);
    out.push_back(residual_[g]);
  }
  return out;
}

}  // namespace paraxis::reduce
