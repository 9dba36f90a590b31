#pragma once
// Configurations as "key=value" lines (one per line): compared to name the first key whose
// value differs, for the ranks' agreement and a checkpoint's resume check.
#include <optional>
#include <string>

namespace paraxis {

struct LineDifference {
  std::string key;
  std::string first;   // the value in the first text, or "(not given)"
  std::string second;  // in the second
};

// The first key (in the first text's order, then the second's) whose values differ.
std::optional<LineDifference> firstDifference(const std::string& first, const std::string& second);

}  // namespace paraxis
