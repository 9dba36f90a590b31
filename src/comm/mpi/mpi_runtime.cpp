#include "comm/mpi/mpi_runtime.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace paraxis::comm::mpi {

void checkMpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw CommError(fmt::format("{}: {}", what, std::string(text, length)));
}

std::shared_ptr<MpiRuntime> MpiRuntime::acquire(int* argc, char*** argv) {
  // MPI can be initialised once per process; the weak pointer lets the runtime finalise
  // when its last user goes while keeping later acquire() calls cheap.
  static std::weak_ptr<MpiRuntime> current;
  if (auto existing = current.lock()) return existing;
  std::shared_ptr<MpiRuntime> runtime(new MpiRuntime());
  int initialised = 0;
  checkMpi(MPI_Initialized(&initialised), "MPI_Initialized");
  if (initialised == 0) {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (finalised != 0) throw CommError("MPI was already finalised in this process");
    checkMpi(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &runtime->provided_), "MPI_Init_thread");
    runtime->initialisedHere_ = true;
  } else {
    checkMpi(MPI_Query_thread(&runtime->provided_), "MPI_Query_thread");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  current = runtime;
  return runtime;
}

MpiRuntime::~MpiRuntime() {
  if (initialisedHere_) MPI_Finalize();
}

std::unique_ptr<Transport> MpiRuntime::world() {
  MPI_Comm dup = MPI_COMM_NULL;
  checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "MPI_Comm_dup(MPI_COMM_WORLD)");
  return makeMpiTransport(shared_from_this(), dup);
}

}  // namespace paraxis::comm::mpi
