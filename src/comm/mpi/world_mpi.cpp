#include <cstdlib>

#include "comm/mpi/mpi_runtime.hpp"
#include "comm/world.hpp"

namespace paraxis::comm {

World openWorld(int* argc, char*** argv, CommunicatorOptions options) {
  auto runtime = mpi::MpiRuntime::acquire(argc, argv, options.deadlineSeconds);
  return World{Communicator(runtime->world(), options), runtime};
}

bool launchedByMpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }
const char* backendName() { return "mpi"; }

}  // namespace paraxis::comm
