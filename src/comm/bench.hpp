#pragma once
// The communication benchmark behind `paraxis bench comm`, modelled on nccl-tests: for each
// operation, algorithm and size, the time (slowest rank, median of trials), algorithm and bus
// bandwidth, the α-β-γ model's time and the ratio model / measured, and a #wrong column from
// inputs whose exact result is known. MPI's own collective runs beside ours as the reference.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "alphabeta/collective_cost.hpp"

namespace paraxis::comm {

class Hierarchy;

struct BenchOptions {
  std::vector<std::string> operations{"allreduce"};  // allreduce, allgather, reduce_scatter, broadcast, alltoall
  std::vector<std::string> algorithms;               // empty: every algorithm of each operation
  std::size_t minBytes = 4;
  std::size_t maxBytes = 256u << 20;
  std::size_t stepFactor = 4;
  int iterations = 0;  // per trial; 0 picks by size
  int trials = 3;
  std::size_t segmentBytes = 256 * 1024;  // ring segment size (allreduce)
  alphabeta::LinkParams intra;                // between ranks of one host
  std::optional<alphabeta::LinkParams> inter;  // between hosts, when the job spans several
  const Hierarchy* hierarchy = nullptr;  // for the hierarchical algorithm
};

struct BenchRow {
  std::string operation;
  std::string algorithm;
  std::size_t bytes = 0;
  std::size_t count = 0;
  double seconds = 0;
  double algorithmBandwidth = 0;  // bytes / seconds
  double busBandwidth = 0;        // algorithm bandwidth x the operation's bus factor
  double modelSeconds = 0;
  std::size_t wrong = 0;
};

// Collective over `comm`; every rank returns the same rows. `progress` (rank 0) gets each row.
std::vector<BenchRow> runCommBench(const Communicator& comm, const BenchOptions& options,
                                   const std::function<void(const BenchRow&)>& progress = {});

// The largest of every rank's `seconds`, on every rank (MPI's own allreduce: a benchmark's
// reference must not time itself with what it measures).
double slowestRank(const Communicator& comm, double seconds, double deadlineSeconds = 0);
// Seconds per call of `call`, collective over `comm`: one warm-up call, then `trials` times
// `calls` calls lined up by a barrier, each trial the slowest rank's mean; the median trial.
double timeCollectively(const Communicator& comm, int calls, int trials, const std::function<void()>& call,
                        double deadlineSeconds = 0);

// The algorithms benchmarked for an operation, ours first and "mpi" last.
std::vector<std::string> benchAlgorithms(const std::string& operation);

}  // namespace paraxis::comm
