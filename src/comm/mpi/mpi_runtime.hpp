#pragma once
// The one owner of MPI in a process (STYLE.md practice 3).
//
// MPI is initialised once, asking for MPI_THREAD_MULTIPLE: the communication runtime runs
// asynchronous collectives on a progress thread while the caller may use other
// communicators. The level actually provided is checked; with less than MULTIPLE the
// runtime still works but runs every asynchronous operation inline (Communicator reads
// threadMultiple()). MPI is finalised when the last holder of the runtime releases it.
// Every MPI return code is checked and turned into text with MPI_Error_string.
#include <mpi.h>

#include <memory>
#include <string>

#include "comm/transport.hpp"

namespace paraxis::comm::mpi {

class MpiRuntime : public std::enable_shared_from_this<MpiRuntime> {
 public:
  // Initialises MPI on first use; later calls return the same runtime.
  static std::shared_ptr<MpiRuntime> acquire(int* argc, char*** argv);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  bool threadMultiple() const { return provided_ == MPI_THREAD_MULTIPLE; }
  // A transport over a duplicate of MPI_COMM_WORLD.
  std::unique_ptr<Transport> world();

 private:
  MpiRuntime() = default;
  int provided_ = MPI_THREAD_SINGLE;
  bool initialisedHere_ = false;
};

// Throws CommError "<what>: <MPI error text>" unless rc is MPI_SUCCESS.
void checkMpi(int rc, const char* what);

std::unique_ptr<Transport> makeMpiTransport(std::shared_ptr<MpiRuntime> runtime, MPI_Comm comm);

}  // namespace paraxis::comm::mpi
