#pragma once
// A device's matrix kernels' shape figures and efficiency curves (hw::KernelCurves) as `bench
// compute`, `calibrate --quick` and `clusters show` print them, one text and one JSON for all three.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hw/cluster.hpp"

namespace paraxis::cli {

// "conv2d 16 (16 at one sample), depth 64, strided calls at 80 %  fully_connected 2 ...": per
// kernel kind with a shape figure, the rows at which it runs at half its curve's rate and the
// rest of its shape; "" where none has one.
std::string kernelShapesText(const hw::Device& device);

// "  3.16 MFLOP 52%  31.6 MFLOP 78%": an efficiency curve's points, each after two spaces.
std::string efficiencyCurveText(const std::vector<hw::EfficiencyPoint>& curve);

// "fully_connected  3.16 kFLOP 0%  3.16 MFLOP 5%": per kernel kind with one, its native calls'
// forward curve (hw::KernelCurves::native); "" where none has one.
std::string nativeCurvesText(const hw::Device& device);

// Per kernel kind {half_rate_rows, one_sample_half_rate_rows, half_rate_depth,
// narrow_weight_depth, narrow_weight_share, resident_rows_share, strided_share, and its curves
// efficiency, backward_efficiency, native_efficiency [{flops, efficiency}] (empty: the next
// curve in hw::Device::efficiencyOf's order)}.
nlohmann::json kernelShapesJson(const hw::Device& device);

// A curve as [{flops, efficiency}].
nlohmann::json curveJson(const std::vector<hw::EfficiencyPoint>& points);

}  // namespace paraxis::cli
