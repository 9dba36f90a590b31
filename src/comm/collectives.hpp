#pragma once
// The other collectives and point-to-point, on point-to-point messages. Steps, bytes each
// rank sends, and cost (cost/collective_cost.hpp), for p ranks:
//
// allgather (ring)        p-1 steps passing one rank's block along; with m the gathered
//                         total, each rank sends ((p-1)/p)m. T = (p-1)α + ((p-1)/p)mβ
// reduce-scatter (ring)   p-1 steps reducing one block each; m the input total.
//                         T = (p-1)α + ((p-1)/p)mβ + ((p-1)/p)mγ
// broadcast (binomial)    ⌈log2 p⌉ rounds, each holder sends the whole m to one new rank.
//                         T = ⌈log2 p⌉(α + mβ)
// alltoallv (pairwise)    p-1 steps; in step k rank r sends to r+k and receives from r-k.
//                         T = (p-1)(α + (m/p)β) for m sent per rank, evenly spread
// barrier (dissemination) ⌈log2 p⌉ rounds of empty messages to r+2^k. T = ⌈log2 p⌉α
// send / recv             T = α + mβ
// Every algorithm has a kBuiltin variant that runs MPI's own collective: the reference.
#include <cstddef>
#include <span>

#include "comm/communicator.hpp"
#include "comm/options.hpp"
#include "comm/work.hpp"

namespace paraxis::comm {

// recv holds size() blocks of `count`; block r is rank r's send. In place: send is this rank's
// block of recv.
void allgather(const Communicator& comm, const void* send, void* recv, std::size_t count, DataType type,
               const AllgatherOptions& options = {});
// send holds size() blocks of `count`; rank r receives block r reduced over all ranks. In place:
// recv is this rank's block of send, and the rest of send may be overwritten.
void reduceScatter(const Communicator& comm, const void* send, void* recv, std::size_t count, DataType type,
                   const ReduceScatterOptions& options = {});
void broadcast(const Communicator& comm, void* buffer, std::size_t count, DataType type,
               const BroadcastOptions& options = {});
// Counts and displacements in elements, one per rank.
void alltoallv(const Communicator& comm, const void* send, std::span<const std::size_t> sendCounts,
               std::span<const std::size_t> sendDispls, void* recv, std::span<const std::size_t> recvCounts,
               std::span<const std::size_t> recvDispls, DataType type, const AlltoallOptions& options = {});
void barrier(const Communicator& comm, double deadlineSeconds = 0);

void send(const Communicator& comm, const void* data, std::size_t count, DataType type, int peer,
          const PointToPointOptions& options = {});
void recv(const Communicator& comm, void* data, std::size_t count, DataType type, int peer,
          const PointToPointOptions& options = {});
// Non-blocking sends and receives: comm/posted.hpp.

}  // namespace paraxis::comm
