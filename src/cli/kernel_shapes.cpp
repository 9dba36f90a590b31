#include "cli/kernel_shapes.hpp"

#include <fmt/format.h>

#include "core/units.hpp"

namespace paraxis::cli {

std::string kernelShapesText(const hw::Device& device) {
  std::string text;
  for (int k = 0; k < hw::kKernels; ++k) {
    const hw::KernelCurves& c = device.kernels[k];
    if (!hw::hasShape(c)) continue;
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

std::string efficiencyCurveText(const std::vector<hw::EfficiencyPoint>& curve) {
  std::string text;
  for (const hw::EfficiencyPoint& p : curve) {
    text += fmt::format("  {} {:.0f}%", units::formatFlops(p.flops), p.efficiency * 100);
  }
  return text;
}

std::string nativeCurvesText(const hw::Device& device) {
  std::string text;
  for (int k = 0; k < hw::kKernels; ++k) {
    const std::vector<hw::EfficiencyPoint>& curve = device.kernels[k].native;
    if (curve.empty()) continue;
    text += fmt::format("{}{}{}", text.empty() ? "" : "  ", hw::kKernelKeys[k], efficiencyCurveText(curve));
  }
  return text;
}

nlohmann::json curveJson(const std::vector<hw::EfficiencyPoint>& points) {
  nlohmann::json out = nlohmann::json::array();
  for (const hw::EfficiencyPoint& p : points)
    out.push_back({{"flops", p.flops}, {"efficiency", p.efficiency}});
  return out;
}

nlohmann::json kernelShapesJson(const hw::Device& device) {
  nlohmann::json kernels;
  for (int k = 0; k < hw::kKernels; ++k) {
    const hw::KernelCurves& c = device.kernels[k];
    nlohmann::json& figures = kernels[hw::kKernelKeys[k]];
    for (const hw::KernelFigure& f : hw::kKernelFigures) figures[f.key] = c.*f.member;
    figures["efficiency"] = curveJson(c.forward);
    figures["backward_efficiency"] = curveJson(c.backward);
    figures["native_efficiency"] = curveJson(c.native);
  }
  return kernels;
}

}  // namespace paraxis::cli
