#include "core/check.hpp"

#include <fmt/format.h>

namespace paraxis::detail {

void failCheck(std::string_view what, const std::string& detail,
               const std::source_location& where) {
  std::string message = fmt::format("internal check failed: {} at {}:{} in {}", what,
                                    where.file_name(), where.line(), where.function_name());
  if (!detail.empty()) message += fmt::format(" ({})", detail);
  throw InternalError(message);
}

}  // namespace paraxis::detail
