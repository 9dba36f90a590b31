#pragma once
// How fast the wire conversions run here, against the memory they stream through: each kernel
// of comm/convert over buffers larger than the caches, beside memcpy and an f32 add over the
// same buffers, timed in the same run (first touch done before any timing). Rates count the
// bytes each kernel reads and writes, the way STREAM does, so a kernel at the memory's limit
// shows about memcpy's rate.
#include <cstddef>
#include <vector>

#include "comm/convert.hpp"

namespace paraxis::comm {

struct ConversionBenchOptions {
  std::size_t elements = std::size_t{16} << 20;  // f32 values per buffer (64 MiB)
  int trials = 5;                                // the median is reported
  std::vector<ConvertPath> paths;                // empty: every path this CPU runs
};

enum class ConversionKernel { kEncode, kDecode, kDecodeAddEncode, kCopy, kAdd };

struct ConversionRow {
  DataType wire = DataType::kF16;  // meaningless for kCopy and kAdd
  ConvertPath path = ConvertPath::kScalar;
  ConversionKernel kernel = ConversionKernel::kCopy;
  double seconds = 0;          // median over the trials, one pass over the buffer
  double bytesPerSecond = 0;   // bytes read and written per second
  double f32BytesPerSecond = 0;  // f32 values handled per second, times 4
};

const char* kernelName(ConversionKernel kernel);
// Bytes one element costs the kernel: what it reads plus what it writes.
double bytesPerElement(ConversionKernel kernel, DataType wire);

// memcpy and the f32 add first, then every kernel of every wire type on each path asked for.
std::vector<ConversionRow> runConversionBench(const ConversionBenchOptions& options);

// The f32 gradient bytes per second an allreduce's conversions handle on a wire type: a ring
// (or halving/doubling) allreduce decodes, adds and re-encodes each value once and decodes it
// once more, so its seconds per byte are those of the fused kernel plus the decode.
double allreduceConversionRate(const std::vector<ConversionRow>& rows, DataType wire, ConvertPath path);

}  // namespace paraxis::comm
