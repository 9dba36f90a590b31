#include "core/knobs.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace paraxis {
namespace {

const std::vector<KnobSpec> kSpecs{
    {"threads", KnobType::kInt, "0", "threads"},
    {"verify", KnobType::kBool, "false", "verify"},
    {"timeout", KnobType::kSeconds, "30 s", "deadline"},
    {"fusion", KnobType::kBytes, "64 MiB", "fusion buffer"},
};

TEST(Knobs, DefaultsApplyWithoutEnvironment) {
  const Knobs knobs = Knobs::load(kSpecs, {});
  EXPECT_EQ(knobs.getInt("threads"), 0);
  EXPECT_FALSE(knobs.getBool("verify"));
  EXPECT_DOUBLE_EQ(knobs.getDouble("timeout"), 30.0);
  EXPECT_DOUBLE_EQ(knobs.getDouble("fusion"), 64.0 * 1024 * 1024);
  EXPECT_EQ(knobs.entries().front().source, "default");
}

TEST(Knobs, EnvironmentOverridesAndIsRecordedAsSource) {
  const Knobs knobs = Knobs::load(kSpecs, {{"PARAXIS_THREADS", "4"}, {"PARAXIS_TIMEOUT", "250 ms"}});
  EXPECT_EQ(knobs.getInt("threads"), 4);
  EXPECT_DOUBLE_EQ(knobs.getDouble("timeout"), 0.25);
  EXPECT_EQ(knobs.entries().front().source, "PARAXIS_THREADS");
}

TEST(Knobs, MalformedValueNamesTheVariable) {
  try {
    Knobs::load(kSpecs, {{"PARAXIS_THREADS", "four"}});
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "environment variable PARAXIS_THREADS: expected an integer, found 'four'");
  }
}

TEST(Knobs, UnknownParaxisVariableIsAnError) {
  EXPECT_THROW(Knobs::load(kSpecs, {{"PARAXIS_THREDS", "4"}}), ConfigError);
}

TEST(Knobs, ReadingAnUnregisteredKnobIsABug) {
  const Knobs knobs = Knobs::load(kSpecs, {});
  EXPECT_THROW(knobs.getInt("nope"), InternalError);
  EXPECT_THROW(knobs.getBool("threads"), InternalError);
}

TEST(Knobs, VariableNamesAreUpperCase) { EXPECT_EQ(knobVariable("comm_timeout"), "PARAXIS_COMM_TIMEOUT"); }


// Numeric knobs have a range: out of it, or not finite, is a start-up error naming the range.
TEST(Knobs, ValuesOutsideTheRangeAreRejected) {
  const std::vector<KnobSpec> specs{{"deadline", KnobType::kSeconds, "120 s", "deadline", 0.01, 86400},
                                    {"indent", KnobType::kInt, "2", "indent", -1, 16}};
  for (const char* bad : {"0", "-1", "1e300", "1e-6", "inf", "nan"}) {
    try {
      Knobs::load(specs, {{"PARAXIS_DEADLINE", bad}});
      ADD_FAILURE() << "accepted PARAXIS_DEADLINE=" << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("PARAXIS_DEADLINE"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(Knobs::load(specs, {{"PARAXIS_INDENT", "100000000"}}), ConfigError);
  EXPECT_DOUBLE_EQ(Knobs::load(specs, {{"PARAXIS_DEADLINE", "5 s"}}).getDouble("deadline"), 5);
}

}  // namespace
// A string knob with choices takes one of them; another is a start-up error naming them all.
TEST(Knobs, AStringKnobWithChoicesTakesOnlyThose) {
  const std::vector<KnobSpec> specs{{"wire", KnobType::kString, "fp32", "wire", 0, 0, {"fp32", "fp16"}}};
  EXPECT_EQ(Knobs::load(specs, {{"PARAXIS_WIRE", "fp16"}}).getString("wire"), "fp16");
  try {
    Knobs::load(specs, {{"PARAXIS_WIRE", "fp64"}});
    FAIL() << "accepted PARAXIS_WIRE=fp64";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "environment variable PARAXIS_WIRE: expected one of fp32, fp16, found 'fp64'");
  }
}

}  // namespace paraxis
