#include "comm/bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "comm/allreduce.hpp"
#include "comm/collectives.hpp"
#include "comm/hierarchy.hpp"
#include "core/error.hpp"
#include "core/median.hpp"

namespace paraxis::comm {
namespace {

using Clock = std::chrono::steady_clock;

// One benchmark case: buffers with a known exact result, the calls, and the model.
struct Case {
  std::vector<float> send;
  std::vector<float> recv;
  std::vector<float> place;  // the in-place call's one buffer
  std::vector<float> expected;
  // Run the operation on the Case they are given (no reference to itself: a Case may move).
  std::function<void(Case&)> call;         // out of place: send to recv
  std::function<void(Case&)> callInPlace;  // on `place`; empty where the operation has no in-place form
  std::function<void(Case&)> resetPlace;   // puts this rank's input where the in-place call reads it
  std::size_t placeResult = 0;             // where in `place` the result lands
  double busFactor = 1;
  double modelSeconds = 0;
  std::size_t bytes = 0;  // the size algbw divides: the whole vector, as nccl-tests counts it
};

// Small integers keep every summation order exact, so "wrong" means wrong.
float pattern(std::size_t i, int rank) { return static_cast<float>((i + static_cast<std::size_t>(rank)) % 5); }

float combine(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::kMax: return std::max(a, b);
    case ReduceOp::kMin: return std::min(a, b);
    default: return a + b;
  }
}

// The exact reduction of element i of every rank's pattern.
float reduced(ReduceOp op, std::size_t i, int p) {
  float v = pattern(i, 0);
  for (int r = 1; r < p; ++r) v = combine(op, v, pattern(i, r));
  return v;
}

// The link a flat algorithm over all ranks crosses: between hosts when there are several.
alphabeta::LinkParams flatLink(const BenchOptions& o) { return o.inter ? *o.inter : o.intra; }

AllreduceAlgorithm allreduceAlgorithm(const std::string& name) {
  for (auto a : {AllreduceAlgorithm::kAuto, AllreduceAlgorithm::kRing, AllreduceAlgorithm::kRecursiveDoubling,
                 AllreduceAlgorithm::kRabenseifner, AllreduceAlgorithm::kHierarchical, AllreduceAlgorithm::kBuiltin}) {
    if (name == algorithmName(a)) return a;
  }
  throw ConfigError(fmt::format("bench: unknown allreduce algorithm '{}' (expected one of: {})", name,
                                fmt::join(benchAlgorithms("allreduce"), ", ")));
}

double allreduceModel(AllreduceAlgorithm a, int p, double m, const BenchOptions& o) {
  const alphabeta::LinkParams l = flatLink(o);
  switch (a) {
    case AllreduceAlgorithm::kRing: return alphabeta::ringAllreduce(p, m, l);
    case AllreduceAlgorithm::kRecursiveDoubling: return alphabeta::recursiveDoublingAllreduce(p, m, l);
    case AllreduceAlgorithm::kRabenseifner: return alphabeta::rabenseifnerAllreduce(p, m, l);
    case AllreduceAlgorithm::kHierarchical:
      if (o.hierarchy != nullptr) {
        // The L local ranks' shards cross the host's one link at the same time: L flows share it.
        alphabeta::LinkParams shared = l;
        shared.beta *= o.hierarchy->localSize();
        return alphabeta::hierarchicalAllreduce(o.hierarchy->localSize(), o.hierarchy->groups(), m, o.intra, shared);
      }
      return alphabeta::ringAllreduce(p, m, l);
    default: return alphabeta::bestFlatAllreduce(p, m, l).seconds;  // auto, and the best MPI could do
  }
}

Case allreduceCase(const Communicator& comm, const std::string& algorithm, std::size_t count, const BenchOptions& o) {
  const int p = comm.size();
  Case c;
  c.send.resize(count);
  c.recv.resize(count);
  c.expected.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    c.send[i] = pattern(i, comm.rank());
    c.expected[i] = reduced(o.op, i, p);
  }
  AllreduceOptions options{.algorithm = allreduceAlgorithm(algorithm), .op = o.op, .segmentBytes = o.segmentBytes,
                           .hierarchy = o.hierarchy, .profile = o.intra, .crossProfile = o.inter};
  c.call = [&comm, count, options](Case& k) {
    allreduce(comm, k.send.data(), k.recv.data(), count, DataType::kF32, options);
  };
  c.resetPlace = [](Case& k) { k.place = k.send; };
  c.callInPlace = [&comm, count, options](Case& k) {
    allreduce(comm, k.place.data(), k.place.data(), count, DataType::kF32, options);
  };
  c.busFactor = p > 1 ? 2.0 * (p - 1) / p : 1;
  c.modelSeconds = allreduceModel(options.algorithm, p, static_cast<double>(count * sizeof(float)), o);
  return c;
}

