// The thread's CPU clock counts what the thread computes and not what it waits: the compute
// bench prices a layer at its CPU time where ranks time-share the cores.
#include "core/cpu_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace paraxis::core {
namespace {

TEST(CpuClock, CountsComputingAndNotSleeping) {
  const double start = threadCpuSeconds();
  ASSERT_GE(start, 0);
  // Spin until the clock has counted 20 ms (within 10 s of the wall: a loaded machine may
  // give the thread a small share of a core, never none).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  volatile double sink = 0;
  while (threadCpuSeconds() - start < 0.02 && std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 10000; ++i) sink = sink + 1e-9 * i;
  }
  EXPECT_GE(threadCpuSeconds() - start, 0.02);
  const double beforeSleep = threadCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_LT(threadCpuSeconds() - beforeSleep, 0.02);  // 100 ms asleep: the clock barely moves
}

// Another thread's work is not the calling thread's.
TEST(CpuClock, IsTheCallingThreads) {
  const double start = threadCpuSeconds();
  std::thread busy([] {
    const double mine = threadCpuSeconds();
    volatile double sink = 0;
    while (threadCpuSeconds() - mine < 0.05) sink = sink + 1;
  });
  busy.join();
  EXPECT_LT(threadCpuSeconds() - start, 0.02);
}

}  // namespace
}  // namespace paraxis::core
