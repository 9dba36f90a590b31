// Allgather, reduce-scatter, broadcast, all-to-all-v, barrier and point-to-point against
// MPI's own collectives.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "comm/collectives.hpp"
#include "comm/posted.hpp"
#include "comm_test_world.hpp"

namespace paraxis::comm {
namespace {

using testing::freshComm;

std::vector<std::size_t> counts(int p) {
  return {0, 1, static_cast<std::size_t>(p - 1), static_cast<std::size_t>(p + 1), 1009, 70000};
}

TEST(Collectives, AllgatherMatchesMpi) {
  const Communicator comm = freshComm();
  for (std::size_t count : counts(comm.size())) {
    std::vector<std::int64_t> mine(count);
    std::iota(mine.begin(), mine.end(), comm.rank() * 1000000);
    std::vector<std::int64_t> ours(count * comm.size(), -1);
    std::vector<std::int64_t> reference(count * comm.size(), -2);
    allgather(comm, mine.data(), ours.data(), count, DataType::kI64);
    allgather(comm, mine.data(), reference.data(), count, DataType::kI64, {.algorithm = GatherAlgorithm::kBuiltin});
    ASSERT_EQ(ours, reference) << "count " << count;
  }
}

TEST(Collectives, ReduceScatterMatchesMpi) {
  const Communicator comm = freshComm();
  for (std::size_t count : counts(comm.size())) {
    std::vector<float> in(count * comm.size());
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i + comm.rank()) % 13);
    const std::vector<float> original = in;
    std::vector<float> ours(count, -1);
    std::vector<float> reference(count, -2);
    reduceScatter(comm, in.data(), ours.data(), count, DataType::kF32);
    reduceScatter(comm, in.data(), reference.data(), count, DataType::kF32, {.algorithm = GatherAlgorithm::kBuiltin});
    ASSERT_EQ(ours, reference) << "count " << count;
    ASSERT_EQ(in, original) << "input modified";
  }
}

// In place, as nccl-tests calls them (bench comm's in-place columns): allgather's input is this
// rank's block of the output, reduce-scatter's output this rank's block of the input. Both
// algorithms give what the out-of-place call gives (MPI's own through MPI_IN_PLACE).
TEST(Collectives, InPlaceAllgatherAndReduceScatterMatchOutOfPlace) {
  const Communicator comm = freshComm();
  const int p = comm.size();
  const auto me = static_cast<std::size_t>(comm.rank());
  for (std::size_t count : counts(p)) {
    for (GatherAlgorithm algorithm : {GatherAlgorithm::kRing, GatherAlgorithm::kBuiltin}) {
      std::vector<float> mine(count);
      for (std::size_t i = 0; i < count; ++i) mine[i] = static_cast<float>((i + me) % 7);
      std::vector<float> gathered(count * p, -1);
      allgather(comm, mine.data(), gathered.data(), count, DataType::kF32, {.algorithm = algorithm});
      std::vector<float> place(count * p, -3);
      std::copy(mine.begin(), mine.end(), place.begin() + static_cast<std::ptrdiff_t>(me * count));
      allgather(comm, place.data() + me * count, place.data(), count, DataType::kF32, {.algorithm = algorithm});
      ASSERT_EQ(place, gathered) << "allgather, count " << count;

      std::vector<float> in(count * p);
      for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i + me) % 13);
      std::vector<float> reduced(count, -1);
      reduceScatter(comm, in.data(), reduced.data(), count, DataType::kF32, {.algorithm = algorithm});
      reduceScatter(comm, in.data(), in.data() + me * count, count, DataType::kF32, {.algorithm = algorithm});
      ASSERT_EQ(std::vector<float>(in.begin() + static_cast<std::ptrdiff_t>(me * count),
                                   in.begin() + static_cast<std::ptrdiff_t>((me + 1) * count)),
                reduced)
          << "reduce-scatter, count " << count;
    }
  }
}

TEST(Collectives, BroadcastFromEveryRoot) {
  const Communicator comm = freshComm();
  for (int root = 0; root < comm.size(); ++root) {
    for (std::size_t count : counts(comm.size())) {
      std::vector<double> data(count, comm.rank() == root ? 3.5 : -1.0);
      std::iota(data.begin(), data.end(), comm.rank() == root ? 10.0 : -100.0);
      std::vector<double> reference = data;
      broadcast(comm, data.data(), count, DataType::kF64, {.root = root});
      broadcast(comm, reference.data(), count, DataType::kF64, {.algorithm = BroadcastAlgorithm::kBuiltin, .root = root});
      ASSERT_EQ(data, reference) << "root " << root << " count " << count;
    }
  }
}

TEST(Collectives, AlltoallvWithUnevenCountsMatchesMpi) {
  const Communicator comm = freshComm();
  const int p = comm.size();
  const int me = comm.rank();
  auto amount = [](int from, int to) { return static_cast<std::size_t>((from * 3 + to * 5) % 7); };
  std::vector<std::size_t> sendCounts(p), sendDispls(p), recvCounts(p), recvDispls(p);
  std::size_t sendTotal = 0;
  std::size_t recvTotal = 0;
  for (int r = 0; r < p; ++r) {
    sendCounts[r] = amount(me, r);
    sendDispls[r] = sendTotal;
    sendTotal += sendCounts[r];
    recvCounts[r] = amount(r, me);
    recvDispls[r] = recvTotal;
    recvTotal += recvCounts[r];
  }
  std::vector<std::int32_t> send(sendTotal);
  for (int r = 0; r < p; ++r) {
    for (std::size_t k = 0; k < sendCounts[r]; ++k) send[sendDispls[r] + k] = me * 1000 + r * 10 + static_cast<int>(k);
  }
  std::vector<std::int32_t> ours(recvTotal, -1);
  std::vector<std::int32_t> reference(recvTotal, -2);
  alltoallv(comm, send.data(), sendCounts, sendDispls, ours.data(), recvCounts, recvDispls, DataType::kI32);
  alltoallv(comm, send.data(), sendCounts, sendDispls, reference.data(), recvCounts, recvDispls, DataType::kI32,
            {.algorithm = AlltoallAlgorithm::kBuiltin});
  EXPECT_EQ(ours, reference);
}

