#pragma once
// The peak of the bytes LibTorch's CPU allocator holds for tensors allocated while a tracker
// is active on this thread (and the intra-op threads its operations start): a step's
// activations, gradients and workspaces, measured, not modelled. Torch TUs only.
#include <cstdint>
#include <memory>

namespace paraxis::train {

class AllocationPeak {
 public:
  AllocationPeak();  // starts tracking on this thread
  ~AllocationPeak();
  AllocationPeak(const AllocationPeak&) = delete;
  AllocationPeak& operator=(const AllocationPeak&) = delete;

  std::int64_t peakBytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace paraxis::train
