#include "comm/allreduce.hpp"

#include <fmt/format.h>

#include <cstring>

#include "comm/comm_state.hpp"
#include "comm/hierarchy.hpp"
#include "comm/ring.hpp"
#include "core/error.hpp"

namespace paraxis::comm {
namespace {

using detail::Chunks;
using detail::Wire;

DataType wireOf(DataType type, const AllreduceOptions& o) {
  if (!o.wire || *o.wire == type) return type;
  if (type != DataType::kF32 || (*o.wire != DataType::kF16 && *o.wire != DataType::kBF16)) {
    throw ConfigError(fmt::format("allreduce: {} on the wire needs f32 data and f16 or bf16 wire, found {} data",
                                  typeName(*o.wire), typeName(type)));
  }
  if (o.op == ReduceOp::kBitAnd || o.op == ReduceOp::kBitOr) throw ConfigError("allreduce: bitwise ops cannot be compressed");
  return *o.wire;
}

void validate(const Communicator& comm, DataType type, const AllreduceOptions& o) {
  requireDefined(type, o.op);
  wireOf(type, o);
  if (o.prescale != 1.0F && type != DataType::kF32) {
    throw ConfigError(fmt::format("allreduce: prescale applies to f32 data, found {}", typeName(type)));
  }
  if (o.algorithm == AllreduceAlgorithm::kHierarchical) {
    if (o.hierarchy == nullptr) throw ConfigError("allreduce: the hierarchical algorithm needs a Hierarchy");
    if (!o.hierarchy->uniform()) {
      throw ConfigError("allreduce: the hierarchical algorithm needs the same number of ranks on every host");
    }
    if (o.hierarchy->localSize() * o.hierarchy->groups() != comm.size()) {
      throw ConfigError("allreduce: the Hierarchy was built for another communicator");
    }
  }
  if (o.algorithm == AllreduceAlgorithm::kBuiltin && wireOf(type, o) != type) {
    throw ConfigError("allreduce: MPI's built-in allreduce cannot compress the wire");
  }
}

// Copies send into recv (unless in place) and applies the prescale.
void prepare(const void* send, void* recv, std::size_t count, DataType type, float prescale) {
  if (send != recv && count > 0) std::memcpy(recv, send, count * elementSize(type));
  if (prescale != 1.0F) {
    auto* data = static_cast<float*>(recv);
    for (std::size_t i = 0; i < count; ++i) data[i] *= prescale;
  }
}

void runFlat(OpContext& context, AllreduceAlgorithm algorithm, std::byte* acc, std::size_t count, DataType type,
             const AllreduceOptions& o) {
  Wire wire(context, type, wireOf(type, o), o.op, o.segmentBytes);
  switch (algorithm) {
    case AllreduceAlgorithm::kRing: {
      const Chunks chunks(count, context.size());
      detail::ringReduceScatter(context, wire, acc, chunks);
      wire.roundOwned(acc, chunks.begin(context.rank()), chunks.count(context.rank()));
      detail::ringAllgather(context, wire, acc, chunks);
      break;
    }
    case AllreduceAlgorithm::kRecursiveDoubling: detail::recursiveDoubling(context, wire, acc, count); break;
    case AllreduceAlgorithm::kRabenseifner: detail::rabenseifner(context, wire, acc, count); break;
    default: throw InternalError("runFlat: not a flat algorithm");
  }
}

void runBuiltin(OpContext& context, std::byte* acc, std::size_t count, DataType type, ReduceOp op) {
  BuiltinCall call;
  call.kind = BuiltinCall::Kind::kAllreduce;
  call.send = acc;
  call.recv = acc;
  call.count = count;
  call.type = type;
  call.op = op;
  Request request = context.transport().ibuiltin(call);
  context.wait(request);
}

// Reduce-scatter inside the host, allreduce of the shard across hosts, allgather inside.
void runHierarchical(std::byte* acc, std::size_t count, DataType type, const AllreduceOptions& o) {
  const Hierarchy& h = *o.hierarchy;
  const Chunks chunks(count, h.localSize());
  const int me = h.local().rank();
  const std::size_t bytes = count * elementSize(type);
  const CallInfo inside{.op = Operation::kReduceScatter, .type = type, .count = count, .bytes = bytes,
                        .deadlineSeconds = o.deadlineSeconds, .algorithm = "ring"};
  h.local().state().run(inside, [&](OpContext& context) {
    Wire wire(context, type, wireOf(type, o), o.op, o.segmentBytes);
    detail::ringReduceScatter(context, wire, acc, chunks);
  });
  std::byte* shard = acc + chunks.begin(me) * elementSize(type);
  AllreduceOptions across = o;
  across.algorithm = AllreduceAlgorithm::kRing;
  across.hierarchy = nullptr;
  across.prescale = 1.0F;
  across.beforeRead = {};  // the whole buffer is staged once, around this call
  across.afterWrite = {};
  allreduce(h.cross(), shard, shard, chunks.count(me), type, across);
  const CallInfo gather{.op = Operation::kAllgather, .type = type, .count = count, .bytes = bytes,
                        .deadlineSeconds = o.deadlineSeconds, .algorithm = "ring"};
  h.local().state().run(gather, [&](OpContext& context) {
    Wire wire(context, type, wireOf(type, o), o.op, o.segmentBytes);
    wire.roundOwned(acc, chunks.begin(me), chunks.count(me));
    detail::ringAllgather(context, wire, acc, chunks);
  });
}

CallInfo callInfo(const Communicator& comm, std::size_t count, DataType type, const AllreduceOptions& o) {
  const std::size_t bytes = count * elementSize(type);
  return {.op = Operation::kAllreduce, .type = type, .count = count, .bytes = bytes,
          .deadlineSeconds = o.deadlineSeconds, .algorithm = algorithmName(chooseAllreduce(comm, bytes, o))};
}

detail::OpFunction reduction(const void* send, void* recv, std::size_t count, DataType type,
                             const AllreduceOptions& o) {
  return [=](OpContext& context) {
    prepare(send, recv, count, type, o.prescale);
    if (count == 0 || context.size() == 1) {
      Wire(context, type, wireOf(type, o), o.op, o.segmentBytes).roundOwned(static_cast<std::byte*>(recv), 0, count);
      return;
    }
    auto* acc = static_cast<std::byte*>(recv);
    const AllreduceAlgorithm algorithm = chooseAllreduce(context.size(), count * elementSize(type), o);
    if (algorithm == AllreduceAlgorithm::kBuiltin) {
      runBuiltin(context, acc, count, type, o.op);
    } else if (algorithm == AllreduceAlgorithm::kHierarchical) {
      runHierarchical(acc, count, type, o);
    } else {
      runFlat(context, algorithm, acc, count, type, o);
    }
  };
}

detail::OpFunction body(const void* send, void* recv, std::size_t count, DataType type,
                        const AllreduceOptions& o) {
  detail::OpFunction run = reduction(send, recv, count, type, o);
  if (!o.beforeRead && !o.afterWrite) return run;
  return [run = std::move(run), before = o.beforeRead, after = o.afterWrite](OpContext& context) {
    if (before) before();
    run(context);
    if (after) after();
  };
}

}  // namespace

const char* algorithmName(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::kAuto: return "auto";
    case AllreduceAlgorithm::kRing: return "ring";
    case AllreduceAlgorithm::kRecursiveDoubling: return "recursive_doubling";
    case AllreduceAlgorithm::kRabenseifner: return "rabenseifner";
    case AllreduceAlgorithm::kHierarchical: return "hierarchical";
    case AllreduceAlgorithm::kBuiltin: return "mpi";
  }
  return "?";
}

