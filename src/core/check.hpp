#pragma once
// Invariant checks that print both operands and the source location on failure.
// Use them for conditions that only a bug can break; user input is validated with a
// ConfigError (or another paraxis::Error) that names the input instead.
#include <source_location>
#include <sstream>
#include <string_view>

#include "core/error.hpp"

namespace paraxis {
namespace detail {

[[noreturn]] void failCheck(std::string_view what, const std::string& detail,
                            const std::source_location& where);

template <typename A, typename B>
std::string describeOperands(const A& a, const B& b) {
  std::ostringstream out;
  out << "left = " << a << ", right = " << b;
  return out.str();
}

}  // namespace detail

inline void check(bool condition, std::string_view what,
                  const std::source_location& where = std::source_location::current()) {
  if (!condition) detail::failCheck(what, {}, where);
}

template <typename A, typename B>
void checkEq(const A& a, const B& b, std::string_view what,
             const std::source_location& where = std::source_location::current()) {
  if (!(a == b)) detail::failCheck(what, detail::describeOperands(a, b), where);
}

template <typename A, typename B>
void checkLe(const A& a, const B& b, std::string_view what,
             const std::source_location& where = std::source_location::current()) {
  if (!(a <= b)) detail::failCheck(what, detail::describeOperands(a, b), where);
}

}  // namespace paraxis
