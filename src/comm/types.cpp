#include "comm/types.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "comm/half.hpp"
#include "core/error.hpp"

namespace paraxis::comm {
namespace {

template <typename T>
void apply(T* acc, const T* in, std::size_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      for (std::size_t i = 0; i < n; ++i) acc[i] += in[i];
      break;
    case ReduceOp::kMax:
      for (std::size_t i = 0; i < n; ++i) acc[i] = std::max(acc[i], in[i]);
      break;
    case ReduceOp::kMin:
      for (std::size_t i = 0; i < n; ++i) acc[i] = std::min(acc[i], in[i]);
      break;
    case ReduceOp::kBitAnd:
      if constexpr (std::is_integral_v<T>) {
        for (std::size_t i = 0; i < n; ++i) acc[i] &= in[i];
      }
      break;
    case ReduceOp::kBitOr:
      if constexpr (std::is_integral_v<T>) {
        for (std::size_t i = 0; i < n; ++i) acc[i] |= in[i];
      }
      break;
  }
}

template <float (*ToFloat)(std::uint16_t), std::uint16_t (*FromFloat)(float)>
void applyHalf(std::uint16_t* acc, const std::uint16_t* in, std::size_t n, ReduceOp op) {
  for (std::size_t i = 0; i < n; ++i) {
    float a = ToFloat(acc[i]);
    const float b = ToFloat(in[i]);
    a = op == ReduceOp::kSum ? a + b : op == ReduceOp::kMax ? std::max(a, b) : std::min(a, b);
    acc[i] = FromFloat(a);
  }
}

}  // namespace

std::size_t elementSize(DataType type) {
  switch (type) {
    case DataType::kF16:
    case DataType::kBF16: return 2;
    case DataType::kF32:
    case DataType::kI32: return 4;
    case DataType::kF64:
    case DataType::kI64:
    case DataType::kU64: return 8;
  }
  return 0;
}

std::string_view typeName(DataType type) {
  switch (type) {
    case DataType::kF32: return "f32";
    case DataType::kF64: return "f64";
    case DataType::kF16: return "f16";
    case DataType::kBF16: return "bf16";
    case DataType::kI32: return "i32";
    case DataType::kI64: return "i64";
    case DataType::kU64: return "u64";
  }
  return "?";
}

std::string_view opName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kBitAnd: return "band";
    case ReduceOp::kBitOr: return "bor";
  }
  return "?";
}

bool isFloating(DataType type) {
  return type == DataType::kF32 || type == DataType::kF64 || type == DataType::kF16 ||
         type == DataType::kBF16;
}

void requireDefined(DataType type, ReduceOp op) {
  if (isFloating(type) && (op == ReduceOp::kBitAnd || op == ReduceOp::kBitOr)) {
    throw ConfigError(fmt::format("reduction '{}' is not defined on {} data", opName(op), typeName(type)));
  }
}

void reduceInto(void* acc, const void* in, std::size_t count, DataType type, ReduceOp op) {
  requireDefined(type, op);
  switch (type) {
    case DataType::kF32: apply(static_cast<float*>(acc), static_cast<const float*>(in), count, op); break;
    case DataType::kF64: apply(static_cast<double*>(acc), static_cast<const double*>(in), count, op); break;
    case DataType::kI32:
      apply(static_cast<std::int32_t*>(acc), static_cast<const std::int32_t*>(in), count, op);
      break;
    case DataType::kI64:
      apply(static_cast<std::int64_t*>(acc), static_cast<const std::int64_t*>(in), count, op);
      break;
    case DataType::kU64:
      apply(static_cast<std::uint64_t*>(acc), static_cast<const std::uint64_t*>(in), count, op);
      break;
    case DataType::kF16:
      applyHalf<halfToFloat, floatToHalf>(static_cast<std::uint16_t*>(acc),
                                          static_cast<const std::uint16_t*>(in), count, op);
      break;
    case DataType::kBF16:
      applyHalf<bf16ToFloat, floatToBf16>(static_cast<std::uint16_t*>(acc),
                                          static_cast<const std::uint16_t*>(in), count, op);
      break;
  }
}

}  // namespace paraxis::comm
