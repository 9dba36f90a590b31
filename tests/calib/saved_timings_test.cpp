#include "calib/saved_timings.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "common/scratch_file.hpp"
#include "core/error.hpp"

namespace paraxis::calib {
namespace {

// Every field a distinct value, so that a field read into another's place shows.
TimedCall convolutionCall() {
  TimedCall c;
  c.layer = "block2.conv";
  c.flops = 3.77e7, c.bytes = 4.6e5, c.matrix = true, c.seconds = 1.81e-4, c.kernel = 0, c.memoryKind = -1;
  c.rows = 1024, c.depth = 288, c.samples = 4, c.native = false;
  c.backwardData = {7.5e7, 4.7e5, 1024, 4, 11, false, 288, false, 0.25, 3.1e6};
  c.backwardWeight = {7.4e7, 4.8e5, 1023, 4, 12, true, 287, true, 0.5, 3.2e6};
  c.backwardSeconds = 3.59e-4, c.accumulatedWeights = 73728, c.columnBytes = 13, c.workingSet = 2.5e7;
  c.wallPerCpu = 1.93, c.stepCpuSeconds = 2.7e-3;
  c.strided = c.backwardData.strided = c.backwardWeight.strided = true;
  return c;
}

void expectSamePass(const cost::PassWork& a, const cost::PassWork& b) {
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.serialBytes, b.serialBytes);
  EXPECT_EQ(a.native, b.native);
  EXPECT_EQ(a.depth, b.depth);
  EXPECT_EQ(a.weightGradient, b.weightGradient);
  EXPECT_EQ(a.resident, b.resident);
  EXPECT_EQ(a.curveFlops, b.curveFlops);
  EXPECT_EQ(a.strided, b.strided);
}

TEST(SavedTimings, ReadBackAsWritten) {
  SavedTimings t;
  TimedCall pool;
  pool.layer = "block2.pool", pool.bytes = 2e5, pool.seconds = 9e-6, pool.memoryKind = 0, pool.kernel = -1;
  t.timed = {{"small-cnn@32 x4", {convolutionCall(), pool}}, {"lenet x4", {convolutionCall()}}};
  t.stream = {{4.0 * (1 << 20), 8.7e10}, {256.0 * (1 << 20), 1.7e10}};
  t.probeBefore = 4.2e-3, t.probeAfter = 4.6e-3, t.probeAtOnce = 4.9e-3, t.probeAlone = 4.1e-3;
  t.ranksPerNode = 2, t.gpu = false;
  const testing_support::ScratchFile file(savedTimingsJson(t).dump(1), "calls");
  const SavedTimings r = readSavedTimings(file.path());
  ASSERT_EQ(r.timed.size(), 2U);
  EXPECT_EQ(r.timed[1].first, "lenet x4");
  ASSERT_EQ(r.timed[0].second.size(), 2U);
  const TimedCall& c = r.timed[0].second[0];
  const TimedCall want = convolutionCall();
  EXPECT_EQ(c.layer, want.layer);
  EXPECT_EQ(c.flops, want.flops);
  EXPECT_EQ(c.bytes, want.bytes);
  EXPECT_EQ(c.matrix, want.matrix);
  EXPECT_EQ(c.seconds, want.seconds);
  EXPECT_EQ(c.kernel, want.kernel);
  EXPECT_EQ(c.memoryKind, want.memoryKind);
  EXPECT_EQ(c.rows, want.rows);
  EXPECT_EQ(c.depth, want.depth);
  EXPECT_EQ(c.samples, want.samples);
  EXPECT_EQ(c.native, want.native);
  EXPECT_EQ(c.strided, want.strided);
  expectSamePass(c.backwardData, want.backwardData);
  expectSamePass(c.backwardWeight, want.backwardWeight);
  EXPECT_EQ(c.backwardSeconds, want.backwardSeconds);
  EXPECT_EQ(c.accumulatedWeights, want.accumulatedWeights);
  EXPECT_EQ(c.columnBytes, want.columnBytes);
  EXPECT_EQ(c.workingSet, want.workingSet);
  EXPECT_EQ(c.wallPerCpu, want.wallPerCpu);
  EXPECT_EQ(c.stepCpuSeconds, want.stepCpuSeconds);
  EXPECT_EQ(r.timed[0].second[1].memoryKind, 0);
  ASSERT_EQ(r.stream.size(), 2U);
  EXPECT_EQ(r.stream[1].rate, 1.7e10);
  EXPECT_EQ(r.probeBefore, 4.2e-3);
  EXPECT_EQ(r.probeAfter, 4.6e-3);
  EXPECT_EQ(r.probeAtOnce, 4.9e-3);
  EXPECT_EQ(r.probeAlone, 4.1e-3);
  EXPECT_EQ(r.ranksPerNode, 2);
  EXPECT_FALSE(r.gpu);
}

// `calls` written as a file of an earlier `version`, without the keys it lacked, and read back.
std::vector<TimedCall> readAsVersion(int version, std::initializer_list<const char*> lacked,
                                     const std::vector<TimedCall>& calls) {
  SavedTimings t;
  t.timed = {{"resnet18@64 x4", calls}};
  nlohmann::json old = savedTimingsJson(t);
  old["version"] = version;
  for (nlohmann::json& call : old["models"][0]["calls"]) {
    for (const char* key : lacked) call.erase(key);
  }
  const testing_support::ScratchFile file(old.dump(), "calls");
  return readSavedTimings(file.path()).timed[0].second;
}
TimedCall readAsVersion(int version, std::initializer_list<const char*> lacked) {
  return readAsVersion(version, lacked, {convolutionCall()}).front();
}

// A file of version 1, written before calls said whether they were strided, reads them as not.
TEST(SavedTimings, VersionOneReadsAsUnstrided) {
  const TimedCall c = readAsVersion(1, {"strided", "wall_per_cpu", "step_cpu"});
  EXPECT_FALSE(c.strided);
  EXPECT_FALSE(c.backwardData.strided);
  EXPECT_FALSE(c.backwardWeight.strided);
  EXPECT_EQ(c.flops, convolutionCall().flops);
}

// Version 2's calls were timed on the wall clock: their steps' wall over CPU time reads as 0.
TEST(SavedTimings, VersionTwoReadsAsTimedOnTheWallClock) {
  const TimedCall c = readAsVersion(2, {"wall_per_cpu", "step_cpu"});
  EXPECT_EQ(c.wallPerCpu, 0);
  EXPECT_EQ(c.stepCpuSeconds, 0);
  EXPECT_TRUE(c.strided);
  EXPECT_EQ(c.seconds, convolutionCall().seconds);
}

// Version 3 priced a call timed on the CPU clock at its CPU time times its steps' wall over CPU
// time, and kept no step's CPU time: read as CPU time, the step's the sum of its calls'.
TEST(SavedTimings, VersionThreeReadsAsCpuTime) {
  TimedCall pool;
  pool.layer = "pool", pool.bytes = 2e5, pool.seconds = 9e-6 * 1.93, pool.memoryKind = 0,
  pool.wallPerCpu = 1.93;
  const std::vector<TimedCall> calls = readAsVersion(3, {"step_cpu"}, {convolutionCall(), pool});
  const TimedCall& conv = calls[0];
  EXPECT_DOUBLE_EQ(conv.seconds, convolutionCall().seconds / 1.93);
  EXPECT_DOUBLE_EQ(conv.backwardSeconds, convolutionCall().backwardSeconds / 1.93);
  EXPECT_EQ(conv.wallPerCpu, 1.93);
  EXPECT_DOUBLE_EQ(calls[1].seconds, 9e-6);
  const double step = conv.seconds + conv.backwardSeconds + 9e-6;
  EXPECT_DOUBLE_EQ(conv.stepCpuSeconds, step);
  EXPECT_DOUBLE_EQ(calls[1].stepCpuSeconds, step);
  // Timed on the wall clock (0): as written.
  TimedCall wall = convolutionCall();
  wall.wallPerCpu = 0;
  EXPECT_EQ(readAsVersion(3, {"step_cpu"}, {wall}).front().seconds, wall.seconds);
}

// The message a file's content earns, or "" when it reads.
std::string refusal(const std::string& text) {
  const testing_support::ScratchFile file(text, "calls");
  try {
    readSavedTimings(file.path());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SavedTimings, BadFilesAreRefusedNamingTheKey) {
  SavedTimings t;
  t.timed = {{"lenet x4", {convolutionCall()}}};
  nlohmann::json good = savedTimingsJson(t);
  EXPECT_EQ(refusal(good.dump()), "");

  nlohmann::json missing = good;
  missing["models"][0]["calls"][0].erase("seconds");
  EXPECT_NE(refusal(missing.dump()).find("'models[0].calls[0].seconds' is missing"), std::string::npos);
  nlohmann::json negative = good;
  negative["models"][0]["calls"][0]["backward_data"]["flops"] = -1;
  EXPECT_NE(
      refusal(negative.dump()).find("'models[0].calls[0].backward_data.flops' expected a finite number"),
      std::string::npos);
  nlohmann::json kernel = good;
  kernel["models"][0]["calls"][0]["kernel"] = 7;
  EXPECT_NE(refusal(kernel.dump()).find("'models[0].calls[0].kernel' expected an index"), std::string::npos);
  nlohmann::json none = good;
  none["models"] = nlohmann::json::array();
  EXPECT_NE(refusal(none.dump()).find("'models' holds no model"), std::string::npos);
  nlohmann::json version = good;
  version["version"] = 5;
  EXPECT_NE(refusal(version.dump()).find("'version' expected 1 to 4"), std::string::npos);
  version["version"] = 2.5;
  EXPECT_NE(refusal(version.dump()).find("'version' expected 1 to 4"), std::string::npos);
  nlohmann::json below = good;
  below["models"][0]["calls"][0]["wall_per_cpu"] = 0.5;
  EXPECT_NE(
      refusal(below.dump())
          .find("'models[0].calls[0].wall_per_cpu' expected 0 (timed on the wall clock) or a ratio >= 1"),
      std::string::npos);
  nlohmann::json unflagged = good;
  unflagged["models"][0]["calls"][0].erase("strided");
  EXPECT_NE(refusal(unflagged.dump()).find("'models[0].calls[0].strided' is missing"), std::string::npos);
  EXPECT_NE(refusal("[1, 2").find("not JSON"), std::string::npos);
  EXPECT_THROW(readSavedTimings("/nonexistent/calls.json"), NotFoundError);
}

}  // namespace
}  // namespace paraxis::calib
