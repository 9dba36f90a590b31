// Runs the comm suites under mpirun. Every rank runs every test; a failure on any rank makes
// that rank, and so mpirun, exit non-zero. `--expect-ranks N` guards against an mpirun that
// started fewer ranks than the test asked for (or none: see ENVIRONMENT.md on running as root).
#include <cstdlib>
#include <cstring>

#include "comm_test_world.hpp"
#include "common/mpi_test_main.hpp"

namespace paraxis::comm::testing {

Communicator* gWorld = nullptr;
int gExpectedHosts = 0;

Communicator freshComm(CommunicatorOptions options) { return gWorld->withOptions(options); }

}  // namespace paraxis::comm::testing

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--expect-hosts") == 0) paraxis::comm::testing::gExpectedHosts = std::atoi(argv[i + 1]);
  }
  return paraxis::testing::runMpiTests(argc, argv, "comm tests", [](paraxis::comm::Communicator* world) {
    paraxis::comm::testing::gWorld = world;
  });
}
