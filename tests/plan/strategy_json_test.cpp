#include "plan/strategy_json.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace paraxis::plan {
namespace {

TEST(StrategyJson, GradientCommunicationRoundTrips) {
  Strategy s{"data", Grid{.data = 8}, 256};
  s.comm.grouping = Grouping::kGroups;
  s.comm.groups = 6;
  s.comm.order = ReduceOrder::kFifo;
  s.comm.negotiation = Negotiation::kDecentralized;
  s.comm.wire = WireFormat::kChunkSparse;
  s.comm.density = 0.25;
  s.comm.algorithm = GradientAlgorithm::kHierarchical;
  const Strategy back = strategyFromJson(strategyJson(s), "x.json");
  EXPECT_EQ(strategyJson(back), strategyJson(s));
  EXPECT_EQ(back.comm.wire, WireFormat::kChunkSparse);
  EXPECT_EQ(back.comm.groups, 6);
  EXPECT_EQ(back.comm.algorithm, GradientAlgorithm::kHierarchical);
}

TEST(StrategyJson, AFilterHeadRoundTripsAndNeedsASpatialAxis) {
  const Strategy s{"data+spatial+filter-head", parseGrid("data=2xh=2xhead=filter"), 64};
  const nlohmann::json d = strategyJson(s);
  EXPECT_EQ(d["grid"]["head"], "filter");
  EXPECT_TRUE(strategyFromJson(d, "x.json").grid.filterHead);
  nlohmann::json old = d;
  old["grid"].erase("head");  // files written before the key: sample-parallel heads
  EXPECT_FALSE(strategyFromJson(old, "old.json").grid.filterHead);
  nlohmann::json bad = d;
  bad["grid"]["spatial_h"] = 1;
  try {
    strategyFromJson(bad, "bad.json");
    FAIL() << "accepted a filter head without a spatial axis";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: grid.head: head=filter splits the head over the spatial ranks"),
              std::string::npos)
        << e.what();
  }
}

TEST(StrategyJson, OlderFilesWithFp16OrADensityStillRead) {
  nlohmann::json d = strategyJson(Strategy{"data", Grid{.data = 2}, 64});
  d["comm"] = {{"fp16", true}};
  EXPECT_EQ(strategyFromJson(d, "old.json").comm.wire, WireFormat::kF16);
  d["comm"] = {{"density", 0.1}};
  const GradientComm sparse = strategyFromJson(d, "old.json").comm;
  EXPECT_EQ(sparse.wire, WireFormat::kChunkSparse);
  EXPECT_DOUBLE_EQ(sparse.density, 0.1);
  d["comm"] = nlohmann::json::object();
  const GradientComm defaults = strategyFromJson(d, "old.json").comm;
  EXPECT_EQ(strategyJson(Strategy{"data", Grid{.data = 2}, 64, 1, PipelineSchedule::kOneFOneB, defaults}),
            strategyJson(Strategy{"data", Grid{.data = 2}, 64}));
}

TEST(StrategyJson, BadCommValuesNameTheFileAndKey) {
  nlohmann::json d = strategyJson(Strategy{"data", Grid{.data = 2}, 64});
  d["comm"]["order"] = "lifo";
  EXPECT_THROW(
      {
        try {
          strategyFromJson(d, "best.json");
        } catch (const ConfigError& e) {
          EXPECT_STREQ(e.what(), "best.json: comm.order: expected fifo or priority, found 'lifo'");
          throw;
        }
      },
      ConfigError);
  d["comm"]["order"] = "fifo";
  d["comm"]["cycle_seconds"] = -1;
  EXPECT_THROW(strategyFromJson(d, "best.json"), ConfigError);
}

}  // namespace
}  // namespace paraxis::plan
