#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "comm/half.hpp"
#include "comm/types.hpp"
#include "core/error.hpp"

namespace paraxis::comm {
namespace {

TEST(Half, RoundTripsRepresentableValuesExactly) {
  for (float v : {0.0F, 1.0F, -2.5F, 65504.0F, 0.000061035156F, 5.9604645e-08F, 1024.0F}) {
    EXPECT_EQ(halfToFloat(floatToHalf(v)), v) << v;
  }
  EXPECT_TRUE(std::isinf(halfToFloat(floatToHalf(1e6F))));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(halfToFloat(floatToHalf(1.0F + 1.0F / 4096)), 1.0F);  // rounds to nearest even
  EXPECT_EQ(floatToHalf(1.0F), 0x3c00);
}

TEST(Bf16, KeepsTheF32ExponentRange) {
  EXPECT_NEAR(bf16ToFloat(floatToBf16(1e30F)) / 1e30F, 1.0F, 1.0F / 256);
  EXPECT_EQ(bf16ToFloat(floatToBf16(3.0F)), 3.0F);
  EXPECT_NEAR(bf16ToFloat(floatToBf16(3.14159F)), 3.14159F, 0.01F);
}

TEST(ReduceInto, AppliesEachOperation) {
  std::int32_t a[3] = {1, 6, 12};
  const std::int32_t b[3] = {3, 5, 10};
  reduceInto(a, b, 3, DataType::kI32, ReduceOp::kBitAnd);
  EXPECT_EQ(a[0], 1);
  EXPECT_EQ(a[2], 8);
  float f[2] = {1, 5};
  const float g[2] = {4, 2};
  reduceInto(f, g, 2, DataType::kF32, ReduceOp::kMax);
  EXPECT_EQ(f[1], 5);
  EXPECT_THROW(reduceInto(f, g, 2, DataType::kF32, ReduceOp::kBitOr), ConfigError);
}

}  // namespace
}  // namespace paraxis::comm
