#include "train/tensor_block_cache.hpp"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <bit>
#include <cstring>
#include <utility>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace paraxis::train {
namespace {

class TensorBlockCache final : public c10::Allocator {
 public:
  explicit TensorBlockCache(std::size_t cacheBytes) : limit_(cacheBytes) {}

  // c10's interface changed in PyTorch 2.3: allocate() lost its const and copy_data() came in.
  // Both forms, without `override`, build against either (Debian's 1.13, a CUDA PyTorch 2).
  c10::DataPtr allocate(std::size_t bytes) const {  // NOLINT(modernize-use-override)
    void* block = bytes < kCachedBlockBytes ? c10::alloc_cpu(bytes) : take(bytes);
    if (block != nullptr) c10::profiledCPUMemoryReporter().New(block, bytes);
    return {block, block, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DataPtr allocate(std::size_t bytes) { return std::as_const(*this).allocate(bytes); }  // NOLINT
  void copy_data(void* dest, const void* src, std::size_t count) const {  // NOLINT
    if (count > 0) std::memcpy(dest, src, count);
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  std::size_t held() {
    const std::lock_guard lock(mutex_);
    return held_;
  }

  static TensorBlockCache* instance;

 private:
  void* take(std::size_t bytes) const {
    const std::size_t size = tensorBlockClass(bytes);
    {
      const std::lock_guard lock(mutex_);
      if (auto it = free_.find(size); it != free_.end() && !it->second.empty()) {
        void* block = it->second.back();
        it->second.pop_back();
        held_ -= size;
        return block;
      }
    }
    void* block = c10::alloc_cpu(size);  // throws on failure, as LibTorch's own allocator does
    const std::lock_guard lock(mutex_);
    sizes_[block] = size;
    return block;
  }

  static void release(void* block) {
    if (block == nullptr) return;
    c10::profiledCPUMemoryReporter().Delete(block);
    if (!instance->keep(block)) c10::free_cpu(block);
  }

  // Whether `block` is now held for reuse (false: a small block, or the cache is full).
  bool keep(void* block) {
    const std::lock_guard lock(mutex_);
    const auto it = sizes_.find(block);
    if (it == sizes_.end()) return false;
    if (held_ + it->second > limit_) {
      sizes_.erase(it);
      return false;
    }
    free_[it->second].push_back(block);
    held_ += it->second;
    return true;
  }

  // allocate() is const in c10's interface; the cache is the allocator's own state.
  const std::size_t limit_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<void*, std::size_t> sizes_;              // every cached-class block, by address
  mutable std::unordered_map<std::size_t, std::vector<void*>> free_;  // held blocks by size class
  mutable std::size_t held_ = 0;
};

TensorBlockCache* TensorBlockCache::instance = nullptr;

}  // namespace

std::size_t tensorBlockClass(std::size_t bytes) {
  const std::size_t step = std::bit_floor(bytes) / 8;
  return (bytes + step - 1) / step * step;
}

std::size_t tensorBlockCacheHeldBytes() {
  return TensorBlockCache::instance == nullptr ? 0 : TensorBlockCache::instance->held();
}

void installTensorBlockCache(std::size_t cacheBytes) {
  static std::once_flag once;
  std::call_once(once, [cacheBytes] {
    // Never destroyed: tensors may outlive main's locals and still free into it at exit.
    TensorBlockCache::instance = new TensorBlockCache(cacheBytes);
    c10::SetCPUAllocator(TensorBlockCache::instance, /*priority=*/1);
  });
}

}  // namespace paraxis::train
