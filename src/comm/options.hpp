#pragma once
// One options struct per operation (STYLE.md practice 2): new knobs become fields.
#include <cstddef>
#include <functional>
#include <optional>

#include "comm/types.hpp"
#include "alphabeta/collective_cost.hpp"

namespace paraxis::comm {

class Hierarchy;

enum class AllreduceAlgorithm { kAuto, kRing, kRecursiveDoubling, kRabenseifner, kHierarchical, kBuiltin };

struct AllreduceOptions {
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::kAuto;
  ReduceOp op = ReduceOp::kSum;
  // Element type on the wire for f32 data (f16 or bf16); accumulation stays in f32.
  std::optional<DataType> wire;
  // Every input is multiplied by this before the reduction (against fp16 overflow, or to
  // average: 1/p).
  float prescale = 1.0F;
  // Ring steps move their chunk in segments of this size, reducing one segment while the
  // next is in flight.
  std::size_t segmentBytes = 256 * 1024;
  // Hosts of the ranks, for kHierarchical (and kAuto, which considers it when given).
  const Hierarchy* hierarchy = nullptr;
  // α, β, γ that kAuto feeds into the cost model; a calibrated profile replaces the default.
  alphabeta::LinkParams profile{2e-6, 1.0 / 4e9, 1.0 / 8e9};
  // α, β, γ between hosts; kAuto considers kHierarchical only when this and `hierarchy` are set.
  std::optional<alphabeta::LinkParams> crossProfile;
  double deadlineSeconds = 0;  // 0: the communicator's default
  // Run on the communication thread just before the operation reads its input and just after
  // it has written its result: data that lives in device memory is staged through the host
  // buffers the call is given (the gradient engine's GPU buffers). Empty: the buffers are the data.
  std::function<void()> beforeRead, afterWrite;
};

enum class GatherAlgorithm { kRing, kBuiltin };

struct AllgatherOptions {
  GatherAlgorithm algorithm = GatherAlgorithm::kRing;
  double deadlineSeconds = 0;
};

struct ReduceScatterOptions {
  GatherAlgorithm algorithm = GatherAlgorithm::kRing;
  ReduceOp op = ReduceOp::kSum;
  double deadlineSeconds = 0;
};

enum class BroadcastAlgorithm { kBinomialTree, kBuiltin };

struct BroadcastOptions {
  BroadcastAlgorithm algorithm = BroadcastAlgorithm::kBinomialTree;
  int root = 0;
  double deadlineSeconds = 0;
};

enum class AlltoallAlgorithm { kPairwise, kBuiltin };

struct AlltoallOptions {
  AlltoallAlgorithm algorithm = AlltoallAlgorithm::kPairwise;
  double deadlineSeconds = 0;
};

struct PointToPointOptions {
  int tag = 0;
  double deadlineSeconds = 0;
};

}  // namespace paraxis::comm
