// AVX-512 kernels (compiled with -mavx512f -mavx512bw -mavx512vl; called only when the CPU
// has all three). Tails use masked loads and stores. bf16 is rounded with integer
// instructions: VCVTNEPS2BF16 flushes subnormals to zero, which the reference does not.
#include <immintrin.h>

#include <cstdint>

#include "comm/convert_kernels.hpp"

namespace paraxis::comm::detail {
namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

__m256i halfOf(__m512 v) { return _mm512_cvtps_ph(v, kRound); }
__m512 floatOfHalf(__m256i h) { return _mm512_cvtph_ps(h); }

__m256i bf16Of(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
  const __m512i magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(magnitude, _mm512_set1_epi32(0x7f800000));
  const __m512i lanes = _mm512_mask_blend_epi32(nan, _mm512_srli_epi32(rounded, 16), quiet);
  // The low half of each 32-bit lane, gathered into the low 256 bits. Not VPMOVDW: GCC folds
  // it with the store into its memory form, which ran at half the memory's speed here.
  const __m512i evens = _mm512_set_epi16(62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28,
                                         26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  return _mm512_castsi512_si256(_mm512_permutexvar_epi16(evens, lanes));
}

__m512 floatOfBf16(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }

__mmask16 tailMask(std::size_t left) { return static_cast<__mmask16>((1U << left) - 1U); }

// Elements before `p` reaches a 64-byte boundary (at most n): a 64-byte access that straddles
// two cache lines costs about double, and a kernel may touch its input up to three times.
std::size_t headOf(const void* p, std::size_t n) {
  const auto misaligned = reinterpret_cast<std::uintptr_t>(p) % 64;
  const std::size_t head = misaligned == 0 || misaligned % 4 != 0 ? 0 : (64 - misaligned) / 4;
  return head < n ? head : n;
}

template <__m256i (*Encode)(__m512)>
void encodeSixteen(const float* in, std::uint16_t* out, __mmask16 m) {
  _mm256_mask_storeu_epi16(out, m, Encode(_mm512_maskz_loadu_ps(m, in)));
}

template <__m256i (*Encode)(__m512)>
void encodeBlock(const float* in, std::size_t n, std::uint16_t* out) {
  std::size_t i = headOf(in, n);
  if (i > 0) encodeSixteen<Encode>(in, out, tailMask(i));
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), Encode(_mm512_load_ps(in + i)));
  }
  if (i < n) encodeSixteen<Encode>(in + i, out + i, tailMask(n - i));
}

template <__m512 (*Decode)(__m256i)>
void decodeSixteen(const std::uint16_t* in, float* out, __mmask16 m) {
  _mm512_mask_storeu_ps(out, m, Decode(_mm256_maskz_loadu_epi16(m, in)));
}

template <__m512 (*Decode)(__m256i)>
void decodeBlock(const std::uint16_t* in, std::size_t n, float* out) {
  std::size_t i = headOf(out, n);
  if (i > 0) decodeSixteen<Decode>(in, out, tailMask(i));
  for (; i + 16 <= n; i += 16) {
    _mm512_store_ps(out + i, Decode(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  }
  if (i < n) decodeSixteen<Decode>(in + i, out + i, tailMask(n - i));
}

// Sixteen lanes (the first `m` of them): acc += decode(in); out = encode(acc) when asked.
template <__m256i (*Encode)(__m512), __m512 (*Decode)(__m256i)>
void addSixteen(float* acc, const std::uint16_t* in, std::uint16_t* out, __mmask16 m) {
  const __m512 sum = _mm512_add_ps(_mm512_maskz_loadu_ps(m, acc), Decode(_mm256_maskz_loadu_epi16(m, in)));
  _mm512_mask_storeu_ps(acc, m, sum);
  if (out != nullptr) _mm256_mask_storeu_epi16(out, m, Encode(sum));
}

template <__m256i (*Encode)(__m512), __m512 (*Decode)(__m256i)>
void decodeAddBlock(float* acc, const std::uint16_t* in, std::size_t n, std::uint16_t* out) {
  std::size_t i = headOf(acc, n);
  if (i > 0) addSixteen<Encode, Decode>(acc, in, out, tailMask(i));
  for (; i + 16 <= n; i += 16) {
    addSixteen<Encode, Decode>(acc + i, in + i, out != nullptr ? out + i : nullptr, 0xffff);
  }
  if (i < n) addSixteen<Encode, Decode>(acc + i, in + i, out != nullptr ? out + i : nullptr, tailMask(n - i));
}

}  // namespace

const Converter kAvx512F16{encodeBlock<halfOf>, decodeBlock<floatOfHalf>, decodeAddBlock<halfOf, floatOfHalf>};
const Converter kAvx512Bf16{encodeBlock<bf16Of>, decodeBlock<floatOfBf16>,
                            decodeAddBlock<bf16Of, floatOfBf16>};

}  // namespace paraxis::comm::detail
