// AVX2 + F16C kernels (compiled with -mavx2 -mf16c; called only when the CPU has both).
// Tails go through a padded block so that no scalar code is compiled here.
#include <immintrin.h>

#include "comm/convert_kernels.hpp"

namespace paraxis::comm::detail {
namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

__m128i halfOf(__m256 v) { return _mm256_cvtps_ph(v, kRound); }
__m256 floatOfHalf(__m128i h) { return _mm256_cvtph_ps(h); }

// Round to nearest even on the top 16 bits; NaNs keep their top bits and are quieted.
__m256i bf16Bits(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  const __m256i magnitude = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff));
  const __m256i nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f800000));
  return _mm256_blendv_epi8(_mm256_srli_epi32(rounded, 16), quiet, nan);
}

// Eight 32-bit lanes holding 16-bit values, narrowed to eight 16-bit values.
__m128i narrow(__m256i lanes) {
  const __m256i packed = _mm256_packus_epi32(lanes, lanes);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
}

__m128i bf16Of(__m256 v) { return narrow(bf16Bits(v)); }
__m256 floatOfBf16(__m128i h) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)); }

template <__m128i (*Encode)(__m256)>
void encodeBlock(const float* in, std::size_t n, std::uint16_t* out) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), Encode(_mm256_loadu_ps(in + i)));
  }
  if (i == n) return;
  float tail[8] = {};
  std::uint16_t result[8];
  __builtin_memcpy(tail, in + i, (n - i) * sizeof(float));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(result), Encode(_mm256_loadu_ps(tail)));
  __builtin_memcpy(out + i, result, (n - i) * sizeof(std::uint16_t));
}

template <__m256 (*Decode)(__m128i)>
void decodeBlock(const std::uint16_t* in, std::size_t n, float* out) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, Decode(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
  if (i == n) return;
  std::uint16_t tail[8] = {};
  float result[8];
  __builtin_memcpy(tail, in + i, (n - i) * sizeof(std::uint16_t));
  _mm256_storeu_ps(result, Decode(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tail))));
  __builtin_memcpy(out + i, result, (n - i) * sizeof(float));
}

// One block of eight: acc += decode(in); out = encode(acc) when asked.
template <__m128i (*Encode)(__m256), __m256 (*Decode)(__m128i)>
void addEight(float* acc, const std::uint16_t* in, std::uint16_t* out) {
  const __m256 sum =
      _mm256_add_ps(_mm256_loadu_ps(acc), Decode(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in))));
  _mm256_storeu_ps(acc, sum);
  if (out != nullptr) _mm_storeu_si128(reinterpret_cast<__m128i*>(out), Encode(sum));
}

template <__m128i (*Encode)(__m256), __m256 (*Decode)(__m128i)>
void decodeAddBlock(float* acc, const std::uint16_t* in, std::size_t n, std::uint16_t* out) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) addEight<Encode, Decode>(acc + i, in + i, out != nullptr ? out + i : nullptr);
  if (i == n) return;
  float accTail[8] = {};
  std::uint16_t inTail[8] = {};
  std::uint16_t outTail[8];
  __builtin_memcpy(accTail, acc + i, (n - i) * sizeof(float));
  __builtin_memcpy(inTail, in + i, (n - i) * sizeof(std::uint16_t));
  addEight<Encode, Decode>(accTail, inTail, outTail);
  __builtin_memcpy(acc + i, accTail, (n - i) * sizeof(float));
  if (out != nullptr) __builtin_memcpy(out + i, outTail, (n - i) * sizeof(std::uint16_t));
}

}  // namespace

const Converter kAvx2F16{encodeBlock<halfOf>, decodeBlock<floatOfHalf>, decodeAddBlock<halfOf, floatOfHalf>};
const Converter kAvx2Bf16{encodeBlock<bf16Of>, decodeBlock<floatOfBf16>, decodeAddBlock<bf16Of, floatOfBf16>};

}  // namespace paraxis::comm::detail
