#include "comm/wire.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "comm/half.hpp"

namespace paraxis::comm::detail {
namespace {

constexpr int kSendSlot = 0;
constexpr int kRecvSlot = 1;
constexpr int kDecodeSlot = 2;

}  // namespace

Wire::Wire(OpContext& context, DataType type, DataType wire, ReduceOp op, std::size_t segmentBytes)
    : context_(context),
      type_(type),
      wire_(wire),
      op_(op),
      typeBytes_(elementSize(type)),
      wireBytes_(elementSize(wire)),
      segmentElements_(std::max<std::size_t>(1, segmentBytes / elementSize(wire))) {}

Wire Wire::exact() const {
  return Wire(context_, type_, type_, op_, segmentElements_ * wireBytes_);
}

void Wire::encode(const std::byte* from, std::size_t count, std::byte* to) const {
  const auto* in = reinterpret_cast<const float*>(from);
  auto* out = reinterpret_cast<std::uint16_t*>(to);
  if (wire_ == DataType::kF16) {
    for (std::size_t i = 0; i < count; ++i) out[i] = floatToHalf(in[i]);
  } else {
    for (std::size_t i = 0; i < count; ++i) out[i] = floatToBf16(in[i]);
  }
}

void Wire::decode(const std::byte* from, std::size_t count, std::byte* to) const {
  const auto* in = reinterpret_cast<const std::uint16_t*>(from);
  auto* out = reinterpret_cast<float*>(to);
  if (wire_ == DataType::kF16) {
    for (std::size_t i = 0; i < count; ++i) out[i] = halfToFloat(in[i]);
  } else {
    for (std::size_t i = 0; i < count; ++i) out[i] = bf16ToFloat(in[i]);
  }
}

void Wire::roundOwned(std::byte* acc, std::size_t offset, std::size_t count) {
  if (wire_ == type_ || count == 0) return;
  std::byte* tmp = context_.scratch(kSendSlot, count * wireBytes_);
  encode(acc + offset * typeBytes_, count, tmp);
  decode(tmp, count, acc + offset * typeBytes_);
}

void Wire::sendReduce(std::byte* acc, std::size_t sendOffset, std::size_t sendCount, int sendPeer,
                      std::size_t recvOffset, std::size_t recvCount, int recvPeer) {
  exchange(acc, sendOffset, sendCount, sendPeer, recvOffset, recvCount, recvPeer, true);
}

void Wire::sendCopy(std::byte* acc, std::size_t sendOffset, std::size_t sendCount, int sendPeer,
                    std::size_t recvOffset, std::size_t recvCount, int recvPeer) {
  exchange(acc, sendOffset, sendCount, sendPeer, recvOffset, recvCount, recvPeer, false);
}

// Posts every segment's receive and send at once, then consumes received segments in order:
// the reduction (or decode) of segment k overlaps the arrival of segments k+1, k+2, ...
void Wire::exchange(std::byte* acc, std::size_t sendOffset, std::size_t sendCount, int sendPeer,
                    std::size_t recvOffset, std::size_t recvCount, int recvPeer, bool reduce) {
  if (sendPeer < 0) sendCount = 0;
  if (recvPeer < 0) recvCount = 0;
  const bool compressed = wire_ != type_;
  const bool direct = !compressed && !reduce;  // receive straight into acc
  std::byte* sendBuffer = acc + sendOffset * typeBytes_;
  const bool overlapping = sendCount > 0 && recvCount > 0 && sendOffset < recvOffset + recvCount &&
                           recvOffset < sendOffset + sendCount;
  if (compressed && sendCount > 0) {
    sendBuffer = context_.scratch(kSendSlot, sendCount * wireBytes_);
    encode(acc + sendOffset * typeBytes_, sendCount, sendBuffer);
  } else if (overlapping) {
    // acc changes while the send is in flight (recursive doubling): send a snapshot.
    sendBuffer = context_.scratch(kSendSlot, sendCount * typeBytes_);
    std::memcpy(sendBuffer, acc + sendOffset * typeBytes_, sendCount * typeBytes_);
  }
  std::byte* recvBuffer = direct ? acc + recvOffset * typeBytes_ : context_.scratch(kRecvSlot, recvCount * wireBytes_);
  const std::size_t recvBytesPer = direct ? typeBytes_ : wireBytes_;
  const std::size_t sendBytesPer = compressed ? wireBytes_ : typeBytes_;

  std::vector<Request> receives;
  std::vector<Request> sends;
  for (std::size_t start = 0; start < recvCount; start += segmentElements_) {
    const std::size_t n = std::min(segmentElements_, recvCount - start);
    receives.push_back(context_.recv(recvBuffer + start * recvBytesPer, n * recvBytesPer, recvPeer));
  }
  for (std::size_t start = 0; start < sendCount; start += segmentElements_) {
    const std::size_t n = std::min(segmentElements_, sendCount - start);
    sends.push_back(context_.send(sendBuffer + start * sendBytesPer, n * sendBytesPer, sendPeer));
  }
  for (std::size_t k = 0; k < receives.size(); ++k) {
    context_.wait(receives[k]);
    if (direct) continue;
    const std::size_t start = k * segmentElements_;
    const std::size_t n = std::min(segmentElements_, recvCount - start);
    std::byte* target = acc + (recvOffset + start) * typeBytes_;
    const std::byte* segment = recvBuffer + start * wireBytes_;
    if (compressed) {
      std::byte* decoded = context_.scratch(kDecodeSlot, n * typeBytes_);
      decode(segment, n, decoded);
      segment = decoded;
    }
    if (reduce) {
      reduceInto(target, segment, n, type_, op_);
    } else {
      std::memcpy(target, segment, n * typeBytes_);
    }
  }
  context_.wait(sends);
}

}  // namespace paraxis::comm::detail
