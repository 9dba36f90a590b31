#pragma once
#include <nlohmann/json.hpp>

#include "cli/context.hpp"

namespace paraxis::cli {

// Prints `value` with the json_indent knob and a final newline.
// The document as text (newline-terminated); InternalError when a number in it is not finite.
std::string jsonText(const nlohmann::json& value, int indent = 2);
void printJson(const nlohmann::json& value, Context& context);

}  // namespace paraxis::cli
