#pragma once
// Element types and reduction operations of the communication runtime.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace paraxis::comm {

enum class DataType { kF32, kF64, kF16, kBF16, kI32, kI64, kU64 };
enum class ReduceOp { kSum, kMax, kMin, kBitAnd, kBitOr };

std::size_t elementSize(DataType type);
std::string_view typeName(DataType type);
std::string_view opName(ReduceOp op);
bool isFloating(DataType type);

// acc[i] = acc[i] op in[i] for `count` elements. f16/bf16 accumulate through f32 per element.
// Bitwise operations on floating types are rejected with a ConfigError.
void reduceInto(void* acc, const void* in, std::size_t count, DataType type, ReduceOp op);

// Throws ConfigError when `op` is not defined on `type` (bitwise ops on floats).
void requireDefined(DataType type, ReduceOp op);

}  // namespace paraxis::comm
