#include "cli/json_output.hpp"

#include <ostream>

namespace paraxis::cli {

void printJson(const nlohmann::json& value, Context& context) {
  const auto indent = static_cast<int>(context.knobs.getInt("json_indent"));
  context.out << value.dump(indent) << '\n';
}

}  // namespace paraxis::cli
