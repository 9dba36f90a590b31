#pragma once
// The one owner of MPI in a process (STYLE.md practice 3).
//
// MPI is initialised once, asking for MPI_THREAD_MULTIPLE: the communication runtime runs
// asynchronous collectives on a progress thread while the caller may use other
// communicators. The level actually provided is checked; with less than MULTIPLE the
// runtime still works but runs every asynchronous operation inline (Communicator reads
// threadMultiple()). MPI is finalised when the last holder of the runtime releases it,
// unless an exception is unwinding: then a peer failed or this rank gave up, finalising
// would wait for ranks that never come, and the process leaves without it (mpirun then ends
// the job). Every MPI return code is checked and turned into text with MPI_Error_string.
// MPI's own blocking set-up calls (split, dup, finalize) run under a watchdog: a peer that
// does not join within the deadline ends this process with one line naming the call.
#include <mpi.h>

#include <functional>
#include <memory>
#include <string>

#include "comm/transport.hpp"

namespace paraxis::comm::mpi {

class MpiRuntime : public std::enable_shared_from_this<MpiRuntime> {
 public:
  // Initialises MPI on first use (under the watchdog: a rank that never starts must not hang
  // the others in MPI_Init); later calls return the same runtime. Either way the blocking
  // calls below use `deadlineSeconds` from now on (the world communicator's).
  static std::shared_ptr<MpiRuntime> acquire(int* argc, char*** argv, double deadlineSeconds);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  bool threadMultiple() const { return provided_ == MPI_THREAD_MULTIPLE; }
  // A transport over a duplicate of MPI_COMM_WORLD.
  std::unique_ptr<Transport> world();
  // The deadline of the blocking calls below (the world communicator's).
  void setDeadline(double seconds) { deadlineSeconds_ = seconds; }
  // Runs a blocking MPI call that needs every rank; if it has not returned within the
  // deadline, prints "paraxis: rank R of N: <what>: ..." and ends the process (exit code 2).
  void blocking(const char* what, const std::function<int()>& call) const;

 private:
  MpiRuntime() = default;
  int provided_ = MPI_THREAD_SINGLE;
  bool initialisedHere_ = false;
  double deadlineSeconds_ = 120;
};

// Throws CommError "<what>: <MPI error text>" unless rc is MPI_SUCCESS.
void checkMpi(int rc, const char* what);

std::unique_ptr<Transport> makeMpiTransport(std::shared_ptr<MpiRuntime> runtime, MPI_Comm comm);

}  // namespace paraxis::comm::mpi
