#pragma once
// Moving chunks of an accumulation buffer between ranks, in the data type or in a narrower
// wire type (f16/bf16 for f32 data). Every reduction algorithm is written with these two
// steps, so each gets compressed transfers and segmentation for free. Internal to comm.
//
// A compressed sum never spends a pass of its own on the wire format: a received segment is
// decoded, added and re-encoded in one pass (comm/convert), and the encoded result is kept
// for the next step, which in a ring sends exactly the chunk it just reduced; a copied chunk
// is kept as received, for the allgather's next hop.
#include <cstddef>

#include "comm/convert.hpp"
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
  // acc may change between calls only through this Wire (the kept encoding relies on it).
  void roundOwned(std::byte* acc, std::size_t offset, std::size_t count);

  std::size_t elementBytes() const { return typeBytes_; }
  // The same wire without compression: for results that must arrive bit-exact.
  Wire exact() const;

 private:
  // acc[offset, +count) already in wire format: from the last step when it holds exactly
  // that range, else encoded into scratch now.
  const std::byte* encoded(const std::byte* acc, std::size_t offset, std::size_t count);
  // Consumes one received compressed segment into target (reduce or overwrite); `keep`, when
  // not null, receives the wire form of the result.
  void consume(std::byte* target, const std::byte* segment, std::size_t n, bool reduce, std::byte* keep);
  void exchange(std::byte* acc, std::size_t sendOffset, std::size_t sendCount, int sendPeer,
                std::size_t recvOffset, std::size_t recvCount, int recvPeer, bool reduce);

  // The wire form of acc[offset, +count), valid until the exchange after next reuses its
  // scratch (each exchange writes the slots of its own parity).
  struct Kept {
    const std::byte* data = nullptr;
    std::size_t offset = 0;
    std::size_t count = 0;
  };

  OpContext& context_;
  DataType type_;
  DataType wire_;
  ReduceOp op_;
  std::size_t typeBytes_;
  std::size_t wireBytes_;
  std::size_t segmentElements_;
  const Converter* converter_ = nullptr;  // set when compressed
  Kept kept_;
  int exchanges_ = 0;
};

}  // namespace paraxis::comm::detail
