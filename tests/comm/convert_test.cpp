// Every vector conversion path against the scalar reference, bit for bit: every fp16/bf16
// value decoded, every fp32 value encoded (round to nearest even, NaN, infinities,
// subnormals, overflow), and the fused decode-add-encode on random data with every tail length.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "comm/convert.hpp"
#include "core/error.hpp"

namespace paraxis::comm {
namespace {

std::vector<ConvertPath> vectorPaths() {
  std::vector<ConvertPath> paths = supportedConvertPaths();
  paths.erase(paths.begin());  // the scalar reference itself
  return paths;
}

std::uint32_t bitsOf(float f) { return std::bit_cast<std::uint32_t>(f); }

TEST(Convert, TheMachineHasAVectorPathOrSaysWhyNot) {
  // This machine's CPU has AVX2 and F16C (ENVIRONMENT.md); the scalar path is always there.
  ASSERT_EQ(supportedConvertPaths().front(), ConvertPath::kScalar);
#if defined(__x86_64__)
  EXPECT_TRUE(convertPathSupported(ConvertPath::kAvx2) || !__builtin_cpu_supports("f16c"));
#endif
  EXPECT_EQ(bestConvertPath(), supportedConvertPaths().back());
  EXPECT_THROW(converter(DataType::kF32), ConfigError);
}

TEST(Convert, DecodesEveryWireValueLikeTheReference) {
  std::vector<std::uint16_t> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  for (DataType wire : {DataType::kF16, DataType::kBF16}) {
    std::vector<float> expected(all.size());
    converter(wire, ConvertPath::kScalar).decode(all.data(), all.size(), expected.data());
    for (ConvertPath path : vectorPaths()) {
      std::vector<float> got(all.size());
      converter(wire, path).decode(all.data(), all.size(), got.data());
      for (std::size_t i = 0; i < all.size(); ++i) {
        ASSERT_EQ(bitsOf(got[i]), bitsOf(expected[i])) << typeName(wire) << " " << convertPathName(path) << " 0x"
                                                       << std::hex << i;
      }
    }
  }
}

// Every one of the 2^32 fp32 bit patterns, a block at a time.
TEST(Convert, EncodesEveryF32ValueLikeTheReference) {
  constexpr std::size_t kBlock = 1U << 20;
  std::vector<float> in(kBlock);
  std::vector<std::uint16_t> expected(kBlock);
  std::vector<std::uint16_t> got(kBlock);
  for (DataType wire : {DataType::kF16, DataType::kBF16}) {
    for (std::uint64_t start = 0; start < (1ULL << 32); start += kBlock) {
      for (std::size_t i = 0; i < kBlock; ++i) in[i] = std::bit_cast<float>(static_cast<std::uint32_t>(start + i));
      converter(wire, ConvertPath::kScalar).encode(in.data(), kBlock, expected.data());
      for (ConvertPath path : vectorPaths()) {
        converter(wire, path).encode(in.data(), kBlock, got.data());
        if (std::memcmp(got.data(), expected.data(), kBlock * sizeof(std::uint16_t)) == 0) continue;
        for (std::size_t i = 0; i < kBlock; ++i) {
          ASSERT_EQ(got[i], expected[i]) << typeName(wire) << " " << convertPathName(path) << " f32 0x" << std::hex
                                         << start + i;
        }
      }
    }
  }
}

std::vector<float> mixedValues(std::size_t n, std::mt19937& rng) {
  const float specials[] = {0.0F, -0.0F, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), 65504.0F, 65520.0F, 6e-8F, 1e-40F, -3e-5F};
  std::normal_distribution<float> normal(0.0F, 100.0F);
  std::uniform_int_distribution<int> pick(0, 19);
  std::vector<float> values(n);
  for (float& v : values) {
    const int k = pick(rng);
    v = k < 10 ? specials[k] : normal(rng);
  }
  return values;
}

TEST(Convert, FusedDecodeAddEncodeMatchesTheReferenceAtEveryTail) {
  std::mt19937 rng(7);
  for (DataType wire : {DataType::kF16, DataType::kBF16}) {
    const Converter& reference = converter(wire, ConvertPath::kScalar);
    for (std::size_t n = 0; n <= 70; ++n) {
      const std::vector<float> acc = mixedValues(n + 1, rng);
      std::vector<std::uint16_t> in(n + 1);
      reference.encode(mixedValues(n + 1, rng).data(), n + 1, in.data());
      std::vector<float> expectedAcc(acc.begin() + 1, acc.end());  // offset by one: unaligned
      std::vector<std::uint16_t> expectedOut(n + 1, 0xabcd);
      reference.decodeAdd(expectedAcc.data(), in.data() + 1, n, expectedOut.data());
      for (ConvertPath path : vectorPaths()) {
        std::vector<float> gotAcc(acc.begin() + 1, acc.end());
        std::vector<std::uint16_t> gotOut(n + 1, 0xabcd);
        converter(wire, path).decodeAdd(gotAcc.data(), in.data() + 1, n, gotOut.data());
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(bitsOf(gotAcc[i]), bitsOf(expectedAcc[i])) << n << " " << i;
        ASSERT_EQ(gotOut, expectedOut) << "n " << n << " " << convertPathName(path);  // nothing past n written
        std::vector<float> withoutOut(acc.begin() + 1, acc.end());
        converter(wire, path).decodeAdd(withoutOut.data(), in.data() + 1, n, nullptr);
        EXPECT_EQ(std::memcmp(withoutOut.data(), gotAcc.data(), n * sizeof(float)), 0);
      }
    }
  }
}

TEST(Convert, ReferenceRoundsAndQuietsAsIeeeSays) {
  const Converter& half = converter(DataType::kF16, ConvertPath::kScalar);
  const float in[] = {1.0F + 1.0F / 2048, 1.0F + 3.0F / 2048, 65519.0F, 65520.0F, 2.9802322e-08F,
                      std::bit_cast<float>(0x7f800001U)};
  std::uint16_t out[6];
  half.encode(in, 6, out);
  EXPECT_EQ(out[0], 0x3c00);  // a tie rounds to the even 1.0
  EXPECT_EQ(out[1], 0x3c02);  // a tie rounds to the even 1 + 2/1024
  EXPECT_EQ(out[2], 0x7bff);  // below the overflow threshold: the largest half
  EXPECT_EQ(out[3], 0x7c00);  // at it: infinity
  EXPECT_EQ(out[4], 0x0000);  // half the smallest subnormal: a tie to even zero
  EXPECT_EQ(out[5], 0x7e00);  // a signalling NaN comes out quiet
}

}  // namespace
}  // namespace paraxis::comm
