#include "calib/layer_trace.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "calib/gradient_trace.hpp"
#include "common/scratch_file.hpp"
#include "core/error.hpp"

namespace paraxis::calib {
namespace {

// A trace file in the test's scratch folder, removed at the end.
class TraceFile : public testing_support::ScratchFile {
 public:
  explicit TraceFile(const std::string& text) : ScratchFile(text, "trace") {}
};

nlohmann::json complete(int pid, int tid, const char* category, const std::string& name, double ts,
                        double dur) {
  return {{"ph", "X"},    {"pid", pid}, {"tid", tid}, {"cat", category},
          {"name", name}, {"ts", ts},   {"dur", dur}};
}

nlohmann::json mainThread(int pid) {
  return {{"ph", "M"}, {"pid", pid}, {"tid", 0}, {"name", "thread_name"}, {"args", {{"name", "main"}}}};
}

// Rank 0: a warm-up step and three measured ones, each a conv forward of 100 + 10 * step us
// holding a 20 us layer collective, and a backward by layer of 300 us over which the main thread
// exchanges a 50 us halo; an evaluation's conv after the steps. Rank 1 alone runs "head".
nlohmann::json stepsTrace() {
  nlohmann::json events = nlohmann::json::array({mainThread(0), mainThread(1)});
  for (int step = 0; step < 4; ++step) {
    const double t = 10000.0 * step;
    events.push_back(complete(0, 0, "step",
                              step == 0 ? "iteration 1 (warm-up)" : "iteration " + std::to_string(step + 1),
                              t, 5000));
    events.push_back(complete(0, 0, "layer", "conv", t + 100, 100 + 10 * step));
    events.push_back(complete(0, 0, "layer_collectives", "layer_collectives", t + 150, 20));
    events.push_back(complete(0, 4, "layer_backward", "conv", t + 1000, 300));
    events.push_back(complete(0, 0, "halo", "halo", t + 1100, 50));
    events.push_back(complete(1, 0, "step", "iteration " + std::to_string(step + 1), t, 5000));
    events.push_back(complete(1, 0, "layer", "head", t + 2000, 40));
  }
  events.push_back(complete(0, 0, "layer", "conv", 50000, 999));  // an evaluation's: outside every step
  return {{"traceEvents", events}};
}

TEST(LayerTrace, MediansOfTheMeasuredStepsLessTheCommunicationInside) {
  const TraceFile file(stepsTrace().dump());
  const std::vector<MeasuredLayer> layers = readLayerTrace(file.path(), 0);
  ASSERT_EQ(layers.size(), 2U);
  const MeasuredLayer& conv = layers[0];
  EXPECT_EQ(conv.name, "conv");
  EXPECT_EQ(conv.rank, 0);
  EXPECT_EQ(conv.forwardCalls, 3);  // not the warm-up's, not the evaluation's
  EXPECT_EQ(conv.backwardCalls, 3);
  EXPECT_NEAR(conv.forward, (120 - 20) * 1e-6, 1e-12);  // the median of 110, 120, 130 less the collective
  EXPECT_NEAR(conv.backward, (300 - 50) * 1e-6, 1e-12);
  EXPECT_NEAR(conv.communication, (20 + 50) * 1e-6, 1e-12);
  EXPECT_EQ(layers[1].name, "head");  // from the rank that runs it
  EXPECT_EQ(layers[1].rank, 1);
  EXPECT_NEAR(layers[1].forward, 40e-6, 1e-12);
  EXPECT_EQ(layers[1].backwardCalls, 0);
}

TEST(LayerTrace, TheGivenRankFirst) {
  nlohmann::json trace = stepsTrace();
  for (int step = 1; step < 4; ++step)
    trace["traceEvents"].push_back(complete(1, 0, "layer", "conv", 10000.0 * step + 100, 70));
  const TraceFile file(trace.dump());
  EXPECT_EQ(readLayerTrace(file.path(), 0)[0].rank, 0);
  const std::vector<MeasuredLayer> fromOne = readLayerTrace(file.path(), 1);
  const auto conv =
      std::find_if(fromOne.begin(), fromOne.end(), [](const MeasuredLayer& l) { return l.name == "conv"; });
  ASSERT_NE(conv, fromOne.end());
  EXPECT_EQ(conv->rank, 1);
  EXPECT_NEAR(conv->forward, 70e-6, 1e-12);
}

// A residual block's shortcut and main branch read one input: the shortcut's backward, done
// first, runs until the input's gradient is complete, holding the main branch's; it is left out.
TEST(LayerTrace, ABackwardHoldingAnotherLayersIsNotItsOwn) {
  nlohmann::json trace = stepsTrace();
  for (int step = 1; step < 4; ++step) {
    const double t = 10000.0 * step;
    trace["traceEvents"].push_back(complete(0, 4, "layer_backward", "shortcut", t + 2000, 900));
    trace["traceEvents"].push_back(complete(0, 4, "layer_backward", "main", t + 2100, 800));
    for (const char* name : {"shortcut", "main"})
      trace["traceEvents"].push_back(complete(0, 0, "layer", name, t + 300, 10));
  }
  const TraceFile file(trace.dump());
  const std::vector<MeasuredLayer> layers = readLayerTrace(file.path(), 0);
  const auto at = [&](const char* name) {
    return *std::find_if(layers.begin(), layers.end(),
                         [&](const MeasuredLayer& l) { return l.name == name; });
  };
  EXPECT_EQ(at("shortcut").backwardCalls, 0);
  EXPECT_EQ(at("main").backwardCalls, 3);
  EXPECT_NEAR(at("main").backward, 800e-6, 1e-12);
  EXPECT_EQ(at("conv").backwardCalls, 3);  // sequential intervals stay
}

TEST(LayerTrace, ErrorsNameTheFile) {
  auto message = [](const std::string& text) {
    const TraceFile file(text);
    try {
      readLayerTrace(file.path(), 0);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("{").find("not JSON"), std::string::npos);
  EXPECT_NE(message("{\"a\": 1}").find("expected a Chrome trace"), std::string::npos);
  EXPECT_NE(message("{\"traceEvents\": []}").find("no measured step"), std::string::npos);
  nlohmann::json noLayers = stepsTrace();
  nlohmann::json kept = nlohmann::json::array();
  for (const nlohmann::json& e : noLayers["traceEvents"]) {
    if (e.value("cat", "") != "layer") kept.push_back(e);
  }
  EXPECT_NE(
      message(nlohmann::json{{"traceEvents", kept}}.dump()).find("no 'layer' event inside a measured step"),
      std::string::npos);
  nlohmann::json bad = stepsTrace();
  bad["traceEvents"].push_back({{"ph", "X"}, {"pid", 0}, {"ts", "soon"}, {"dur", 1}});
  EXPECT_NE(message(bad.dump()).find("expected the numbers 'ts' and 'dur'"), std::string::npos);
  EXPECT_THROW(readLayerTrace("/nonexistent/trace.json", 0), NotFoundError);
}

// Two ranks, a warm-up and two measured steps each. Every step: a forward of 1000 us holding a
// first gradient wait of 100 us and a later one of 50 us with a 20 us update inside; a backward
// of 2000 us; a closing agreement of 30 us after it. The engine's thread reduces a chunk across
// the backward's end in the first measured step only (on for 40 us past it), and one inside the
// backward in the other. `stepLength`: 10000 us makes consecutive steps touch.
nlohmann::json exposedTrace(double stepLength = 5000) {
  nlohmann::json events = nlohmann::json::array({mainThread(0), mainThread(1)});
  for (int rank = 0; rank < 2; ++rank) {
    for (int step = 0; step < 3; ++step) {
      const double t = 10000.0 * step;
      events.push_back(
          complete(rank, 0, "step", step == 0 ? "iteration 1 (warm-up)" : "iteration", t, stepLength));
      events.push_back(complete(rank, 0, "forward", "forward", t + 100, 1000));
      events.push_back(complete(rank, 0, "gradient_exposed", "gradient_exposed", t + 110, 100));
      events.push_back(complete(rank, 0, "gradient_exposed", "gradient_exposed", t + 600, 50));
      events.push_back(complete(rank, 0, "update", "update", t + 610, 20));
      events.push_back(complete(rank, 0, "backward", "backward", t + 1200, 2000));
      events.push_back(complete(rank, 0, "gradient_exposed", "gradient_exposed", t + 3250, 30));
      const double chunk = step == 1 ? t + 3100 : t + 2000;  // ends 40 us past the backward / inside it
      events.push_back(complete(rank, 1, "engine", "reduce group 0", chunk, 140));
    }
  }
  return {{"traceEvents", events}};
}

TEST(ExposedGradient, TheWaitsByWhereTheStepMetThemAndTheChunkInFlight) {
  const TraceFile file(exposedTrace().dump());
  const ExposedGradient e = readExposedGradient(file.path());
  EXPECT_EQ(e.steps, 4);  // two measured steps on each rank, not the warm-ups
  EXPECT_NEAR(e.forwardFirst, 100e-6, 1e-12);
  EXPECT_NEAR(e.forwardLater, 30e-6, 1e-12);  // the update inside is not the wait's
  EXPECT_NEAR(e.afterBackward, 30e-6, 1e-12);
  EXPECT_NEAR(e.total(), 160e-6, 1e-12);
  EXPECT_NEAR(e.inFlightShare, 0.5, 1e-12);
  EXPECT_NEAR(e.inFlightAfter, 40e-6, 1e-12);
  const TraceFile touching(exposedTrace(10000).dump());  // each step ends where the next begins
  EXPECT_EQ(readExposedGradient(touching.path()).steps, 4);
}

TEST(ExposedGradient, NoneWithoutAWaitOrAReduction) {
  const TraceFile file(stepsTrace().dump());  // layers, no backward, no gradient wait
  EXPECT_EQ(readExposedGradient(file.path()).steps, 0);
  EXPECT_THROW(readExposedGradient("/nonexistent/trace.json"), NotFoundError);
}

}  // namespace
}  // namespace paraxis::calib