// `total`: the gathered count, spread over the ranks. In place: this rank's block already at
// its place in the output (nccl-tests' layout).
Case allgatherCase(const Communicator& comm, bool builtin, std::size_t total, const BenchOptions& o) {
  const int p = comm.size();
  const std::size_t count = std::max<std::size_t>(1, total / p);
  Case c;
  c.send.resize(count);
  c.recv.resize(count * p);
  for (std::size_t i = 0; i < count; ++i) c.send[i] = pattern(i, comm.rank());
  for (int r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < count; ++i) c.expected.push_back(pattern(i, r));
  }
  const AllgatherOptions options{.algorithm = builtin ? GatherAlgorithm::kBuiltin : GatherAlgorithm::kRing};
  c.call = [&comm, count, options](Case& k) {
    allgather(comm, k.send.data(), k.recv.data(), count, DataType::kF32, options);
  };
  const std::size_t mine = count * comm.rank();
  c.resetPlace = [count, p, mine](Case& k) {
    k.place.assign(count * p, -1.0F);
    std::copy(k.send.begin(), k.send.end(), k.place.begin() + static_cast<std::ptrdiff_t>(mine));
  };
  c.callInPlace = [&comm, count, options, mine](Case& k) {
    allgather(comm, k.place.data() + mine, k.place.data(), count, DataType::kF32, options);
  };
  c.busFactor = static_cast<double>(p - 1) / p;
  c.bytes = count * p * sizeof(float);
  c.modelSeconds = alphabeta::ringAllgather(p, static_cast<double>(c.bytes), flatLink(o));
  return c;
}

// `total`: the input count, spread over the ranks. In place: the result lands on this rank's
// block of the input (nccl-tests' layout).
Case reduceScatterCase(const Communicator& comm, bool builtin, std::size_t total, const BenchOptions& o) {
  const int p = comm.size();
  const int me = comm.rank();
  const std::size_t count = std::max<std::size_t>(1, total / p);
  Case c;
  c.send.resize(count * p);
  c.recv.resize(count);
  c.expected.resize(count);
  for (std::size_t i = 0; i < count * p; ++i) c.send[i] = pattern(i, me);
  for (std::size_t i = 0; i < count; ++i) c.expected[i] = reduced(o.op, me * count + i, p);
  const ReduceScatterOptions options{.algorithm = builtin ? GatherAlgorithm::kBuiltin : GatherAlgorithm::kRing,
                                     .op = o.op};
  c.call = [&comm, count, options](Case& k) {
    reduceScatter(comm, k.send.data(), k.recv.data(), count, DataType::kF32, options);
  };
  c.placeResult = count * me;
  c.resetPlace = [](Case& k) { k.place = k.send; };
  c.callInPlace = [&comm, count, options](Case& k) {
    reduceScatter(comm, k.place.data(), k.place.data() + k.placeResult, count, DataType::kF32, options);
  };
  c.busFactor = static_cast<double>(p - 1) / p;
  c.bytes = count * p * sizeof(float);
  c.modelSeconds = alphabeta::ringReduceScatter(p, static_cast<double>(c.bytes), flatLink(o));
  return c;
}

