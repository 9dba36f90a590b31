#include "comm/collectives.hpp"

#include <fmt/format.h>

#include <cstring>

#include "comm/comm_state.hpp"
#include "comm/posted.hpp"
#include "comm/ring.hpp"
#include "core/error.hpp"

namespace paraxis::comm {
namespace {

using detail::Chunks;
using detail::Wire;


int wrap(int i, int p) { return ((i % p) + p) % p; }

std::vector<int> asInts(std::span<const std::size_t> values) {
  std::vector<int> out;
  for (std::size_t v : values) {
    if (v > static_cast<std::size_t>(INT32_MAX)) throw CommError("count exceeds MPI's int range");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

void runBuiltin(OpContext& context, const BuiltinCall& call) {
  Request request = context.transport().ibuiltin(call);
  context.wait(request);
}

void requireSize(const Communicator& comm, std::span<const std::size_t> values, const char* what) {
  if (static_cast<int>(values.size()) != comm.size()) {
    throw ConfigError(fmt::format("alltoallv: {} has {} entries, expected one per rank ({})", what,
                                  values.size(), comm.size()));
  }
}

}  // namespace

void allgather(const Communicator& comm, const void* send, void* recv, std::size_t count, DataType type,
               const AllgatherOptions& options) {
  const std::size_t bytes = count * elementSize(type);
  const CallInfo info{.op = Operation::kAllgather, .type = type, .count = count, .bytes = bytes * comm.size(),
                      .deadlineSeconds = options.deadlineSeconds,
                      .algorithm = options.algorithm == GatherAlgorithm::kBuiltin ? "mpi" : "ring"};
  comm.state().run(info, [&](OpContext& context) {
    auto* out = static_cast<std::byte*>(recv);
    std::byte* mine = out + context.rank() * bytes;
    if (options.algorithm == GatherAlgorithm::kBuiltin) {
      // In place (this rank's block already in the output): MPI's in-place form, never aliased buffers.
      BuiltinCall call{.kind = BuiltinCall::Kind::kAllgatherv, .send = mine == send ? recv : send, .recv = recv,
                       .type = type};
      call.sendCounts = {static_cast<int>(count)};
      for (int r = 0; r < context.size(); ++r) {
        call.recvCounts.push_back(static_cast<int>(count));
        call.recvDispls.push_back(static_cast<int>(count) * r);
      }
      runBuiltin(context, call);
      return;
    }
    if (mine != send && bytes > 0) std::memmove(mine, send, bytes);
    if (count == 0) return;
    Wire wire(context, type, type, ReduceOp::kSum, 1U << 30);
    detail::ringAllgather(context, wire, out, Chunks(count * context.size(), context.size()));
  });
}

void reduceScatter(const Communicator& comm, const void* send, void* recv, std::size_t count, DataType type,
                   const ReduceScatterOptions& options) {
  requireDefined(type, options.op);
  const std::size_t bytes = count * elementSize(type);
  const CallInfo info{.op = Operation::kReduceScatter, .type = type, .count = count, .bytes = bytes * comm.size(),
                      .deadlineSeconds = options.deadlineSeconds,
                      .algorithm = options.algorithm == GatherAlgorithm::kBuiltin ? "mpi" : "ring"};
  comm.state().run(info, [&](OpContext& context) {
    const int p = context.size();
    if (options.algorithm == GatherAlgorithm::kBuiltin) {
      // In place (the output is this rank's block of the input): MPI's in-place form reduces the
      // whole buffer and leaves this rank's block at its start; move it to where it belongs.
      const bool inPlace = recv == static_cast<const std::byte*>(send) + context.rank() * bytes;
      BuiltinCall call{.kind = BuiltinCall::Kind::kReduceScatterv, .send = send,
                       .recv = inPlace ? const_cast<void*>(send) : recv, .type = type, .op = options.op};
      call.recvCounts.assign(p, static_cast<int>(count));
      runBuiltin(context, call);
      if (inPlace && recv != send && bytes > 0) std::memmove(recv, send, bytes);
      return;
    }
    // Work on a copy: the caller's input stays intact.
    std::byte* acc = context.scratch(ScratchSlot::kReduceScatter, bytes * p);
    if (bytes > 0) std::memcpy(acc, send, bytes * p);
    if (count > 0 && p > 1) {
      Wire wire(context, type, type, options.op, 1U << 30);
      detail::ringReduceScatter(context, wire, acc, Chunks(count * p, p));
    }
    if (bytes > 0) std::memcpy(recv, acc + context.rank() * bytes, bytes);
  });
}

void broadcast(const Communicator& comm, void* buffer, std::size_t count, DataType type,
               const BroadcastOptions& options) {
  if (options.root < 0 || options.root >= comm.size()) {
    throw ConfigError(fmt::format("broadcast: root {} is not a rank of this {}-rank communicator", options.root,
                                  comm.size()));
  }
  const std::size_t bytes = count * elementSize(type);
  const CallInfo info{.op = Operation::kBroadcast, .type = type, .count = count, .bytes = bytes,
                      .root = options.root, .deadlineSeconds = options.deadlineSeconds,
                      .algorithm = options.algorithm == BroadcastAlgorithm::kBuiltin ? "mpi" : "binomial_tree"};
  comm.state().run(info, [&](OpContext& context) {
    const int p = context.size();
    if (options.algorithm == BroadcastAlgorithm::kBuiltin) {
      runBuiltin(context, {.kind = BuiltinCall::Kind::kBroadcast, .recv = buffer, .count = count, .type = type,
                           .root = options.root});
      return;
    }
    const int me = context.rank();
    const int relative = wrap(me - options.root, p);
    int mask = 1;
    while (mask < p) {  // receive once, from the rank that clears my lowest set bit
      if ((relative & mask) != 0) {
        Request r = context.recv(buffer, bytes, wrap(me - mask, p));
        context.wait(r);
        break;
      }
      mask <<= 1;
    }
    std::vector<Request> sends;
    for (mask >>= 1; mask > 0; mask >>= 1) {
      if (relative + mask < p) sends.push_back(context.send(buffer, bytes, wrap(me + mask, p)));
    }
    context.wait(sends);
  });
}

void alltoallv(const Communicator& comm, const void* send, std::span<const std::size_t> sendCounts,
               std::span<const std::size_t> sendDispls, void* recv, std::span<const std::size_t> recvCounts,
               std::span<const std::size_t> recvDispls, DataType type, const AlltoallOptions& options) {
  requireSize(comm, sendCounts, "send counts");
  requireSize(comm, sendDispls, "send displacements");
  requireSize(comm, recvCounts, "receive counts");
  requireSize(comm, recvDispls, "receive displacements");
  const std::size_t size = elementSize(type);
  std::size_t total = 0;
  for (std::size_t c : sendCounts) total += c;
  // Counts legitimately differ between ranks, so the fingerprint carries none.
  const CallInfo info{.op = Operation::kAlltoallv, .type = type, .count = 0, .bytes = total * size,
                      .deadlineSeconds = options.deadlineSeconds,
                      .algorithm = options.algorithm == AlltoallAlgorithm::kBuiltin ? "mpi" : "pairwise"};
  comm.state().run(info, [&](OpContext& context) {
    if (options.algorithm == AlltoallAlgorithm::kBuiltin) {
      runBuiltin(context, {.kind = BuiltinCall::Kind::kAlltoallv, .send = send, .recv = recv, .sendCounts = asInts(sendCounts),
                           .sendDispls = asInts(sendDispls), .recvCounts = asInts(recvCounts),
                           .recvDispls = asInts(recvDispls), .type = type});
      return;
    }
    const int p = context.size();
    const int me = context.rank();
    const auto* in = static_cast<const std::byte*>(send);
    auto* out = static_cast<std::byte*>(recv);
    if (recvCounts[me] != sendCounts[me]) {
      throw ConfigError(fmt::format("alltoallv: rank {} sends itself {} elements but expects {}", me,
                                    sendCounts[me], recvCounts[me]));
    }
    std::memmove(out + recvDispls[me] * size, in + sendDispls[me] * size, sendCounts[me] * size);
    for (int k = 1; k < p; ++k) {
      const int to = wrap(me + k, p);
      const int from = wrap(me - k, p);
      context.sendRecv(in + sendDispls[to] * size, sendCounts[to] * size, to, out + recvDispls[from] * size,
                       recvCounts[from] * size, from);
    }
  });
}

void barrier(const Communicator& comm, double deadlineSeconds) {
  comm.state().run({.op = Operation::kBarrier, .deadlineSeconds = deadlineSeconds}, [](OpContext& context) {
    const int p = context.size();
    for (int distance = 1; distance < p; distance <<= 1) {
      context.sendRecv(nullptr, 0, wrap(context.rank() + distance, p), nullptr, 0,
                       wrap(context.rank() - distance, p));
    }
  });
}

namespace {

// One message as an operation: its identity (the peer as root), shared by send/recv and the
// posted messages, and the body send/recv run inline: `out` is sent, or `in` filled.
CallInfo messageInfo(Operation op, std::size_t count, DataType type, int peer, const PointToPointOptions& o) {
  return {.op = op, .type = type, .count = count, .bytes = count * elementSize(type), .root = peer, .tag = o.tag,
          .deadlineSeconds = o.deadlineSeconds};
}

detail::OpFunction messageBody(Operation op, const void* out, void* in, std::size_t bytes, int peer) {
  return [=](OpContext& context) {
    Request r = op == Operation::kSend ? context.send(out, bytes, peer) : context.recv(in, bytes, peer);
    context.wait(r);
  };
}

}  // namespace

void send(const Communicator& comm, const void* data, std::size_t count, DataType type, int peer,
          const PointToPointOptions& options) {
  const CallInfo info = messageInfo(Operation::kSend, count, type, peer, options);
  comm.state().run(info, messageBody(info.op, data, nullptr, info.bytes, peer));
}

void recv(const Communicator& comm, void* data, std::size_t count, DataType type, int peer,
          const PointToPointOptions& options) {
  const CallInfo info = messageInfo(Operation::kRecv, count, type, peer, options);
  comm.state().run(info, messageBody(info.op, nullptr, data, info.bytes, peer));
}

Posted postSend(const Communicator& comm, const void* data, std::size_t count, DataType type, int peer,
                const PointToPointOptions& options) {
  return Posted::post(comm, messageInfo(Operation::kSend, count, type, peer, options), data, nullptr);
}

Posted postRecv(const Communicator& comm, void* data, std::size_t count, DataType type, int peer,
                const PointToPointOptions& options) {
  return Posted::post(comm, messageInfo(Operation::kRecv, count, type, peer, options), nullptr, data);
}

}  // namespace paraxis::comm
