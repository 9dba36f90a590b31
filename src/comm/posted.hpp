#pragma once
// A send or receive posted from the calling thread and completed by that thread's test() or
// wait(): no progress thread in between. The transport progresses a posted message whenever
// this rank waits on any request, so a pipeline's activations move on the compute's own
// schedule; through a progress thread each message also waits for that thread to be woken and
// scheduled, which on busy cores cost a pipeline stage ~2 ms a megabyte (scripts/bench-pipeline.sh).
// Posted messages on one communicator match in posting order.
#include <chrono>
#include <cstddef>
#include <memory>

#include "comm/collectives.hpp"
#include "comm/communicator.hpp"
#include "comm/operation.hpp"

namespace paraxis::comm {

class Posted {
 public:
  Posted() = default;
  Posted(Posted&& other) noexcept;
  Posted& operator=(Posted&& other) noexcept;
  Posted(const Posted&) = delete;
  Posted& operator=(const Posted&) = delete;
  ~Posted();  // abandons a message still pending (error paths)

  // True once complete (a default Posted is complete).
  bool test();
  // Until complete; past the deadline (counted from posting) throws TimeoutError naming the
  // call and the peer.
  void wait();
  // wait(), returning the seconds this rank sat idle in it: the wall time less what the
  // transport spent moving the message meanwhile (a copy is a transfer, not idle time).
  double waitIdle();
  // Seconds from posting to the completion this rank observed (0 until then).
  double seconds() const { return seconds_; }
  // Seconds this rank spent inside the transport for the message (posting, and the tests,
  // one of which does the copy of a large message): its cost to this rank, waits excluded.
  double transportSeconds() const { return context_ ? context_->transportSeconds() : 0.0; }

  // Posts a send of `out` or a receive into `in` (the other null), as `info` describes.
  static Posted post(const Communicator& comm, const CallInfo& info, const void* out, void* in);

 private:
  Posted(const Communicator& comm, const CallInfo& info);
  void finish();
  void release();

  Communicator comm_;  // keeps the transport alive while the message is pending
  std::unique_ptr<OpContext> context_;
  Request request_;
  bool done_ = true;
  std::chrono::steady_clock::time_point posted_;
  double seconds_ = 0;
};

Posted postSend(const Communicator& comm, const void* data, std::size_t count, DataType type, int peer,
                const PointToPointOptions& options = {});
Posted postRecv(const Communicator& comm, void* data, std::size_t count, DataType type, int peer,
                const PointToPointOptions& options = {});

}  // namespace paraxis::comm
