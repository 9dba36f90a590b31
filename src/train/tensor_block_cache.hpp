#pragma once
// Large CPU tensor blocks kept for reuse. LibTorch's CPU allocator hands every tensor to
// posix_memalign and back to free; on glibc a freed block of exactly the size the next
// 64-byte-aligned request needs does not satisfy it (the aligned request asks for more), so
// the heap grows by a fresh block each pass and every page of it faults in again. First-touch
// memory is ~100x slower than warm memory on the project's VMs (ENVIRONMENT.md, trap 1): a
// 128 MiB leaky-ReLU backward took 350 ms against 10 ms warm, which made layer timings of big
// tensors (calibrate --quick, bench compute) measure page faults, not compute.
#include <cstddef>

namespace paraxis::train {

// Installs the cache as LibTorch's CPU allocator (once; later calls do nothing). Blocks of at
// least kCachedBlockBytes are rounded up to a size class (at most 1/8 more) and, when freed,
// kept for the next request of that class, up to `cacheBytes` held free at once; smaller ones
// go straight to LibTorch's own routines. Allocations are still reported to LibTorch's memory
// profiler (train's peak step bytes read it).
void installTensorBlockCache(std::size_t cacheBytes);

// glibc's default mmap threshold: blocks from it up re-fault when freed and asked for again.
// With 1 MiB here, lenet at batch 16 (bench compute, 2 ranks) read relu2's backward, an 800 KB
// gradient, at 2.4 ms a pass (32 us from the cache; training's 79 us) and the model's backward
// at 7.4 ms (4.35 ms from the cache).
inline constexpr std::size_t kCachedBlockBytes = std::size_t{1} << 17;

// Bytes the cache holds free now (0 before it is installed).
std::size_t tensorBlockCacheHeldBytes();

// The size class a request of `bytes` (>= kCachedBlockBytes) is served from.
std::size_t tensorBlockClass(std::size_t bytes);

}  // namespace paraxis::train
