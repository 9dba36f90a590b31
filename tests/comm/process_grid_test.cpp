#include "comm/process_grid.hpp"

#include <gtest/gtest.h>

#include "comm/collectives.hpp"
#include "comm_test_world.hpp"

namespace paraxis::comm {
namespace {

using testing::freshComm;

TEST(ProcessGrid, AxesHandOutTheirCommunicators) {
  const Communicator world = freshComm();
  const int p = world.size();
  const int inner = p % 2 == 0 ? 2 : 1;
  ProcessGrid grid(world, {{Axis::kData, p / inner}, {Axis::kSpatialH, inner}});
  EXPECT_EQ(grid.size(Axis::kData), p / inner);
  EXPECT_EQ(grid.size(Axis::kFilter), 1);
  EXPECT_EQ(grid.coordinate(Axis::kSpatialH), world.rank() % inner);
  const Communicator& spatial = grid.along(Axis::kSpatialH);
  const Communicator& data = grid.along(Axis::kData);
  EXPECT_EQ(spatial.size(), inner);
  EXPECT_EQ(data.size(), p / inner);
  EXPECT_EQ(grid.along({Axis::kSpatialH, Axis::kData}).size(), p);
  // Members of the spatial communicator are consecutive world ranks.
  std::int32_t me = world.rank();
  std::vector<std::int32_t> members(inner);
  allgather(spatial, &me, members.data(), 1, DataType::kI32);
  for (int i = 0; i < inner; ++i) EXPECT_EQ(members[i], world.rank() - world.rank() % inner + i);
}

TEST(ProcessGrid, WrongSizeIsAUserError) {
  const Communicator world = freshComm();
  EXPECT_THROW(ProcessGrid(world, {{Axis::kData, world.size() + 1}}), ConfigError);
}

}  // namespace
}  // namespace paraxis::comm
