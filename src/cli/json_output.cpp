#include "cli/json_output.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ostream>

#include "core/error.hpp"

namespace paraxis::cli {
namespace {

// JSON has no nan or inf (nlohmann would print null): one reaching the output is a bug.
void requireFinite(const nlohmann::json& value, const std::string& path) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    throw InternalError(fmt::format("a non-finite value reached the JSON output at '{}'", path));
  }
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) requireFinite(child, path + "." + key);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) requireFinite(value[i], fmt::format("{}[{}]", path, i));
  }
}

}  // namespace

std::string jsonText(const nlohmann::json& value, int indent) {
  requireFinite(value, "");
  return value.dump(indent) + "\n";
}

void printJson(const nlohmann::json& value, Context& context) {
  const auto indent = static_cast<int>(context.knobs.getInt("json_indent"));
  context.out << jsonText(value, indent);
}

}  // namespace paraxis::cli
