#include "train/tensor_block_cache.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "train/allocation_peak.hpp"

namespace paraxis::train {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(TensorBlockCache, SizeClassesWasteAtMostAnEighth) {
  EXPECT_EQ(tensorBlockClass(kMiB), kMiB);
  EXPECT_EQ(tensorBlockClass(kMiB + 1), kMiB + kMiB / 8);
  EXPECT_EQ(tensorBlockClass(3 * kMiB), 3 * kMiB);
  for (std::size_t bytes = kMiB; bytes < 512 * kMiB; bytes = bytes * 5 / 3 + 12345) {
    const std::size_t size = tensorBlockClass(bytes);
    EXPECT_GE(size, bytes);
    EXPECT_LE(size, bytes + bytes / 8);
    EXPECT_EQ(tensorBlockClass(size), size) << bytes;
  }
}

TEST(TensorBlockCache, AFreedBlockServesTheNextRequestOfItsClass) {
  installTensorBlockCache(std::size_t{1} << 30);
  torch::Tensor a = torch::ones({1 << 20});  // 4 MiB
  const void* block = a.data_ptr();
  const std::size_t before = tensorBlockCacheHeldBytes();
  a.reset();
  EXPECT_EQ(tensorBlockCacheHeldBytes(), before + 4 * kMiB);
  const torch::Tensor b = torch::zeros({(1 << 20) - 16});  // a little smaller, the same class
  EXPECT_EQ(b.data_ptr(), block);
  EXPECT_EQ(tensorBlockCacheHeldBytes(), before);
  EXPECT_EQ(b.sum().item<float>(), 0.0F);  // a reused block holds what its new tensor wrote
  const torch::Tensor small = torch::ones({1000});
  EXPECT_EQ(small.sum().item<float>(), 1000.0F);
}

TEST(TensorBlockCache, AllocationsStillReachTheMemoryProfiler) {
  installTensorBlockCache(std::size_t{1} << 30);
  const AllocationPeak peak;
  {
    const torch::Tensor a = torch::ones({3 << 20});  // 12 MiB
    const torch::Tensor b = torch::ones({1000});
  }
  EXPECT_GE(peak.peakBytes(), static_cast<std::int64_t>(12 * kMiB + 4000));
  EXPECT_LT(peak.peakBytes(), static_cast<std::int64_t>(13 * kMiB));
}

}  // namespace
}  // namespace paraxis::train
