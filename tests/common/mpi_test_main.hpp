#pragma once
// The main() of GoogleTest suites that run under mpirun: every rank runs every test, the
// worst status wins, and rank 0 prints "<label> on N ranks: passed" (ctest looks for it, so
// an mpirun that started nothing cannot pass). `--expect-ranks N` fails a short launch.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>

#include "comm/allreduce.hpp"
#include "comm/world.hpp"

namespace paraxis::testing {

inline int runMpiTests(int argc, char** argv, const char* label,
                       const std::function<void(comm::Communicator*)>& useWorld) {
  ::testing::InitGoogleTest(&argc, argv);
  int expected = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--expect-ranks") == 0) expected = std::atoi(argv[i + 1]);
  }
  comm::World world = comm::openWorld(&argc, &argv, {.deadlineSeconds = 60, .verify = true});
  if (expected > 0 && world.comm.size() != expected) {
    std::cerr << "expected " << expected << " ranks, mpirun started " << world.comm.size() << "\n";
    return 1;
  }
  if (world.comm.rank() != 0) GTEST_FLAG_SET(brief, true);
  useWorld(&world.comm);
  int status = RUN_ALL_TESTS();
  int worst = status;
  comm::allreduce(world.comm, &status, &worst, 1, comm::DataType::kI32,
                  {.algorithm = comm::AllreduceAlgorithm::kBuiltin, .op = comm::ReduceOp::kMax});
  useWorld(nullptr);
  if (world.comm.rank() == 0) {
    std::cout << label << " on " << world.comm.size() << " ranks: " << (worst == 0 ? "passed" : "FAILED") << std::endl;
  }
  return worst;
}

}  // namespace paraxis::testing
