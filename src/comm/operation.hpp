#pragma once
// What the algorithms see of a running operation: its identity (for tags, fingerprints and
// error messages) and deadline-aware send / receive / wait.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "comm/transport.hpp"

namespace paraxis::comm {

enum class Operation : std::int32_t {
  kAllreduce = 1,
  kAllgather,
  kReduceScatter,
  kBroadcast,
  kAlltoallv,
  kHaloExchange,
  kBarrier,
  kSend,
  kRecv,
};

std::string operationName(Operation op);
bool isCollective(Operation op);

namespace detail {
class CommState;
}

// Describes a call before it runs; `count` and `type` go into the fingerprint.
struct CallInfo {
  Operation op = Operation::kAllreduce;
  DataType type = DataType::kF32;
  std::size_t count = 0;
  std::size_t bytes = 0;
  int root = 0;                // broadcast root; the peer of a send or receive
  int tag = 0;                 // user tag of a send or receive
  double deadlineSeconds = 0;  // 0: the communicator's default
  bool background = false;     // runs on the progress thread: poll politely (compute shares the cores)
  const char* algorithm = "";  // a name of kAlgorithmNames (verification compares it across ranks)
};

// The algorithms a collective may run, by name; a fingerprint carries the index.
std::int32_t algorithmCode(const char* name);
const char* algorithmCodeName(std::int32_t code);

// Every user of a communicator's scratch, one slot each: the only list, so that no two
// users of one operation share a buffer by accident.
enum class ScratchSlot {
  kWireSend,        // the encoded or snapshot send of a Wire exchange
  kWireRecvEven,    // receives of even-numbered Wire exchanges (and their kept encoding)
  kWireRecvOdd,     // receives of odd-numbered ones
  kWireDecode,      // a decoded segment for a non-sum reduction
  kWireKeepEven,    // the fused re-encoding of a sum, even exchanges
  kWireKeepOdd,     // odd exchanges
  kWireOwned,       // roundOwned's encoding
  kReduceScatter,   // reduce-scatter's working copy of the input
  kHaloPack,        // the halo faces packed for sending
  kHaloUnpack,      // the halo faces received
};


class OpContext {
 public:
  using Clock = std::chrono::steady_clock;
  OpContext(detail::CommState& state, const CallInfo& info, std::uint64_t sequence);

  int rank() const;
  int size() const;
  Transport& transport() const;
  const CallInfo& info() const { return info_; }
  std::uint64_t sequence() const { return sequence_; }
  int tag() const;

  Request send(const void* data, std::size_t bytes, int peer);
  Request recv(void* data, std::size_t bytes, int peer);
  // True once `request` completed (then released).
  bool test(Request& request);
  // Waits for every request until the deadline; on expiry runs the timeout protocol and
  // throws TimeoutError on this rank (and, through notices, on every waiting rank).
  void wait(std::span<Request> requests);
  void wait(Request& request) { wait(std::span<Request>(&request, 1)); }
  // Posts both, then waits for both: one step of a ring or an exchange.
  void sendRecv(const void* sendData, std::size_t sendBytes, int sendPeer, void* recvData,
                std::size_t recvBytes, int recvPeer);

  // Grow-only scratch owned by the communicator: buffers stay allocated across calls.
  std::byte* scratch(ScratchSlot slot, std::size_t bytes);

  // Counts the time spent inside the transport's calls (posting and testing) from now on:
  // where the data moves, not the time waited between polls.
  void timeTransport() { timed_ = true; }
  double transportSeconds() const { return transportSeconds_; }

 private:
  // `notifier` is the rank whose notice ended the wait, or -1 when the deadline did.
  [[noreturn]] void timeout(std::span<Request> pending, int notifier);
  detail::CommState& state_;
  CallInfo info_;
  std::uint64_t sequence_;
  Clock::time_point deadline_;
  bool timed_ = false;
  double transportSeconds_ = 0;
};

}  // namespace paraxis::comm
