#pragma once
// The wire under a Communicator: non-blocking point-to-point messages, a control plane for
// failure notices and fingerprints, and the backend's own collectives as a reference.
// Backends are siblings: comm/mpi/ (MPI, the only place mpi.h appears) and comm/self/ (a
// single process, so that training runs without MPI). The collective algorithms of paraxis
// are written once, above this interface, in comm/.
//
// Threading contract: one Transport is driven by one thread at a time (the Communicator
// serialises its operations); different Transports may be driven from different threads.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/types.hpp"

namespace paraxis::comm {

// A pending operation; `handle` is backend-specific (an MPI_Request for MPI).
struct Request {
  std::uintptr_t handle = 0;
  int peer = -1;  // -1 for collective requests
};

// The identity of one collective call, compared across ranks in verification mode.
struct Fingerprint {
  std::uint64_t sequence = 0;
  std::int32_t operation = 0;  // an Operation value
  std::int32_t type = 0;       // a DataType value
  std::uint64_t count = 0;
  std::int32_t root = 0;
  std::int32_t algorithm = 0;  // algorithmCode() of the call's algorithm

  bool operator==(const Fingerprint&) const = default;
};

// A control message: "rank `rank` gave up waiting in call `sequence`".
struct Notice {
  std::uint64_t sequence = 0;
  std::int32_t rank = 0;
  std::int32_t reserved = 0;
};

// Arguments of a backend collective (the reference implementation).
struct BuiltinCall {
  enum class Kind { kAllreduce, kAllgatherv, kReduceScatterv, kBroadcast, kAlltoallv };
  Kind kind = Kind::kAllreduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;                 // allreduce, broadcast: elements
  std::vector<int> sendCounts, sendDispls, recvCounts, recvDispls;  // v-variants, elements
  DataType type = DataType::kF32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string hostName() const = 0;
  // Whether this transport may be driven from a progress thread while other threads use
  // other transports (MPI_THREAD_MULTIPLE). Without it asynchronous calls run inline.
  virtual bool threadSafe() const = 0;

  // Collective over this transport: ranks with the same colour form a new transport,
  // ordered by key. Blocking, but every rank must call it (used at set-up only).
  virtual std::unique_ptr<Transport> split(int color, int key) = 0;

  virtual Request isend(const void* data, std::size_t bytes, int peer, int tag) = 0;
  virtual Request irecv(void* data, std::size_t bytes, int peer, int tag) = 0;
  // True once the request has completed; the request is then released.
  virtual bool test(Request& request) = 0;
  // Abandons a pending request (error paths only).
  virtual void abandon(Request& request) = 0;

  virtual void sendNotice(const Notice& notice, int peer) = 0;
  virtual std::optional<Notice> pollNotice() = 0;
  virtual Request iallgatherFingerprints(const Fingerprint& mine, std::vector<Fingerprint>& all) = 0;

  virtual Request ibuiltin(const BuiltinCall& call) = 0;
};

}  // namespace paraxis::comm
