#include "core/thread_slice.hpp"

#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <cstdio>
#include <thread>

namespace paraxis::core {
namespace {

// Whether this kernel gives a fair thread a slice of its own (Linux 6.12 and later).
bool kernelHasPerTaskSlices() {
  utsname u{};
  int major = 0, minor = 0;
  if (uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 6 || (major == 6 && minor >= 12);
}

// The slice a new thread applies and reads back.
double appliedOnANewThread() {
  double applied = -1;
  std::thread([&] { applied = applyCommThreadSlice(); }).join();
  return applied;
}

class ThreadSlice : public ::testing::Test {
 protected:
  void TearDown() override { setCommThreadSlice(0); }
};

TEST_F(ThreadSlice, ACommunicationThreadRunsWithTheSliceItAskedFor) {
  setCommThreadSlice(300e-6);
  const double applied = appliedOnANewThread();
  if (kernelHasPerTaskSlices()) {
    EXPECT_DOUBLE_EQ(applied, 300e-6);
    EXPECT_DOUBLE_EQ(commThreadSliceInEffect().value_or(-1), 300e-6);
  } else {
    EXPECT_EQ(applied, 0) << "a kernel before 6.12 ignores a fair thread's slice; the read-back must say so";
  }
}

TEST_F(ThreadSlice, TheKernelClampsASliceBelowItsMinimum) {
  if (!kernelHasPerTaskSlices()) GTEST_SKIP() << "this kernel has no per-task slices (Linux 6.12 and later)";
  setCommThreadSlice(10e-6);
  EXPECT_DOUBLE_EQ(appliedOnANewThread(), 100e-6);
}

TEST_F(ThreadSlice, NoSliceAskedLeavesTheKernelsDefault) {
  setCommThreadSlice(0);
  EXPECT_EQ(commThreadSlice(), 0);
  EXPECT_EQ(appliedOnANewThread(), 0);
  EXPECT_EQ(commThreadSliceInEffect().value_or(-1), 0) << "a thread ran with the kernel's own slice";
  setCommThreadSlice(-1);
  EXPECT_EQ(commThreadSlice(), 0);
}

}  // namespace
}  // namespace paraxis::core
