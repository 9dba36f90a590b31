#include "core/gradient_comm.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace paraxis {
namespace {

std::string messageOf(const GradientComm& c, GradientComm::Names names) {
  try {
    c.validate("best.json", names);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(GradientComm, DefaultsAreValid) { EXPECT_EQ(messageOf(GradientComm{}, GradientComm::Names::kFile), ""); }

TEST(GradientComm, OutOfRangeFieldsAreNamedAsTheFileOrTheCommandLineNamesThem) {
  GradientComm c;
  c.wire = WireFormat::kChunkSparse;
  c.density = 2;
  EXPECT_EQ(messageOf(c, GradientComm::Names::kFile), "best.json: comm.density: expected a fraction in (0, 1], found 2");
  EXPECT_EQ(messageOf(c, GradientComm::Names::kCommandLine), "--density: expected a fraction in (0, 1], found 2");
  c = {};
  c.density = 0.5;  // a density without the chunk-sparse wire means nothing
  EXPECT_NE(messageOf(c, GradientComm::Names::kCommandLine).find("unless the wire is chunk-sparse"), std::string::npos);
  c = {};
  c.cycleSeconds = -1;
  EXPECT_NE(messageOf(c, GradientComm::Names::kCommandLine).find("--cycle"), std::string::npos);
  c = {};
  c.fusionBytes = 1.0 / 0.0;
  EXPECT_NE(messageOf(c, GradientComm::Names::kFile).find("comm.fusion_bytes"), std::string::npos);
  c = {};
  c.chunkBytes = 0;  // no option: named as the file names it
  EXPECT_NE(messageOf(c, GradientComm::Names::kCommandLine).find("comm.chunk_bytes"), std::string::npos);
}

TEST(GradientComm, NamesRoundTripAndUnknownNamesListTheChoices) {
  for (Grouping g : {Grouping::kFusion, Grouping::kPerLayer, Grouping::kGroups}) {
    EXPECT_EQ(groupingFromName(groupingName(g), "x"), g);
  }
  for (WireFormat w : {WireFormat::kF32, WireFormat::kF16, WireFormat::kBF16, WireFormat::kChunkSparse}) {
    EXPECT_EQ(wireFromName(wireName(w), "x"), w);
  }
  EXPECT_EQ(orderFromName("fifo", "x"), ReduceOrder::kFifo);
  EXPECT_EQ(negotiationFromName("decentralized", "x"), Negotiation::kDecentralized);
  try {
    orderFromName("lifo", "--reduce-order");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--reduce-order: expected fifo or priority, found 'lifo'");
  }
}

TEST(GradientComm, WireBytes) {
  GradientComm c;
  EXPECT_DOUBLE_EQ(c.wireBytes(100), 100);
  c.wire = WireFormat::kBF16;
  EXPECT_DOUBLE_EQ(c.wireBytes(100), 50);
  c.wire = WireFormat::kChunkSparse;
  c.density = 0.1;
  EXPECT_DOUBLE_EQ(c.wireBytes(100), 10);
  EXPECT_TRUE(c.sparse());
}

TEST(GradientComm, PerLayerGroupsEachEntryAndFusionClosesAtTheThreshold) {
  GradientComm c;
  c.grouping = Grouping::kPerLayer;
  EXPECT_EQ(formGradientGroups({1, 2, 3}, c).size(), 3U);
  c.grouping = Grouping::kFusion;
  c.firstBucketBytes = 2;
  c.fusionBytes = 4;
  EXPECT_EQ(formGradientGroups({1, 2, 3, 1, 1}, c), (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4}}));
}

}  // namespace
}  // namespace paraxis
