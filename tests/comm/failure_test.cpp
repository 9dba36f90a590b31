// Mismatched calls and absent ranks fail on every waiting rank, with the call named, instead
// of hanging or corrupting data.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "comm/collectives.hpp"
#include "comm/comm_state.hpp"
#include "comm_test_world.hpp"

namespace paraxis::comm {
namespace {

using testing::freshComm;

std::string messageOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Verification, DifferentCountsRaiseOnEveryRankNamingTheRanks) {
  const Communicator comm = freshComm({.deadlineSeconds = 20, .verify = true});
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  std::vector<float> data(100);
  const std::size_t count = comm.rank() == 1 ? 99 : 100;
  const std::string message = messageOf([&] { allreduce(comm, data.data(), data.data(), count, DataType::kF32); });
  EXPECT_NE(message.find("allreduce #"), std::string::npos) << message;
  EXPECT_NE(message.find("ranks disagree on the collective call"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 1 called allreduce f32 x99"), std::string::npos) << message;
  EXPECT_NE(message.find("x100"), std::string::npos) << message;
  // The communicator is now unusable rather than silently out of step.
  EXPECT_NE(messageOf([&] { barrier(comm); }).find("unusable after an earlier failure"), std::string::npos);
  barrier(*testing::gWorld);
}

TEST(Verification, DifferentTypesAndOperationsAreCaughtToo) {
  const Communicator comm = freshComm({.deadlineSeconds = 20, .verify = true});
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  std::vector<double> data(10);
  const std::string message = messageOf([&] {
    if (comm.rank() == 0) {
      broadcast(comm, data.data(), 10, DataType::kF64);
    } else {
      allreduce(comm, data.data(), data.data(), 20, DataType::kF32);
    }
  });
  EXPECT_NE(message.find("ranks disagree"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 0 called broadcast f64 x10"), std::string::npos) << message;
  barrier(*testing::gWorld);
}

TEST(Verification, DifferentAlgorithmsAreCaught) {
  const Communicator comm = freshComm({.deadlineSeconds = 20, .verify = true});
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  std::vector<float> data(64);
  AllreduceOptions options;
  options.algorithm = comm.rank() == 0 ? AllreduceAlgorithm::kRing : AllreduceAlgorithm::kRecursiveDoubling;
  const std::string message =
      messageOf([&] { allreduce(comm, data.data(), data.data(), data.size(), DataType::kF32, options); });
  EXPECT_NE(message.find("ranks disagree"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 0 called allreduce f32 x64 by ring"), std::string::npos) << message;
  EXPECT_NE(message.find("by recursive_doubling"), std::string::npos) << message;
  barrier(*testing::gWorld);
}

// The last rank never joins; the others give up within twice the deadline and name it.
TEST(Deadline, AnAbsentRankMakesTheOthersFailNamingIt) {
  constexpr double kDeadline = 1.0;
  const Communicator comm = freshComm({.deadlineSeconds = kDeadline, .verify = false});
  if (comm.size() < 2) GTEST_SKIP() << "needs a rank to be absent";
  const int absent = comm.size() - 1;
  if (comm.rank() == absent) {
    std::this_thread::sleep_for(std::chrono::duration<double>(2.5 * kDeadline));
  } else {
    std::vector<float> data(1 << 16, 1.0F);
    const auto start = std::chrono::steady_clock::now();
    std::string message;
    try {
      allreduce(comm, data.data(), data.data(), data.size(), DataType::kF32, {.algorithm = AllreduceAlgorithm::kRing});
    } catch (const TimeoutError& e) {
      message = e.what();
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(elapsed, 2 * kDeadline);
    EXPECT_GE(elapsed, kDeadline * 0.99);
    EXPECT_NE(message.find("allreduce #0 (256 KiB): no progress within the 1 s deadline"), std::string::npos) << message;
    EXPECT_NE(message.find("rank " + std::to_string(absent) + " did not take part"), std::string::npos) << message;
  }
  barrier(*testing::gWorld);
}

TEST(Deadline, PerCallOverrideAppliesToPointToPoint) {
  const Communicator comm = freshComm({.deadlineSeconds = 60});
  if (comm.size() < 2) GTEST_SKIP() << "needs a peer";
  if (comm.rank() == 0) {
    std::int32_t x = 0;
    const auto start = std::chrono::steady_clock::now();
    const std::string message = messageOf([&] { recv(comm, &x, 1, DataType::kI32, 1, {.tag = 3, .deadlineSeconds = 0.3}); });
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.6);
    EXPECT_NE(message.find("recv #0 (4 B) from rank 1 (tag 3): no progress within the 300 ms deadline"), std::string::npos)
        << message;
  }
  barrier(*testing::gWorld);
}

// A queued operation whose closure holds the last handle to its communicator: releasing
// the closure destroys the communicator on its own progress thread. The work must still
// complete, and an operation queued behind it must fail with a line, not hang or crash.
TEST(Lifetime, AClosureHoldingTheLastHandleTearsDownOnItsWorker) {
  for (int round = 0; round < 20; ++round) {
    Work first;
    Work second;
    {
      Communicator comm = freshComm();
      auto& state = comm.state();
      const CallInfo info{.op = Operation::kSend, .root = comm.rank()};
      // An inline transport runs the closure at once: nothing may wait for the release then.
      std::atomic<bool> release{!state.transport().threadSafe()};
      first = state.submit(info, [held = comm, &release](OpContext&) {
        while (!release.load()) std::this_thread::yield();
      });
      second = state.submit(info, [](OpContext&) {});
      release.store(true);
    }  // the last handle is now inside the first closure (or already gone)
    EXPECT_NO_THROW(first.wait());
    const std::string message = messageOf([&] { second.wait(); });
    EXPECT_TRUE(message == "no error" || message.find("never ran") != std::string::npos) << message;
  }
  barrier(*testing::gWorld);
}

}  // namespace
}  // namespace paraxis::comm
