#include "cli/kernel_shapes.hpp"

#include <fmt/format.h>

namespace paraxis::cli {

std::string kernelShapesText(const hw::Device& device) {
  std::string text;
  for (int k = 0; k < hw::kKernels; ++k) {
    const hw::KernelCurves& c = device.kernels[k];
    const bool anyShape = c.halfRateRows > 0 || c.oneSampleHalfRateRows > 0 || c.halfRateDepth > 0 ||
                          c.weightPassDiffers() || c.residentRowsShare < 1 || c.stridedShare < 1;
    if (!anyShape) continue;
    text += fmt::format("{}{} {:g}", text.empty() ? "" : "  ", hw::kKernelKeys[k], c.halfRateRows);
    if (c.oneSampleHalfRateRows >= 0) text += fmt::format(" ({:g} at one sample)", c.oneSampleHalfRateRows);
    if (c.residentRowsShare < 1) {
      text += fmt::format(", {:.0f} % of them with its weights in the cache", c.residentRowsShare * 100);
    }
    if (c.halfRateDepth > 0) text += fmt::format(", depth {:g}", c.halfRateDepth);
    if (c.weightPassDiffers()) {
      text += fmt::format(", weight pass at {:.0f} % under {:g} weights a filter", c.narrowWeightShare * 100,
                          c.narrowWeightDepth);
    }
    if (c.stridedShare < 1) text += fmt::format(", strided calls at {:.0f} %", c.stridedShare * 100);
  }
  return text;
}

nlohmann::json kernelShapesJson(const hw::Device& device) {
  nlohmann::json kernels;
  for (int k = 0; k < hw::kKernels; ++k) {
    const hw::KernelCurves& c = device.kernels[k];
    kernels[hw::kKernelKeys[k]] = {{"half_rate_rows", c.halfRateRows},
                                   {"one_sample_half_rate_rows", c.oneSampleHalfRateRows},
                                   {"half_rate_depth", c.halfRateDepth},
                                   {"narrow_weight_depth", c.narrowWeightDepth},
                                   {"narrow_weight_share", c.narrowWeightShare},
                                   {"resident_rows_share", c.residentRowsShare},
                                   {"strided_share", c.stridedShare}};
  }
  return kernels;
}

}  // namespace paraxis::cli
