#include "comm/wire.hpp"

#include <algorithm>
#include <cstring>
#include <vector>


namespace paraxis::comm::detail {
namespace {

// Receives and kept encodings alternate between two slots by the exchange's parity, so the
// encoding kept from one exchange survives the next one's receives.
constexpr ScratchSlot kRecvSlots[2] = {ScratchSlot::kWireRecvEven, ScratchSlot::kWireRecvOdd};
constexpr ScratchSlot kKeepSlots[2] = {ScratchSlot::kWireKeepEven, ScratchSlot::kWireKeepOdd};

}  // namespace

Wire::Wire(OpContext& context, DataType type, DataType wire, ReduceOp op, std::size_t segmentBytes)
    : context_(context),
      type_(type),
      wire_(wire),
      op_(op),
      typeBytes_(elementSize(type)),
      wireBytes_(elementSize(wire)),
      segmentElements_(std::max<std::size_t>(1, segmentBytes / elementSize(wire))),
      converter_(wire != type ? &converter(wire) : nullptr) {}

Wire Wire::exact() const {
  return Wire(context_, type_, type_, op_, segmentElements_ * wireBytes_);
}

const std::byte* Wire::encoded(const std::byte* acc, std::size_t offset, std::size_t count) {
  if (kept_.data != nullptr && kept_.offset == offset && kept_.count == count) return kept_.data;
  std::byte* buffer = context_.scratch(ScratchSlot::kWireSend, count * wireBytes_);
  converter_->encode(reinterpret_cast<const float*>(acc + offset * typeBytes_), count,
                     reinterpret_cast<std::uint16_t*>(buffer));
  return buffer;
}

void Wire::roundOwned(std::byte* acc, std::size_t offset, std::size_t count) {
  if (converter_ == nullptr || count == 0) return;
  auto* values = reinterpret_cast<float*>(acc + offset * typeBytes_);
  if (kept_.data != nullptr && kept_.offset == offset && kept_.count == count) {
    converter_->decode(reinterpret_cast<const std::uint16_t*>(kept_.data), count, values);
    return;
  }
  std::byte* wire = context_.scratch(ScratchSlot::kWireOwned, count * wireBytes_);
  converter_->encode(values, count, reinterpret_cast<std::uint16_t*>(wire));
  converter_->decode(reinterpret_cast<const std::uint16_t*>(wire), count, values);
  kept_ = {wire, offset, count};
}

void Wire::consume(std::byte* target, const std::byte* segment, std::size_t n, bool reduce, std::byte* keep) {
  const auto* in = reinterpret_cast<const std::uint16_t*>(segment);
  auto* values = reinterpret_cast<float*>(target);
  if (!reduce) {
    converter_->decode(in, n, values);
  } else if (op_ == ReduceOp::kSum) {
    converter_->decodeAdd(values, in, n, reinterpret_cast<std::uint16_t*>(keep));
  } else {
    auto* decoded = reinterpret_cast<float*>(context_.scratch(ScratchSlot::kWireDecode, n * typeBytes_));
    converter_->decode(in, n, decoded);
    reduceInto(values, decoded, n, type_, op_);
  }
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
  const bool compressed = converter_ != nullptr;
  const bool direct = !compressed && !reduce;  // receive straight into acc
  const int parity = exchanges_++ % 2;
  const std::byte* sendBuffer = acc + sendOffset * typeBytes_;
  const bool overlapping = sendCount > 0 && recvCount > 0 && sendOffset < recvOffset + recvCount &&
                           recvOffset < sendOffset + sendCount;
  if (compressed && sendCount > 0) {
    sendBuffer = encoded(acc, sendOffset, sendCount);  // never acc itself: safe when overlapping
  } else if (overlapping) {
    // acc changes while the send is in flight (recursive doubling): send a snapshot.
    std::byte* snapshot = context_.scratch(ScratchSlot::kWireSend, sendCount * typeBytes_);
    std::memcpy(snapshot, acc + sendOffset * typeBytes_, sendCount * typeBytes_);
    sendBuffer = snapshot;
  }
  std::byte* recvBuffer =
      direct ? acc + recvOffset * typeBytes_ : context_.scratch(kRecvSlots[parity], recvCount * wireBytes_);
  // The wire form of what this exchange leaves in acc[recvOffset, +recvCount): the received
  // bytes for a copy, the fused re-encoding for a sum.
  std::byte* keep = nullptr;
  if (compressed && recvCount > 0) {
    if (!reduce) keep = recvBuffer;
    if (reduce && op_ == ReduceOp::kSum) keep = context_.scratch(kKeepSlots[parity], recvCount * wireBytes_);
  }
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
      consume(target, segment, n, reduce, reduce && keep != nullptr ? keep + start * wireBytes_ : nullptr);
    } else if (reduce) {
      reduceInto(target, segment, n, type_, op_);
    } else {
      std::memcpy(target, segment, n * typeBytes_);
    }
  }
  context_.wait(sends);
  kept_ = keep != nullptr ? Kept{keep, recvOffset, recvCount} : Kept{};
}

}  // namespace paraxis::comm::detail
