#pragma once
// fp32 <-> fp16/bf16 kernels for compressed wires: scalar, AVX2 (+F16C) and AVX-512, picked
// at run time for the CPU at hand. Every path gives the bits of the scalar reference in
// half.hpp (round to nearest even, subnormals kept, NaNs quieted), so ranks on different CPUs
// still agree. The fused kernel lets a reduction step decode, add and re-encode in one pass.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "comm/types.hpp"

namespace paraxis::comm {

enum class ConvertPath { kScalar, kAvx2, kAvx512 };

std::string_view convertPathName(ConvertPath path);
// Whether this CPU (and its OS) runs the path.
bool convertPathSupported(ConvertPath path);
// The fastest supported path.
ConvertPath bestConvertPath();
// Every supported path, scalar first.
std::vector<ConvertPath> supportedConvertPaths();
// The path named "scalar", "avx2" or "avx512"; ConfigError naming `what` (a knob or option)
// for another name or a path this CPU lacks.
ConvertPath convertPathNamed(std::string_view name, std::string_view what);
// The path compressed wires use in this process: the fastest unless one was chosen (the knob
// wire_conversion_path, for comparisons; the results are the same bits on every path).
ConvertPath activeConvertPath();
void chooseConvertPath(ConvertPath path);

// The kernels of one wire type on one path. Pointers need no alignment.
struct Converter {
  // out[i] = wire(in[i]).
  void (*encode)(const float* in, std::size_t n, std::uint16_t* out);
  // out[i] = f32(in[i]).
  void (*decode)(const std::uint16_t* in, std::size_t n, float* out);
  // acc[i] += f32(in[i]), then out[i] = wire(acc[i]) when out is not null.
  void (*decodeAdd)(float* acc, const std::uint16_t* in, std::size_t n, std::uint16_t* out);
};

// The kernels for `wire` (f16 or bf16) on `path`; ConfigError for another type or a path this
// CPU lacks.
const Converter& converter(DataType wire, ConvertPath path);
inline const Converter& converter(DataType wire) { return converter(wire, activeConvertPath()); }

}  // namespace paraxis::comm
