#pragma once
// Allreduce, written on point-to-point messages. Each algorithm's steps, bytes on the wire
// and α-β-γ cost (the same formula as cost/collective_cost.hpp), for p ranks and m bytes:
//
// ring (segmented)  reduce-scatter then allgather around the ring. 2(p-1) steps, each
//                   sending one chunk of m/p in segments (a segment is reduced while the next
//                   is in flight). Each rank sends 2((p-1)/p)m bytes.
//                   T = 2(p-1)α + 2((p-1)/p)mβ + ((p-1)/p)mγ
// recursive doubling  log2 p' steps exchanging the whole vector with rank XOR 2^k. Sends
//                   log2(p')·m bytes. T = log2 p'(α + mβ + mγ) (+ fold)
// rabenseifner      reduce-scatter by recursive halving, allgather by recursive doubling:
//                   2 log2 p' steps; sends 2((p'-1)/p')m bytes.
//                   T = 2 log2 p'α + 2((p'-1)/p')mβ + ((p'-1)/p')mγ (+ fold)
//   fold            for p not a power of two, p' = 2^⌊log2 p⌋: the first 2(p-p') ranks pair
//                   up; even ranks send their vector to the odd one and wait for the result.
//                   + 2(α + mβ) + mγ
// hierarchical      ring reduce-scatter inside each host (L ranks), an allreduce of each
//                   rank's m/L shard across the N hosts, ring allgather inside the host.
//                   T = 2(L-1)α_i + 2((L-1)/L)mβ_i + ((L-1)/L)mγ + 2(N-1)α_e + 2((N-1)/N)(m/L)β_e
// builtin           MPI's own MPI_Iallreduce: the reference.
// auto              the algorithm the cost model predicts fastest for p and m, with the
//                   options' α/β/γ profile (hierarchical only when a Hierarchy is given).
#include <cstddef>

#include "comm/communicator.hpp"
#include "comm/options.hpp"
#include "comm/work.hpp"

namespace paraxis::comm {

// In place when send == recv. Blocking; every rank calls it with the same count and type.
void allreduce(const Communicator& comm, const void* send, void* recv, std::size_t count, DataType type,
               const AllreduceOptions& options = {});
// The same on the communicator's progress thread; the buffers must stay alive until done.
Work iallreduce(const Communicator& comm, const void* send, void* recv, std::size_t count, DataType type,
                const AllreduceOptions& options = {});

// What kAuto would run for this communicator, count and type.
AllreduceAlgorithm chooseAllreduce(const Communicator& comm, std::size_t bytes, const AllreduceOptions& options);
AllreduceAlgorithm chooseAllreduce(int ranks, std::size_t bytes, const AllreduceOptions& options);
const char* algorithmName(AllreduceAlgorithm algorithm);

}  // namespace paraxis::comm
