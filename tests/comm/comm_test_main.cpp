// Runs the comm suites under mpirun. Every rank runs every test; a failure on any rank makes
// that rank, and so mpirun, exit non-zero. `--expect-ranks N` guards against an mpirun that
// started fewer ranks than the test asked for (or none: see ENVIRONMENT.md on running as root).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "comm/collectives.hpp"
#include "comm/world.hpp"
#include "comm_test_world.hpp"

namespace paraxis::comm::testing {

Communicator* gWorld = nullptr;
int gExpectedHosts = 0;

Communicator freshComm(CommunicatorOptions options) { return gWorld->withOptions(options); }

}  // namespace paraxis::comm::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int expected = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--expect-ranks") == 0) expected = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--expect-hosts") == 0) paraxis::comm::testing::gExpectedHosts = std::atoi(argv[i + 1]);
  }
  int status = 1;
  {
    paraxis::comm::World world = paraxis::comm::openWorld(&argc, &argv, {.deadlineSeconds = 60, .verify = true});
    paraxis::comm::testing::gWorld = &world.comm;
    if (expected > 0 && world.comm.size() != expected) {
      std::cerr << "expected " << expected << " ranks, mpirun started " << world.comm.size() << "\n";
      return 1;
    }
    if (world.comm.rank() != 0) GTEST_FLAG_SET(brief, true);
    status = RUN_ALL_TESTS();
    int worst = status;
    paraxis::comm::allreduce(world.comm, &status, &worst, 1, paraxis::comm::DataType::kI32,
                             {.algorithm = paraxis::comm::AllreduceAlgorithm::kBuiltin, .op = paraxis::comm::ReduceOp::kMax});
    status = worst;
    if (world.comm.rank() == 0) std::cout << "comm tests on " << world.comm.size() << " ranks: " << (status == 0 ? "passed" : "FAILED") << std::endl;
    paraxis::comm::testing::gWorld = nullptr;
  }
  return status;
}
