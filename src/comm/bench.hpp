#pragma once
// The communication benchmark behind `paraxis bench comm`, in nccl-tests' shape: for each
// operation, algorithm and size (growing by a step factor), the data type, reduction and root,
// then out of place and in place each: the time (slowest rank, median of trials), algorithm and
// bus bandwidth, and a #wrong count from inputs whose exact result is known; beside them the
// α-β-γ model's time. MPI's own collective runs beside ours as the reference.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "alphabeta/collective_cost.hpp"
#include "comm/types.hpp"

namespace paraxis::comm {

class Hierarchy;

struct BenchOptions {
  std::vector<std::string> operations{"allreduce"};  // allreduce, allgather, reduce_scatter, broadcast, alltoall
  std::vector<std::string> algorithms;               // empty: every algorithm of each operation
  std::size_t minBytes = 4;
  std::size_t maxBytes = 256u << 20;
  std::size_t stepFactor = 4;                        // sizes minBytes, x stepFactor, ... up to maxBytes
  ReduceOp op = ReduceOp::kSum;                       // allreduce and reduce_scatter: sum, max or min
  int root = 0;                                       // broadcast
  int iterations = 0;  // per trial; 0 picks by size
  int trials = 3;
  std::size_t segmentBytes = 256 * 1024;  // ring segment size (allreduce)
  alphabeta::LinkParams intra;                // between ranks of one host
  std::optional<alphabeta::LinkParams> inter;  // between hosts, when the job spans several
  const Hierarchy* hierarchy = nullptr;  // for the hierarchical algorithm
};

// One way of calling the operation: out of place (separate input and output buffers) or in place.
struct BenchTiming {
  double seconds = 0;
  double algorithmBandwidth = 0;  // bytes / seconds
  double busBandwidth = 0;        // algorithm bandwidth x the operation's bus factor
  std::size_t wrong = 0;          // elements that differ from the exact result, the most on any rank
};

struct BenchRow {
  std::string operation;
  std::string algorithm;
  std::size_t bytes = 0;
  std::size_t count = 0;
  std::string type = "float";  // what nccl-tests' type column names (the buffers are f32)
  std::string redop = "none";  // sum, max, min for reductions
  int root = -1;               // broadcast's root; -1 where the operation has none
  BenchTiming outOfPlace;
  std::optional<BenchTiming> inPlace;  // empty where the operation has no in-place form (alltoall)
  double modelSeconds = 0;
};

// nccl-tests' closing figure: the mean bus bandwidth over every row and every way it ran.
double averageBusBandwidth(const std::vector<BenchRow>& rows);

// Collective over `comm`; every rank returns the same rows. `progress` (rank 0) gets each row.
std::vector<BenchRow> runCommBench(const Communicator& comm, const BenchOptions& options,
                                   const std::function<void(const BenchRow&)>& progress = {});

// The largest of every rank's `seconds`, on every rank (MPI's own allreduce: a benchmark's
// reference must not time itself with what it measures).
double slowestRank(const Communicator& comm, double seconds, double deadlineSeconds = 0);
// One trial, collective over `comm`: `calls` calls of `call` lined up by a barrier; the slowest
// rank's seconds per call. No warm-up.
double timeTrial(const Communicator& comm, int calls, const std::function<void()>& call, double deadlineSeconds = 0);
// Seconds per call of `call`, collective over `comm`: one warm-up call, then `trials` times
// `calls` calls lined up by a barrier, each trial the slowest rank's mean; the median trial.
double timeCollectively(const Communicator& comm, int calls, int trials, const std::function<void()>& call,
                        double deadlineSeconds = 0);

// The algorithms benchmarked for an operation, ours first and "mpi" last.
std::vector<std::string> benchAlgorithms(const std::string& operation);

}  // namespace paraxis::comm
