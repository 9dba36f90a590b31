#include "core/units.hpp"

#include <gtest/gtest.h>

namespace paraxis::units {
namespace {

TEST(Units, FormatsWithBinaryAndDecimalPrefixes) {
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(102228128.0), "97.5 MiB");
  EXPECT_EQ(formatFlops(8.24e9), "8.24 GFLOP");
  EXPECT_EQ(formatRate(12.5e9), "12.5 GB/s");
  EXPECT_EQ(formatSeconds(0.0161), "16.1 ms");
  EXPECT_EQ(formatSeconds(500e-9), "500 ns");
  EXPECT_EQ(formatCount(25557032), "25,557,032");
  EXPECT_EQ(formatCount(-1234), "-1,234");
}

TEST(Units, ParsesQuantitiesWithUnits) {
  EXPECT_DOUBLE_EQ(*parse("16 GiB", Quantity::kBytes), 16.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse("12.5 GB/s", Quantity::kBytesPerSecond), 12.5e9);
  EXPECT_DOUBLE_EQ(*parse("1 Gbit/s", Quantity::kBytesPerSecond), 1.25e8);
  EXPECT_DOUBLE_EQ(*parse("500 ns", Quantity::kSeconds), 500e-9);
  EXPECT_DOUBLE_EQ(*parse("7.8 TFLOP/s", Quantity::kFlopsPerSecond), 7.8e12);
  EXPECT_DOUBLE_EQ(*parse("1e-6", Quantity::kSeconds), 1e-6);
  EXPECT_DOUBLE_EQ(*parse("  42  ", Quantity::kCount), 42.0);
}

TEST(Units, RejectsUnitsOfAnotherQuantityAndGarbage) {
  EXPECT_FALSE(parse("12 GB/s", Quantity::kBytes));
  EXPECT_FALSE(parse("ten", Quantity::kCount));
  EXPECT_FALSE(parse("", Quantity::kSeconds));
  EXPECT_FALSE(parse("5 parsecs", Quantity::kSeconds));
  EXPECT_NE(acceptedUnits(Quantity::kSeconds).find("ms"), std::string::npos);
}

}  // namespace
}  // namespace paraxis::units
