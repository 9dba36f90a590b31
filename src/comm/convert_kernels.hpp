#pragma once
// The per-path kernel tables behind comm/convert. Each vector table lives in a translation
// unit compiled for its instruction set and holds no inline code shared with other units (an
// inline function compiled with AVX-512 could otherwise be the copy the linker keeps).
// Internal to comm.
#include "comm/convert.hpp"

namespace paraxis::comm::detail {

extern const Converter kAvx2F16;
extern const Converter kAvx2Bf16;
extern const Converter kAvx512F16;
extern const Converter kAvx512Bf16;

}  // namespace paraxis::comm::detail
