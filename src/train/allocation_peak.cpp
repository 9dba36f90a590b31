#include "train/allocation_peak.hpp"

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#if __has_include(<glog/logging.h>)  // Debian's LibTorch logs through glog; PyTorch 2's wheels do not
#include <glog/logging.h>
#define PARAXIS_TORCH_GLOG 1
#endif

#include <algorithm>
#include <atomic>

namespace paraxis::train {
namespace {

// The allocator reports each allocation (+bytes) and each free of a tracked one (-bytes) to
// the profiler-state debug info of the allocating thread, when that info asks for it.
class Tracker final : public c10::MemoryReportingInfoBase {
 public:
  // The totals are int64_t in LibTorch 1.13 and size_t in PyTorch 2: both forms, without
  // `override`, so that either LibTorch finds its own.
  void reportMemoryUsage(void* /*ptr*/, std::int64_t bytes, std::int64_t /*total*/, std::int64_t /*reserved*/,
                         c10::Device /*device*/) {  // NOLINT(modernize-use-override)
    add(bytes);
  }
  void reportMemoryUsage(void* /*ptr*/, std::int64_t bytes, std::size_t /*total*/, std::size_t /*reserved*/,
                         c10::Device /*device*/) {  // NOLINT(modernize-use-override)
    add(bytes);
  }
  bool memoryProfilingEnabled() const override { return true; }
  std::int64_t peak() const { return peak_.load(); }

 private:
  void add(std::int64_t bytes) {
    const std::int64_t now = current_.fetch_add(bytes) + bytes;
    std::int64_t seen = peak_.load();
    while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
    }
  }
  std::atomic<std::int64_t> current_{0};
  std::atomic<std::int64_t> peak_{0};
};

}  // namespace

// While tracking, the allocator warns (through glog, every 1000th time) about each free of a
// tensor allocated before: expected here, so warnings are held back until tracking ends.
#ifdef PARAXIS_TORCH_GLOG
struct QuietAllocatorWarnings {
  int saved = FLAGS_minloglevel;
  QuietAllocatorWarnings() { FLAGS_minloglevel = std::max(saved, google::GLOG_ERROR); }
  ~QuietAllocatorWarnings() { FLAGS_minloglevel = saved; }
};
#else
struct QuietAllocatorWarnings {};
#endif

struct AllocationPeak::State {
  QuietAllocatorWarnings quiet;
  std::shared_ptr<Tracker> tracker = std::make_shared<Tracker>();
  c10::DebugInfoGuard guard{c10::DebugInfoKind::PROFILER_STATE, tracker};
};

AllocationPeak::AllocationPeak() : state_(std::make_unique<State>()) {}
AllocationPeak::~AllocationPeak() = default;

std::int64_t AllocationPeak::peakBytes() const { return state_->tracker->peak(); }

}  // namespace paraxis::train
