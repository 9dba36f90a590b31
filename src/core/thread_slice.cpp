#include "core/thread_slice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "core/units.hpp"

#if defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace paraxis::core {
namespace {

std::atomic<double> gAsked{0};
std::atomic<double> gInEffect{-1};  // -1: no communication thread asked yet

#if defined(__linux__)
// The kernel's struct sched_attr as its first version laid it out (SCHED_ATTR_SIZE_VER0, 48
// bytes), under a name of its own: newer C libraries declare the struct in <sched.h>, older
// ones only the kernel's header, and the two do not mix.
struct SchedAttributes {
  std::uint32_t size;
  std::uint32_t sched_policy;
  std::uint64_t sched_flags;
  std::int32_t sched_nice;
  std::uint32_t sched_priority;
  std::uint64_t sched_runtime;  // a fair thread's own slice, nanoseconds (Linux 6.12 and later)
  std::uint64_t sched_deadline;
  std::uint64_t sched_period;
};
static_assert(sizeof(SchedAttributes) == 48);

// The calling thread's scheduling attributes, or nothing readable (size 0).
SchedAttributes currentAttributes() {
  SchedAttributes a{};
  if (syscall(SYS_sched_getattr, 0, &a, sizeof a, 0) != 0) a.size = 0;
  return a;
}
#endif

// The slice a thread asking for `asked` seconds runs with: the kernel's read-back, or 0.
double sliceFor(double asked) {
  if (asked <= 0) return 0;
#if defined(__linux__)
  SchedAttributes a = currentAttributes();
  if (a.size == 0 || a.sched_policy != SCHED_OTHER) return 0;  // a real-time thread keeps its policy
  const auto nanoseconds = static_cast<std::uint64_t>(asked * 1e9);
  a.size = sizeof a;
  a.sched_flags = 0;
  a.sched_runtime = nanoseconds;
  if (syscall(SYS_sched_setattr, 0, &a, 0) != 0) return 0;
  // A kernel without per-task slices takes the call and reports no runtime, or its own default.
  const SchedAttributes now = currentAttributes();
  const auto expected = static_cast<std::uint64_t>(std::clamp(asked, kShortestThreadSlice, kLongestThreadSlice) * 1e9);
  if (now.size == 0 || now.sched_runtime != expected) return 0;
  return static_cast<double>(now.sched_runtime) * 1e-9;
#else
  return 0;
#endif
}

}  // namespace

std::string threadSliceText(double seconds) {
  return seconds > 0 ? fmt::format("a {} time slice", units::formatSeconds(seconds)) : "the kernel's own time slice";
}

void setCommThreadSlice(double seconds) { gAsked.store(seconds > 0 ? seconds : 0); }

double commThreadSlice() { return gAsked.load(); }

double applyCommThreadSlice() {
  const double inEffect = sliceFor(gAsked.load());
  gInEffect.store(inEffect);
  return inEffect;
}

std::optional<double> commThreadSliceInEffect() {
  const double inEffect = gInEffect.load();
  return inEffect >= 0 ? std::optional<double>(inEffect) : std::nullopt;
}

}  // namespace paraxis::core
