#pragma once
#include <nlohmann/json.hpp>

#include "cli/context.hpp"

namespace paraxis::cli {

// Prints `value` with the json_indent knob and a final newline.
void printJson(const nlohmann::json& value, Context& context);

}  // namespace paraxis::cli
