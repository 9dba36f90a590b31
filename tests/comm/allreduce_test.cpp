// Every allreduce algorithm against MPI's own MPI_Allreduce, element for element. Inputs are
// small integers (also in floating types) so that every summation order gives the exact
// same result, and "equal" can mean bit-equal.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "comm/convert.hpp"
#include "comm/half.hpp"
#include "comm/hierarchy.hpp"
#include "comm_test_world.hpp"

namespace paraxis::comm {
namespace {

using testing::freshComm;

template <typename T>
std::vector<T> input(std::size_t count, int rank) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<T>((i * 7 + rank * 3) % 11) - static_cast<T>(i % 2);
  return v;
}

std::vector<std::size_t> counts(int p) {
  // 0, 1, p-1, p, p+1, a prime, and several 256 KiB segments' worth of f64 plus a remainder.
  return {0, 1, static_cast<std::size_t>(p - 1), static_cast<std::size_t>(p), static_cast<std::size_t>(p + 1),
          1009, 3 * 32768 + 7};
}

template <typename T>
void checkAgainstMpi(const Communicator& comm, DataType type, ReduceOp op, AllreduceAlgorithm algorithm,
                     const Hierarchy* hierarchy = nullptr) {
  for (std::size_t count : counts(comm.size())) {
    for (bool inPlace : {false, true}) {
      const std::vector<T> in = input<T>(count, comm.rank());
      std::vector<T> expected(count);
      allreduce(comm, in.data(), expected.data(), count, type,
                {.algorithm = AllreduceAlgorithm::kBuiltin, .op = op});
      std::vector<T> out(count, T{});
      if (inPlace) out = in;
      allreduce(comm, inPlace ? out.data() : in.data(), out.data(), count, type,
                {.algorithm = algorithm, .op = op, .segmentBytes = 64 * 1024, .hierarchy = hierarchy});
      ASSERT_EQ(std::memcmp(out.data(), expected.data(), count * sizeof(T)), 0)
          << algorithmName(algorithm) << " " << typeName(type) << " " << opName(op) << " count " << count
          << (inPlace ? " in place" : " out of place") << " on rank " << comm.rank();
      if (!inPlace) ASSERT_EQ(in, input<T>(count, comm.rank())) << "input modified";
    }
  }
}

class AllreduceAlgorithms : public ::testing::TestWithParam<AllreduceAlgorithm> {};

TEST_P(AllreduceAlgorithms, MatchMpiForEveryTypeOpAndCount) {
  const Communicator comm = freshComm();
  const AllreduceAlgorithm a = GetParam();
  checkAgainstMpi<float>(comm, DataType::kF32, ReduceOp::kSum, a);
  checkAgainstMpi<double>(comm, DataType::kF64, ReduceOp::kSum, a);
  checkAgainstMpi<std::int32_t>(comm, DataType::kI32, ReduceOp::kSum, a);
  checkAgainstMpi<std::int64_t>(comm, DataType::kI64, ReduceOp::kMax, a);
  checkAgainstMpi<std::uint64_t>(comm, DataType::kU64, ReduceOp::kMin, a);
  checkAgainstMpi<std::int32_t>(comm, DataType::kI32, ReduceOp::kBitAnd, a);
  checkAgainstMpi<std::uint64_t>(comm, DataType::kU64, ReduceOp::kBitOr, a);
  checkAgainstMpi<float>(comm, DataType::kF32, ReduceOp::kMax, a);
}

INSTANTIATE_TEST_SUITE_P(Flat, AllreduceAlgorithms,
                         ::testing::Values(AllreduceAlgorithm::kRing, AllreduceAlgorithm::kRecursiveDoubling,
                                           AllreduceAlgorithm::kRabenseifner, AllreduceAlgorithm::kAuto),
                         [](const auto& info) { return std::string(algorithmName(info.param)); });

TEST(Allreduce, HierarchicalWithExplicitGroupsAndHosts) {
  const Communicator comm = freshComm();
  for (int perGroup : {1, 2}) {
    if (comm.size() % perGroup != 0) continue;
    const Hierarchy h = Hierarchy::fromGroups(comm, perGroup);
    EXPECT_EQ(h.localSize(), perGroup);
    EXPECT_EQ(h.groups(), comm.size() / perGroup);
    checkAgainstMpi<float>(comm, DataType::kF32, ReduceOp::kSum, AllreduceAlgorithm::kHierarchical, &h);
    checkAgainstMpi<std::int64_t>(comm, DataType::kI64, ReduceOp::kMax, AllreduceAlgorithm::kHierarchical, &h);
  }
  const Hierarchy hosts = Hierarchy::fromHosts(comm);
  EXPECT_EQ(hosts.localSize() * hosts.groups(), comm.size());
  checkAgainstMpi<double>(comm, DataType::kF64, ReduceOp::kSum, AllreduceAlgorithm::kHierarchical, &hosts);
}

TEST(Hierarchy, FindsTheHostsTheRanksRunOn) {
  const Communicator comm = freshComm();
  const Hierarchy hosts = Hierarchy::fromHosts(comm);
  const int expected = testing::gExpectedHosts > 0 ? testing::gExpectedHosts : 1;
  EXPECT_EQ(hosts.groups(), expected);
  EXPECT_EQ(hosts.localSize(), comm.size() / expected);
  EXPECT_TRUE(hosts.uniform());
}

// Every test job runs on this one machine, the netns hosts' too (two host names, one kernel).
TEST(Hierarchy, FindsOneMachineUnderEveryHost) {
  const Communicator comm = freshComm();
  const Hierarchy machines = Hierarchy::fromMachines(comm);
  EXPECT_EQ(machines.groups(), 1);
  EXPECT_EQ(machines.localSize(), comm.size());
}

TEST(Allreduce, HierarchicalRejectsUnevenHosts) {
  const Communicator comm = freshComm();
  if (comm.size() != 3) GTEST_SKIP() << "needs 3 ranks to group unevenly";
  const Hierarchy h = Hierarchy::fromGroups(comm, 2);  // groups of 2 and 1
  EXPECT_FALSE(h.uniform());
  float x = 1;
  EXPECT_THROW(allreduce(comm, &x, &x, 1, DataType::kF32, {.algorithm = AllreduceAlgorithm::kHierarchical, .hierarchy = &h}),
               ConfigError);
}

// fp16 / bf16 on the wire: within the format's rounding of the exact sum, prescale applied,
// and bit-identical on every rank.
TEST(Allreduce, CompressedWireAccumulatesInF32AndAgreesAcrossRanks) {
  const Communicator comm = freshComm();
  const std::size_t count = 50000;
  for (DataType wire : {DataType::kF16, DataType::kBF16}) {
    for (AllreduceAlgorithm a : {AllreduceAlgorithm::kRing, AllreduceAlgorithm::kRecursiveDoubling,
                                 AllreduceAlgorithm::kRabenseifner}) {
      std::vector<float> data(count);
      for (std::size_t i = 0; i < count; ++i) data[i] = 0.001F * static_cast<float>((i % 1000) + comm.rank());
      const float prescale = 0.5F;
      allreduce(comm, data.data(), data.data(), count, DataType::kF32,
                {.algorithm = a, .wire = wire, .prescale = prescale, .segmentBytes = 16 * 1024});
      const double tolerance = wire == DataType::kF16 ? 2e-3 : 1.6e-2;  // relative, a few roundings
      for (std::size_t i = 0; i < count; i += 97) {
        double exact = 0;
        for (int r = 0; r < comm.size(); ++r) exact += prescale * 0.001 * static_cast<double>((i % 1000) + r);
        ASSERT_NEAR(data[i], exact, tolerance * std::max(1.0, exact) * comm.size()) << i;
      }
      std::vector<float> rank0 = data;
      broadcast(comm, rank0.data(), count, DataType::kF32);
      ASSERT_EQ(std::memcmp(rank0.data(), data.data(), count * sizeof(float)), 0)
          << "ranks disagree after " << algorithmName(a) << " with " << typeName(wire);
    }
  }
}

// The compressed ring, bit for bit against a serial replay of its arithmetic: chunk c starts
// at rank c+1, each next rank adds its own value to the decoded partial sum, the owner rounds
// the total to the wire. This holds the fused decode-add-encode (and the encodings the wire
// keeps between steps) to exactly the arithmetic of one conversion per hop.
TEST(Allreduce, CompressedRingMatchesASerialReplayBitForBit) {
  const Communicator comm = freshComm();
  const int p = comm.size();
  const std::size_t count = 3 * 8192 + 5;
  auto value = [](int rank, std::size_t i) {
    return 0.37F * static_cast<float>((i * 13 + rank * 7) % 101) - 11.0F + 1e-3F * static_cast<float>(rank);
  };
  for (DataType wire : {DataType::kF16, DataType::kBF16}) {
    const Converter& reference = converter(wire, ConvertPath::kScalar);
    auto round = [&](float x) {
      std::uint16_t w = 0;
      reference.encode(&x, 1, &w);
      float back = 0;
      reference.decode(&w, 1, &back);
      return back;
    };
    std::vector<float> data(count);
    for (std::size_t i = 0; i < count; ++i) data[i] = value(comm.rank(), i);
    allreduce(comm, data.data(), data.data(), count, DataType::kF32,
              {.algorithm = AllreduceAlgorithm::kRing, .wire = wire, .segmentBytes = 4 * 1024});
    const std::size_t base = count / p;
    const std::size_t extra = count % p;
    for (std::size_t i = 0; i < count; ++i) {
      int c = 0;  // the chunk holding element i (Chunks: the first `extra` chunks one longer)
      while ((c + 1) * base + std::min<std::size_t>(c + 1, extra) <= i) ++c;
      float partial = value((c + 1) % p, i);
      for (int k = 2; k <= p; ++k) partial = value((c + k) % p, i) + round(partial);
      const float expected = p == 1 ? round(value(0, i)) : round(partial);
      ASSERT_EQ(std::bit_cast<std::uint32_t>(data[i]), std::bit_cast<std::uint32_t>(expected))
          << typeName(wire) << " element " << i << " of chunk " << c;
    }
  }
}

// Half-precision data: every algorithm sums exactly representable values exactly.
TEST(Allreduce, HalfPrecisionDataTypes) {
  const Communicator comm = freshComm();
  const std::size_t count = 3001;
  for (DataType type : {DataType::kF16, DataType::kBF16}) {
    for (AllreduceAlgorithm a : {AllreduceAlgorithm::kRing, AllreduceAlgorithm::kRecursiveDoubling,
                                 AllreduceAlgorithm::kRabenseifner}) {
      std::vector<std::uint16_t> data(count);
      for (std::size_t i = 0; i < count; ++i) {
        const float v = static_cast<float>((i + comm.rank()) % 4);
        data[i] = type == DataType::kF16 ? floatToHalf(v) : floatToBf16(v);
      }
      allreduce(comm, data.data(), data.data(), count, type, {.algorithm = a});
      for (std::size_t i = 0; i < count; ++i) {
        float want = 0;
        for (int r = 0; r < comm.size(); ++r) want += static_cast<float>((i + r) % 4);
        const float got = type == DataType::kF16 ? halfToFloat(data[i]) : bf16ToFloat(data[i]);
        ASSERT_EQ(got, want) << typeName(type) << " " << algorithmName(a) << " element " << i;
      }
    }
  }
}

TEST(Allreduce, AutoPicksByMessageSize) {
  const Communicator comm = freshComm();
  if (comm.size() < 2) GTEST_SKIP() << "one rank runs no algorithm";
  EXPECT_EQ(chooseAllreduce(comm, 8, {}), AllreduceAlgorithm::kRecursiveDoubling);
  EXPECT_NE(chooseAllreduce(comm, 64 << 20, {}), AllreduceAlgorithm::kRecursiveDoubling);
}

TEST(Allreduce, AsynchronousCallsCompleteInOrder) {
  const Communicator comm = freshComm();
  std::vector<std::vector<float>> buffers(4, std::vector<float>(100000, 1.0F));
  std::vector<Work> work;
  for (auto& b : buffers) work.push_back(iallreduce(comm, b.data(), b.data(), b.size(), DataType::kF32));
  float x = static_cast<float>(comm.rank());
  allreduce(comm, &x, &x, 1, DataType::kF32);  // a blocking call waits for the queued ones
  for (const Work& w : work) {
    w.wait();
    EXPECT_TRUE(w.test());
    EXPECT_EQ(w.error(), nullptr);
  }
  for (const auto& b : buffers) EXPECT_EQ(b.back(), static_cast<float>(comm.size()));
  EXPECT_EQ(x, static_cast<float>(comm.size() * (comm.size() - 1) / 2));
}

TEST(Allreduce, RejectsUndefinedOperations) {
  const Communicator comm = freshComm();
  float x = 1;
  EXPECT_THROW(allreduce(comm, &x, &x, 1, DataType::kF32, {.op = ReduceOp::kBitAnd}), ConfigError);
  std::int32_t i = 1;
  EXPECT_THROW(allreduce(comm, &i, &i, 1, DataType::kI32, {.wire = DataType::kF16}), ConfigError);
}

}  // namespace
}  // namespace paraxis::comm
