#include "core/option_lines.hpp"

#include <map>
#include <sstream>
#include <utility>
#include <vector>

namespace paraxis {
namespace {

using Lines = std::vector<std::pair<std::string, std::string>>;

Lines parse(const std::string& text) {
  Lines lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t equals = line.find('=');
    lines.emplace_back(line.substr(0, equals), equals == std::string::npos ? "" : line.substr(equals + 1));
  }
  return lines;
}

}  // namespace

std::optional<LineDifference> firstDifference(const std::string& first, const std::string& second) {
  const Lines a = parse(first);
  const Lines b = parse(second);
  std::map<std::string, std::string> inA(a.begin(), a.end());
  std::map<std::string, std::string> inB(b.begin(), b.end());
  const auto valueIn = [](const std::map<std::string, std::string>& values, const std::string& key) {
    const auto it = values.find(key);
    return it == values.end() ? std::string("(not given)") : it->second;
  };
  for (const Lines* lines : {&a, &b}) {
    for (const auto& [key, ignored] : *lines) {
      std::string x = valueIn(inA, key);
      std::string y = valueIn(inB, key);
      if (x != y) return LineDifference{key, std::move(x), std::move(y)};
    }
  }
  return std::nullopt;
}

}  // namespace paraxis