// Out of place, the root first copies its input into the buffer broadcast; in place it does not.
Case broadcastCase(const Communicator& comm, bool builtin, std::size_t count, const BenchOptions& o) {
  Case c;
  c.recv.resize(count);
  c.expected.resize(count);
  for (std::size_t i = 0; i < count; ++i) c.expected[i] = pattern(i, o.root);
  const bool root = comm.rank() == o.root;
  if (root) c.send = c.expected;
  const BroadcastOptions options{.algorithm = builtin ? BroadcastAlgorithm::kBuiltin : BroadcastAlgorithm::kBinomialTree,
                                 .root = o.root};
  c.call = [&comm, count, options, root](Case& k) {
    if (root) std::copy(k.send.begin(), k.send.end(), k.recv.begin());
    broadcast(comm, k.recv.data(), count, DataType::kF32, options);
  };
  c.resetPlace = [count, root](Case& k) { k.place = root ? k.send : std::vector<float>(count, -1.0F); };
  c.callInPlace = [&comm, count, options](Case& k) { broadcast(comm, k.place.data(), count, DataType::kF32, options); };
  c.modelSeconds = alphabeta::binomialBroadcast(comm.size(), static_cast<double>(count * sizeof(float)), flatLink(o));
  return c;
}

// `total`: the elements each rank sends, in p equal blocks.
Case alltoallCase(const Communicator& comm, bool builtin, std::size_t total, const BenchOptions& o) {
  const int p = comm.size();
  const std::size_t block = std::max<std::size_t>(1, total / p);
  Case c;
  c.send.resize(block * p);
  c.recv.resize(block * p);
  for (int r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < block; ++i) c.send[r * block + i] = pattern(i + r, comm.rank());
  }
  for (int r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < block; ++i) c.expected.push_back(pattern(i + comm.rank(), r));
  }
  const AlltoallOptions options{.algorithm = builtin ? AlltoallAlgorithm::kBuiltin : AlltoallAlgorithm::kPairwise};
  c.call = [&comm, block, options, p](Case& k) {
    std::vector<std::size_t> counts(p, block);
    std::vector<std::size_t> displs(p);
    for (int r = 0; r < p; ++r) displs[r] = r * block;
    alltoallv(comm, k.send.data(), counts, displs, k.recv.data(), counts, displs, DataType::kF32, options);
  };
  c.busFactor = static_cast<double>(p - 1) / p;
  c.bytes = block * p * sizeof(float);
  c.modelSeconds = alphabeta::pairwiseAlltoall(p, static_cast<double>(c.bytes), flatLink(o));
  return c;
}

Case makeCase(const Communicator& comm, const std::string& op, const std::string& algorithm, std::size_t count,
              const BenchOptions& o) {
  const bool builtin = algorithm == "mpi";
  Case c;
  if (op == "allreduce") {
    c = allreduceCase(comm, algorithm, count, o);
  } else if (op == "allgather") {
    c = allgatherCase(comm, builtin, count, o);
  } else if (op == "reduce_scatter") {
    c = reduceScatterCase(comm, builtin, count, o);
  } else if (op == "broadcast") {
    c = broadcastCase(comm, builtin, count, o);
  } else if (op == "alltoall") {
    c = alltoallCase(comm, builtin, count, o);
  } else {
    throw ConfigError(fmt::format("bench: unknown operation '{}' (expected allreduce, allgather, reduce_scatter, "
                                  "broadcast or alltoall)", op));
  }
  if (c.bytes == 0) c.bytes = count * sizeof(float);
  return c;
}

int iterationsFor(std::size_t bytes, int requested) {
  if (requested > 0) return requested;
  return static_cast<int>(std::clamp<std::size_t>((64u << 20) / std::max<std::size_t>(bytes, 1), 3, 200));
}

}  // namespace

double slowestRank(const Communicator& comm, double seconds, double deadlineSeconds) {
  AllreduceOptions o;
  o.algorithm = AllreduceAlgorithm::kBuiltin;
  o.op = ReduceOp::kMax;
  o.deadlineSeconds = deadlineSeconds;
  double out = seconds;
  allreduce(comm, &seconds, &out, 1, DataType::kF64, o);
  return out;
}

double timeTrial(const Communicator& comm, int calls, const std::function<void()>& call, double deadlineSeconds) {
  barrier(comm, deadlineSeconds);
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) call();
  return slowestRank(comm, std::chrono::duration<double>(Clock::now() - start).count() / calls, deadlineSeconds);
}

