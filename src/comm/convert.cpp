#include "comm/convert.hpp"

#include <fmt/format.h>

#include <atomic>

#include "comm/convert_kernels.hpp"
#include "comm/half.hpp"
#include "core/error.hpp"

namespace paraxis::comm {
namespace {

template <std::uint16_t (*FromFloat)(float)>
void encodeScalar(const float* in, std::size_t n, std::uint16_t* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = FromFloat(in[i]);
}

template <float (*ToFloat)(std::uint16_t)>
void decodeScalar(const std::uint16_t* in, std::size_t n, float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = ToFloat(in[i]);
}

template <float (*ToFloat)(std::uint16_t), std::uint16_t (*FromFloat)(float)>
void decodeAddScalar(float* acc, const std::uint16_t* in, std::size_t n, std::uint16_t* out) {
  for (std::size_t i = 0; i < n; ++i) acc[i] += ToFloat(in[i]);
  if (out != nullptr) encodeScalar<FromFloat>(acc, n, out);
}

const Converter kScalarF16{encodeScalar<floatToHalf>, decodeScalar<halfToFloat>,
                           decodeAddScalar<halfToFloat, floatToHalf>};
const Converter kScalarBf16{encodeScalar<floatToBf16>, decodeScalar<bf16ToFloat>,
                            decodeAddScalar<bf16ToFloat, floatToBf16>};

}  // namespace

std::string_view convertPathName(ConvertPath path) {
  switch (path) {
    case ConvertPath::kScalar: return "scalar";
    case ConvertPath::kAvx2: return "avx2";
    case ConvertPath::kAvx512: return "avx512";
  }
  return "?";
}

bool convertPathSupported(ConvertPath path) {
  switch (path) {
    case ConvertPath::kScalar: return true;
#if defined(PARAXIS_X86_CONVERT)
    case ConvertPath::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    case ConvertPath::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl");
#else
    default: return false;
#endif
  }
  return false;
}

ConvertPath bestConvertPath() {
  static const ConvertPath best = [] {
    for (ConvertPath p : {ConvertPath::kAvx512, ConvertPath::kAvx2}) {
      if (convertPathSupported(p)) return p;
    }
    return ConvertPath::kScalar;
  }();
  return best;
}

std::vector<ConvertPath> supportedConvertPaths() {
  std::vector<ConvertPath> paths;
  for (ConvertPath p : {ConvertPath::kScalar, ConvertPath::kAvx2, ConvertPath::kAvx512}) {
    if (convertPathSupported(p)) paths.push_back(p);
  }
  return paths;
}

ConvertPath convertPathNamed(std::string_view name, std::string_view what) {
  for (ConvertPath p : {ConvertPath::kScalar, ConvertPath::kAvx2, ConvertPath::kAvx512}) {
    if (name != convertPathName(p)) continue;
    if (!convertPathSupported(p)) throw ConfigError(fmt::format("{}: this CPU cannot run the {} path", what, name));
    return p;
  }
  throw ConfigError(fmt::format("{}: expected scalar, avx2 or avx512, found '{}'", what, name));
}

namespace {
std::atomic<int> gChosen{-1};  // -1: the fastest
}  // namespace

ConvertPath activeConvertPath() {
  const int chosen = gChosen.load(std::memory_order_relaxed);
  return chosen < 0 ? bestConvertPath() : static_cast<ConvertPath>(chosen);
}

void chooseConvertPath(ConvertPath path) {
  if (!convertPathSupported(path)) {
    throw ConfigError(fmt::format("conversion: this CPU cannot run the {} path", convertPathName(path)));
  }
  gChosen.store(static_cast<int>(path), std::memory_order_relaxed);
}

const Converter& converter(DataType wire, ConvertPath path) {
  if (wire != DataType::kF16 && wire != DataType::kBF16) {
    throw ConfigError(fmt::format("conversion: the wire type must be f16 or bf16, found {}", typeName(wire)));
  }
  if (!convertPathSupported(path)) {
    throw ConfigError(fmt::format("conversion: this CPU cannot run the {} path", convertPathName(path)));
  }
  const bool half = wire == DataType::kF16;
  switch (path) {
#if defined(PARAXIS_X86_CONVERT)
    case ConvertPath::kAvx2: return half ? detail::kAvx2F16 : detail::kAvx2Bf16;
    case ConvertPath::kAvx512: return half ? detail::kAvx512F16 : detail::kAvx512Bf16;
#endif
    default: return half ? kScalarF16 : kScalarBf16;
  }
}

}  // namespace paraxis::comm
