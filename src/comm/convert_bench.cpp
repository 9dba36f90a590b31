#include "comm/convert_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>

#include "core/error.hpp"

namespace paraxis::comm {
namespace {

double medianSeconds(int trials, const std::function<void()>& pass) {
  pass();  // warm-up: caches, TLB, the first touch of every page
  std::vector<double> seconds;
  for (int t = 0; t < trials; ++t) {
    const auto start = std::chrono::steady_clock::now();
    pass();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

// The buffers every kernel streams through, written once before any timing.
struct Buffers {
  explicit Buffers(std::size_t n) : values(n), other(n), wire(n), wireOut(n) {
    for (std::size_t i = 0; i < n; ++i) {
      values[i] = 1e-3F * static_cast<float>(i % 4093) - 2.0F;
      other[i] = values[i];
      wire[i] = static_cast<std::uint16_t>(0x3c00 + i % 1000);  // 1.0 .. 2.0 in either format's top bits
      wireOut[i] = 0;
    }
  }
  std::vector<float> values, other;
  std::vector<std::uint16_t> wire, wireOut;
};

ConversionRow row(ConversionKernel kernel, DataType wire, ConvertPath path, std::size_t n, double seconds) {
  const double elements = static_cast<double>(n);
  return {wire, path, kernel, seconds, elements * bytesPerElement(kernel, wire) / seconds, elements * 4 / seconds};
}

std::function<void()> kernelPass(ConversionKernel kernel, const Converter& c, Buffers& b) {
  const std::size_t n = b.values.size();
  switch (kernel) {
    case ConversionKernel::kEncode: return [&c, &b, n] { c.encode(b.values.data(), n, b.wireOut.data()); };
    case ConversionKernel::kDecode: return [&c, &b, n] { c.decode(b.wire.data(), n, b.other.data()); };
    default: return [&c, &b, n] { c.decodeAdd(b.other.data(), b.wire.data(), n, b.wireOut.data()); };
  }
}

}  // namespace

const char* kernelName(ConversionKernel kernel) {
  switch (kernel) {
    case ConversionKernel::kEncode: return "encode";
    case ConversionKernel::kDecode: return "decode";
    case ConversionKernel::kDecodeAddEncode: return "decode+add+encode";
    case ConversionKernel::kCopy: return "memcpy";
    case ConversionKernel::kAdd: return "f32 add";
  }
  return "?";
}

double bytesPerElement(ConversionKernel kernel, DataType wire) {
  const double w = static_cast<double>(elementSize(wire));
  switch (kernel) {
    case ConversionKernel::kEncode:
    case ConversionKernel::kDecode: return 4 + w;
    case ConversionKernel::kDecodeAddEncode: return 4 + w + 4 + w;  // reads acc and wire, writes both
    case ConversionKernel::kCopy: return 8;
    case ConversionKernel::kAdd: return 12;
  }
  return 0;
}

std::vector<ConversionRow> runConversionBench(const ConversionBenchOptions& o) {
  if (o.elements == 0 || o.trials < 1) throw ConfigError("conversion bench: needs elements > 0 and trials >= 1");
  Buffers b(o.elements);
  const std::size_t n = o.elements;
  std::vector<ConversionRow> rows;
  rows.push_back(row(ConversionKernel::kCopy, DataType::kF32, ConvertPath::kScalar, n, medianSeconds(o.trials, [&] {
                       std::memcpy(b.other.data(), b.values.data(), n * sizeof(float));
                     })));
  rows.push_back(row(ConversionKernel::kAdd, DataType::kF32, ConvertPath::kScalar, n, medianSeconds(o.trials, [&] {
                       reduceInto(b.other.data(), b.values.data(), n, DataType::kF32, ReduceOp::kSum);
                     })));
  const std::vector<ConvertPath> paths = o.paths.empty() ? supportedConvertPaths() : o.paths;
  for (DataType wire : {DataType::kF16, DataType::kBF16}) {
    for (ConvertPath path : paths) {
      const Converter& c = converter(wire, path);
      for (ConversionKernel k : {ConversionKernel::kEncode, ConversionKernel::kDecode, ConversionKernel::kDecodeAddEncode}) {
        std::fill(b.other.begin(), b.other.end(), 0.0F);  // the fused sum must not run off to infinity
        rows.push_back(row(k, wire, path, n, medianSeconds(o.trials, kernelPass(k, c, b))));
      }
    }
  }
  return rows;
}

double allreduceConversionRate(const std::vector<ConversionRow>& rows, DataType wire, ConvertPath path) {
  double secondsPerByte = 0;
  int found = 0;
  for (const ConversionRow& r : rows) {
    if (r.wire != wire || r.path != path) continue;
    if (r.kernel != ConversionKernel::kDecodeAddEncode && r.kernel != ConversionKernel::kDecode) continue;
    secondsPerByte += 1.0 / r.f32BytesPerSecond;
    ++found;
  }
  if (found != 2) throw InternalError("allreduceConversionRate: the bench lacks this wire type and path");
  return 1.0 / secondsPerByte;
}

}  // namespace paraxis::comm
