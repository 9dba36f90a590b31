#include "comm/agreement.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "comm/allreduce.hpp"
#include "comm/collectives.hpp"

namespace paraxis::comm {

std::optional<RankMessage> firstFailure(const Communicator& comm, const std::string& mine) {
  std::int64_t first = mine.empty() ? comm.size() : comm.rank();
  allreduce(comm, &first, &first, 1, DataType::kI64, {.op = ReduceOp::kMin});
  if (first == comm.size()) return std::nullopt;
  const int root = static_cast<int>(first);
  return RankMessage{root, broadcastText(comm, comm.rank() == root ? mine.substr(0, 1000) : std::string(), root)};
}

std::vector<std::uint8_t> agreeOnFlags(const Communicator& comm, const std::vector<std::uint8_t>& mine) {
  const std::size_t count = mine.size();
  if (comm.size() == 1) return mine;
  std::vector<std::uint64_t> bits((count + 63) / 64, 0);
  for (std::size_t g = 0; g < count; ++g) {
    if (mine[g] != 0) bits[g / 64] |= 1ULL << (g % 64);
  }
  iallreduce(comm, bits.data(), bits.data(), bits.size(), DataType::kU64,
             {.algorithm = AllreduceAlgorithm::kRecursiveDoubling, .op = ReduceOp::kBitAnd})
      .wait();
  std::vector<std::uint8_t> agreed(count);
  for (std::size_t g = 0; g < count; ++g) agreed[g] = static_cast<std::uint8_t>((bits[g / 64] >> (g % 64)) & 1ULL);
  return agreed;
}

std::string describe(const Communicator& comm, const RankMessage& m) {
  return comm.size() > 1 ? "rank " + std::to_string(m.rank) + ": " + m.text : m.text;
}

std::string broadcastText(const Communicator& comm, const std::string& text, int root) {
  constexpr std::size_t kLimit = 64 * 1024;
  std::uint64_t length = std::min(text.size(), kLimit);
  broadcast(comm, &length, 1, DataType::kU64, {.root = root});
  std::vector<std::uint64_t> words((length + 7) / 8, 0);
  if (comm.rank() == root) std::memcpy(words.data(), text.data(), length);
  broadcast(comm, words.data(), words.size(), DataType::kU64, {.root = root});
  return std::string(reinterpret_cast<const char*>(words.data()), length);
}

}  // namespace paraxis::comm
