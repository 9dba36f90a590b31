#include "graph/tensor_shape.hpp"

#include "core/counts.hpp"

namespace paraxis::graph {

std::int64_t TensorShape::spatialElements() const {
  std::int64_t n = 1;
  for (std::int64_t extent : spatial) n = countProduct(n, extent);
  return n;
}

std::int64_t TensorShape::elements() const { return countProduct(channels, spatialElements()); }

std::string TensorShape::str() const {
  std::string out = std::to_string(channels);
  for (std::int64_t extent : spatial) {
    // Appended in two steps: GCC 12 misreads "x" + std::string&& as an overlapping memcpy (-Wrestrict).
    out += 'x';
    out += std::to_string(extent);
  }
  return out;
}

}  // namespace paraxis::graph
