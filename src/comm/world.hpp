#pragma once
// The process's world communicator. The backend is chosen at build time: MPI where it was
// found (comm/mpi/), otherwise a single rank (comm/self/).
#include <memory>

#include "comm/communicator.hpp"

namespace paraxis::comm {

struct World {
  Communicator comm;
  std::shared_ptr<void> runtime;  // keeps the backend (MPI) alive while the world is in use
};

// Initialises the backend on first use (MPI with MPI_THREAD_MULTIPLE requested).
World openWorld(int* argc, char*** argv, CommunicatorOptions options = {});
// True when this process was started by mpirun (OpenMPI's environment is present).
bool launchedByMpirun();
const char* backendName();

}  // namespace paraxis::comm