double timeCollectively(const Communicator& comm, int calls, int trials, const std::function<void()>& call,
                        double deadlineSeconds) {
  call();  // warm-up: first touch of every buffer, connection set-up
  std::vector<double> times;
  for (int t = 0; t < std::max(1, trials); ++t) times.push_back(timeTrial(comm, calls, call, deadlineSeconds));
  return median(std::move(times));
}

std::vector<std::string> benchAlgorithms(const std::string& operation) {
  if (operation == "allreduce") return {"ring", "recursive_doubling", "rabenseifner", "hierarchical", "auto", "mpi"};
  if (operation == "broadcast") return {"binomial", "mpi"};
  if (operation == "alltoall") return {"pairwise", "mpi"};
  return {"ring", "mpi"};
}

namespace {

// Times `call` on `c` and checks the result it leaves: `result` (where it lands) against
// `expected`. `reset` puts the input back first: in-place calls overwrite it as they time.
BenchTiming measure(const Communicator& comm, Case& c, const BenchOptions& o, const std::function<void(Case&)>& call,
                    const std::function<void(Case&)>& reset, const std::function<const float*(Case&)>& result) {
  if (reset) reset(c);
  BenchTiming t;
  t.seconds = timeCollectively(comm, iterationsFor(c.bytes, o.iterations), o.trials, [&c, &call] { call(c); });
  t.algorithmBandwidth = static_cast<double>(c.bytes) / t.seconds;
  t.busBandwidth = t.algorithmBandwidth * c.busFactor;
  if (reset) {
    reset(c);
    call(c);
  }
  const float* got = result(c);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < c.expected.size(); ++i) wrong += got[i] != c.expected[i] ? 1 : 0;
  t.wrong = static_cast<std::size_t>(slowestRank(comm, static_cast<double>(wrong)));
  return t;
}

BenchRow measureRow(const Communicator& comm, const std::string& op, const std::string& algorithm, std::size_t bytes,
                    const BenchOptions& o) {
  const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
  Case c = makeCase(comm, op, algorithm, count, o);
  BenchRow row{.operation = op, .algorithm = algorithm, .bytes = c.bytes, .count = c.bytes / sizeof(float)};
  if (op == "allreduce" || op == "reduce_scatter") row.redop = std::string(opName(o.op));
  if (op == "broadcast") row.root = o.root;
  row.outOfPlace = measure(comm, c, o, c.call, {}, [](Case& k) { return k.recv.data(); });
  if (c.callInPlace) {
    row.inPlace = measure(comm, c, o, c.callInPlace, c.resetPlace, [](Case& k) { return k.place.data() + k.placeResult; });
  }
  row.modelSeconds = c.modelSeconds;
  return row;
}

}  // namespace

std::vector<BenchRow> runCommBench(const Communicator& comm, const BenchOptions& o,
                                   const std::function<void(const BenchRow&)>& progress) {
  if (o.stepFactor < 1) throw ConfigError("bench: the step factor must be at least 1");
  if (o.root < 0 || o.root >= comm.size()) {
    throw ConfigError(fmt::format("bench: root {} is not a rank of this {}-rank job", o.root, comm.size()));
  }
  std::vector<BenchRow> rows;
  for (const std::string& op : o.operations) {
    std::vector<std::string> algorithms = o.algorithms.empty() ? benchAlgorithms(op) : o.algorithms;
    if (op == "allreduce" && o.hierarchy == nullptr) std::erase(algorithms, "hierarchical");
    for (const std::string& algorithm : algorithms) {
      for (std::size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= o.stepFactor) {
        rows.push_back(measureRow(comm, op, algorithm, bytes, o));
        if (progress) progress(rows.back());
        if (o.stepFactor < 2) break;
      }
    }
  }
  return rows;
}

double averageBusBandwidth(const std::vector<BenchRow>& rows) {
  double sum = 0;
  int n = 0;
  for (const BenchRow& r : rows) {
    sum += r.outOfPlace.busBandwidth;
    ++n;
    if (r.inPlace) {
      sum += r.inPlace->busBandwidth;
      ++n;
    }
  }
  return n > 0 ? sum / n : 0;
}

}  // namespace paraxis::comm
