#pragma once
// The median of timed trials: the upper middle of an even count (one slow trial, a neighbour's
// burst on a shared machine, moves it less than it moves a mean).
#include <algorithm>
#include <vector>

namespace paraxis {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace paraxis
