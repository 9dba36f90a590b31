#pragma once
// Moving chunks of an accumulation buffer between ranks, in the data type or in a narrower
// wire type (f16/bf16 for f32 data). Every reduction algorithm is written with these two
// steps, so each gets compressed transfers and segmentation for free. Internal to comm.
#include <cstddef>

#include "comm/operation.hpp"

namespace paraxis::comm::detail {

class Wire {
 public:
  // `type` is the buffer's element type; `wire` what travels (equal to type, or f16/bf16
  // when type is f32).
  Wire(OpContext& context, DataType type, DataType wire, ReduceOp op, std::size_t segmentBytes);

  // Sends acc[sendOffset, +sendCount) to sendPeer and reduces the chunk that recvPeer sends
  // into acc[recvOffset, +recvCount). Offsets and counts are in elements; a peer < 0 skips
  // that half.
  void sendReduce(std::byte* acc, std::size_t sendOffset, std::size_t sendCount, int sendPeer,
                  std::size_t recvOffset, std::size_t recvCount, int recvPeer);
  // The same, but the received chunk overwrites acc.
  void sendCopy(std::byte* acc, std::size_t sendOffset, std::size_t sendCount, int sendPeer,
                std::size_t recvOffset, std::size_t recvCount, int recvPeer);
  // Rounds acc[offset, +count) to the wire's precision, so that a rank keeps exactly what
  // its peers receive (all ranks end with identical values). A no-op without compression.
  void roundOwned(std::byte* acc, std::size_t offset, std::size_t count);

  std::size_t elementBytes() const { return typeBytes_; }
  // The same wire without compression: for results that must arrive bit-exact.
  Wire exact() const;

 private:
  void encode(const std::byte* from, std::size_t count, std::byte* to) const;
  void decode(const std::byte* from, std::size_t count, std::byte* to) const;
  void exchange(std::byte* acc, std::size_t sendOffset, std::size_t sendCount, int sendPeer,
                std::size_t recvOffset, std::size_t recvCount, int recvPeer, bool reduce);

  OpContext& context_;
  DataType type_;
  DataType wire_;
  ReduceOp op_;
  std::size_t typeBytes_;
  std::size_t wireBytes_;
  std::size_t segmentElements_;
};

}  // namespace paraxis::comm::detail
