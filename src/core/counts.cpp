#include "core/counts.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace paraxis {
namespace {

std::int64_t inDomain(bool wrapped, std::int64_t value, std::int64_t a, std::int64_t b, const char* op) {
  if (wrapped || value > kCountLimit || value < -kCountLimit) {
    throw OverflowError(fmt::format("{} {} {} exceeds 2^53, the largest count paraxis handles", a, op, b));
  }
  return value;
}

}  // namespace

std::int64_t countProduct(std::int64_t a, std::int64_t b) {
  std::int64_t value = 0;
  const bool wrapped = __builtin_mul_overflow(a, b, &value);
  return inDomain(wrapped, value, a, b, "x");
}

std::int64_t countSum(std::int64_t a, std::int64_t b) {
  std::int64_t value = 0;
  const bool wrapped = __builtin_add_overflow(a, b, &value);
  return inDomain(wrapped, value, a, b, "+");
}

}  // namespace paraxis
