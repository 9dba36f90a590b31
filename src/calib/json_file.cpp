#include "calib/json_file.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace paraxis::calib {

nlohmann::json parseJsonFile(std::istream& in, const std::string& path) {
  nlohmann::json document;
  try {
    in >> document;
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(fmt::format("{}: not JSON: {}", path, e.what()));
  }
  return document;
}

}  // namespace paraxis::calib
