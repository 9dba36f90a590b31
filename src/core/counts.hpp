#pragma once
// Counts (tensor elements, parameters, bytes) are 64-bit integers with a domain: up to
// kCountLimit = 2^53, where doubles (the cost models' arithmetic) stop being exact. A product
// or sum beyond it throws OverflowError instead of wrapping into negative sizes.
// Integers read from files and options stay below kInputLimit = 2^31, so that the product of
// any two never wraps before it is checked.
#include <cstdint>

namespace paraxis {

inline constexpr std::int64_t kCountLimit = std::int64_t{1} << 53;
inline constexpr std::int64_t kInputLimit = std::int64_t{1} << 31;

// a * b and a + b for counts in [0, kCountLimit]; OverflowError beyond.
std::int64_t countProduct(std::int64_t a, std::int64_t b);
std::int64_t countSum(std::int64_t a, std::int64_t b);

}  // namespace paraxis
