#pragma once
// Reading the JSON files paraxis writes (train reports, traces, strategy files) back in.
#include <nlohmann/json.hpp>

#include <istream>
#include <string>

namespace paraxis::calib {

// The one JSON document in `in`, read from `path`: throws ConfigError "<path>: not JSON: ..."
// when it is not one. (Opening the file, and saying what could not be read, is the caller's.)
nlohmann::json parseJsonFile(std::istream& in, const std::string& path);

}  // namespace paraxis::calib
