// A rank killed in the middle of a run: the others must exit non-zero within twice the
// deadline (kill_test.sh measures it). Usage: kill_test DEADLINE_SECONDS
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "comm/allreduce.hpp"
#include "comm/world.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  const double deadline = argc > 1 ? std::atof(argv[1]) : 2.0;
  paraxis::comm::World world = paraxis::comm::openWorld(&argc, &argv, {.deadlineSeconds = deadline});
  const paraxis::comm::Communicator& comm = world.comm;
  std::vector<float> data(1 << 20, 1.0F);
  try {
    for (int step = 0;; ++step) {
      if (comm.rank() == 1 && step == 3) {
        std::printf("rank 1: killing itself at step %d\n", step);
        std::fflush(stdout);
        std::raise(SIGKILL);
      }
      paraxis::comm::allreduce(comm, data.data(), data.data(), data.size(), paraxis::comm::DataType::kF32,
                               {.prescale = 1.0F / static_cast<float>(comm.size())});
    }
  } catch (const paraxis::Error& e) {
    std::printf("rank %d: %s\n", comm.rank(), e.what());
    std::fflush(stdout);
    // MPI_Finalize could wait for the dead rank: leave without it.
    std::_Exit(3);
  }
}