AllreduceAlgorithm chooseAllreduce(const Communicator& comm, std::size_t bytes, const AllreduceOptions& o) {
  return chooseAllreduce(comm.size(), bytes, o);
}

AllreduceAlgorithm chooseAllreduce(int ranks, std::size_t bytes, const AllreduceOptions& o) {
  if (o.algorithm != AllreduceAlgorithm::kAuto) return o.algorithm;
  const auto m = static_cast<double>(bytes);
  const alphabeta::AllreduceEstimate flat = alphabeta::bestFlatAllreduce(ranks, m, o.profile);
  if (o.hierarchy != nullptr && o.crossProfile && o.hierarchy->uniform() && o.hierarchy->localSize() > 1 &&
      o.hierarchy->groups() > 1) {
    const double twoLevel =
        alphabeta::hierarchicalAllreduce(o.hierarchy->localSize(), o.hierarchy->groups(), m, o.profile, *o.crossProfile);
    const double flatCross = alphabeta::bestFlatAllreduce(ranks, m, *o.crossProfile).seconds;
    if (twoLevel < flatCross) return AllreduceAlgorithm::kHierarchical;
  }
  switch (flat.algorithm) {
    case alphabeta::AllreduceChoice::kRecursiveDoubling: return AllreduceAlgorithm::kRecursiveDoubling;
    case alphabeta::AllreduceChoice::kRabenseifner: return AllreduceAlgorithm::kRabenseifner;
    default: return AllreduceAlgorithm::kRing;
  }
}

void allreduce(const Communicator& comm, const void* send, void* recv, std::size_t count, DataType type,
               const AllreduceOptions& options) {
  validate(comm, type, options);
  comm.state().run(callInfo(comm, count, type, options), body(send, recv, count, type, options));
}

Work iallreduce(const Communicator& comm, const void* send, void* recv, std::size_t count, DataType type,
                const AllreduceOptions& options) {
  validate(comm, type, options);
  return comm.state().submit(callInfo(comm, count, type, options), body(send, recv, count, type, options));
}

}  // namespace paraxis::comm
