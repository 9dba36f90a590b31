#pragma once
// IEEE binary16 and bfloat16 conversions (round to nearest even), for fp16/bf16 on the wire.
// The scalar reference of comm/convert: NaNs are quieted and keep their top payload bits the
// way x86's F16C instructions do, so that every path (and every rank) gives the same bits.
#include <bit>
#include <cstdint>
#include <cmath>

namespace paraxis::comm {

inline std::uint16_t floatToBf16(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffU) > 0x7f800000U) return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // NaN
  const std::uint32_t rounding = 0x7fffU + ((bits >> 16) & 1U);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

inline float bf16ToFloat(std::uint16_t value) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(value) << 16);
}

inline std::uint16_t floatToHalf(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000U;
  std::uint32_t magnitude = bits & 0x7fffffffU;
  if (magnitude >= 0x7f800000U) {  // inf or NaN
    if (magnitude == 0x7f800000U) return static_cast<std::uint16_t>(sign | 0x7c00U);
    return static_cast<std::uint16_t>(sign | 0x7e00U | ((magnitude & 0x7fffffU) >> 13));
  }
  if (magnitude >= 0x477ff000U) return static_cast<std::uint16_t>(sign | 0x7c00U);  // overflow
  if (magnitude < 0x38800000U) {  // subnormal or zero in half
    const float scaled = std::bit_cast<float>(magnitude) * 16777216.0F;  // x 2^24
    const auto rounded = static_cast<std::uint32_t>(std::nearbyint(scaled));
    return static_cast<std::uint16_t>(sign | rounded);
  }
  const std::uint32_t rounding = 0xfffU + ((magnitude >> 13) & 1U);
  magnitude = magnitude - 0x38000000U + rounding;  // rebias exponent 127 -> 15
  return static_cast<std::uint16_t>(sign | (magnitude >> 13));
}

inline float halfToFloat(std::uint16_t value) {
  const std::uint32_t sign = static_cast<std::uint32_t>(value & 0x8000U) << 16;
  const std::uint32_t exponent = (value >> 10) & 0x1fU;
  const std::uint32_t mantissa = value & 0x3ffU;
  if (exponent == 0) {
    const float subnormal = static_cast<float>(mantissa) / 16777216.0F;  // x 2^-24
    return sign != 0 ? -subnormal : subnormal;
  }
  if (exponent == 0x1f) {
    const std::uint32_t quiet = mantissa != 0 ? 0x400000U : 0U;
    return std::bit_cast<float>(sign | 0x7f800000U | quiet | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 112U) << 23) | (mantissa << 13));
}

}  // namespace paraxis::comm
