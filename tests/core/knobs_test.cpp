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

}  // namespace
}  // namespace paraxis