// MPI counts are ints: a message over 2 GiB goes as a derived type (mpi_transport.cpp). Only on
// two ranks, where comm.np2 runs it: 2 GiB a rank, ~10 s of first-touch memory here.
TEST(Collectives, PointToPointOverTwoGiB) {
  const Communicator comm = freshComm();
  if (comm.size() != 2) GTEST_SKIP() << "run by comm.np2 (2 GiB a rank)";
  const std::size_t count = (std::size_t{1} << 28) + 1;  // 2 GiB and 8 bytes: 2 blocks and the rest
  std::vector<std::uint64_t> buffer(count, comm.rank() == 0 ? 0 : ~std::uint64_t{0});
  const std::size_t marks[] = {0, 1, std::size_t{1} << 27, (std::size_t{1} << 28) - 1, std::size_t{1} << 28};
  if (comm.rank() == 0) {
    for (std::size_t i = 0; i < std::size(marks); ++i) buffer[marks[i]] = i + 1;
    send(comm, buffer.data(), count, DataType::kU64, 1, {.tag = 9});
  } else {
    recv(comm, buffer.data(), count, DataType::kU64, 0, {.tag = 9});
    for (std::size_t i = 0; i < std::size(marks); ++i) EXPECT_EQ(buffer[marks[i]], i + 1) << "element " << marks[i];
    EXPECT_EQ(buffer[count / 2 + 3], 0u) << "an unmarked element";
  }
  barrier(comm);
}

TEST(Collectives, PointToPointAroundTheRing) {
  const Communicator comm = freshComm();
  if (comm.size() < 2) GTEST_SKIP() << "needs a peer";
  const int next = (comm.rank() + 1) % comm.size();
  const int prev = (comm.rank() + comm.size() - 1) % comm.size();
  std::vector<std::int64_t> out(1000, comm.rank());
  std::vector<std::int64_t> in(1000, -1);
  if (comm.rank() % 2 == 0) {
    send(comm, out.data(), out.size(), DataType::kI64, next, {.tag = 7});
    recv(comm, in.data(), in.size(), DataType::kI64, prev, {.tag = 7});
  } else {
    recv(comm, in.data(), in.size(), DataType::kI64, prev, {.tag = 7});
    send(comm, out.data(), out.size(), DataType::kI64, next, {.tag = 7});
  }
  EXPECT_EQ(in, std::vector<std::int64_t>(1000, prev));
  barrier(comm);
}

// Posted messages: every send and receive of both directions posted before any wait (large
// enough to need the rendezvous protocol, which blocking calls in this order would deadlock
// on), completed by this thread's waits in another order than posted.
TEST(Posted, BothDirectionsPostedThenWaitedInAnyOrder) {
  const Communicator comm = freshComm();
  if (comm.size() < 2) GTEST_SKIP() << "needs a peer";
  const int next = (comm.rank() + 1) % comm.size();
  const int prev = (comm.rank() + comm.size() - 1) % comm.size();
  constexpr std::size_t kCount = 1 << 18;  // 2 MiB of i64
  std::vector<std::int64_t> toNext(kCount, comm.rank()), toPrev(kCount, 100 + comm.rank());
  std::vector<std::int64_t> fromPrev(kCount, -1), fromNext(kCount, -1);
  Posted sends[2] = {postSend(comm, toNext.data(), kCount, DataType::kI64, next, {.tag = 1}),
                     postSend(comm, toPrev.data(), kCount, DataType::kI64, prev, {.tag = 2})};
  Posted fromNextMsg = postRecv(comm, fromNext.data(), kCount, DataType::kI64, next, {.tag = 2});
  Posted fromPrevMsg = postRecv(comm, fromPrev.data(), kCount, DataType::kI64, prev, {.tag = 1});
  fromPrevMsg.wait();
  fromNextMsg.wait();
  for (Posted& p : sends) p.wait();
  EXPECT_EQ(fromPrev, std::vector<std::int64_t>(kCount, prev));
  EXPECT_EQ(fromNext, std::vector<std::int64_t>(kCount, 100 + next));
  EXPECT_TRUE(fromPrevMsg.test());
  EXPECT_GT(fromPrevMsg.seconds(), 0.0);
  EXPECT_GE(fromPrevMsg.transportSeconds(), 0.0);
  EXPECT_LE(fromPrevMsg.transportSeconds(), fromPrevMsg.seconds() + 1e-3);
  barrier(comm);
}

TEST(Posted, AReceiveNobodySendsEndsAtItsDeadlineNamingThePeer) {
  const Communicator comm = freshComm({.deadlineSeconds = 60});
  if (comm.size() < 2) GTEST_SKIP() << "needs a peer";
  if (comm.rank() == 0) {
    std::int32_t x = 0;
    Posted p = postRecv(comm, &x, 1, DataType::kI32, 1, {.tag = 5, .deadlineSeconds = 0.3});
    EXPECT_FALSE(p.test());
    try {
      p.wait();
      FAIL() << "completed";
    } catch (const TimeoutError& e) {
      EXPECT_NE(std::string(e.what()).find("recv #0 (4 B) from rank 1 (tag 5): no progress within the 300 ms deadline"),
                std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(p.test());  // abandoned: nothing left pending
  }
  barrier(*testing::gWorld);
}

}  // namespace
}  // namespace paraxis::comm
