#include "comm/mpi/mpi_runtime.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include "core/error.hpp"

namespace paraxis::comm::mpi {

void checkMpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw CommError(fmt::format("{}: {}", what, std::string(text, length)));
}

std::shared_ptr<MpiRuntime> MpiRuntime::acquire(int* argc, char*** argv, double deadlineSeconds) {
  // MPI can be initialised once per process; the weak pointer lets the runtime finalise
  // when its last user goes while keeping later acquire() calls cheap.
  static std::weak_ptr<MpiRuntime> current;
  if (auto existing = current.lock()) {
    existing->setDeadline(deadlineSeconds);
    return existing;
  }
  std::shared_ptr<MpiRuntime> runtime(new MpiRuntime());
  int initialised = 0;
  checkMpi(MPI_Initialized(&initialised), "MPI_Initialized");
  if (initialised == 0) {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (finalised != 0) throw CommError("MPI was already finalised in this process");
    runtime->setDeadline(deadlineSeconds);
    runtime->blocking("MPI_Init_thread",
                      [&] { return MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &runtime->provided_); });
    runtime->initialisedHere_ = true;
  } else {
    checkMpi(MPI_Query_thread(&runtime->provided_), "MPI_Query_thread");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  current = runtime;
  return runtime;
}

MpiRuntime::~MpiRuntime() {
  if (!initialisedHere_ || std::uncaught_exceptions() > 0) return;
  blocking("MPI_Finalize", [] { return MPI_Finalize(); });
}

void MpiRuntime::blocking(const char* what, const std::function<int()>& call) const {
  int initialised = 0;
  MPI_Initialized(&initialised);
  int rank = 0;
  int size = 1;
  if (initialised != 0) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size == 1) {
      checkMpi(call(), what);
      return;
    }
  }
  const std::string who = initialised != 0 ? fmt::format("rank {} of {}", rank, size) : "a starting rank";
  std::mutex mutex;
  std::condition_variable returned;
  bool done = false;
  // The watchdog may not throw into the blocked thread, and MPI cannot be cancelled: one
  // line, then leave (no destructors: they would block on MPI too).
  std::thread watchdog([&] {
    std::unique_lock lock(mutex);
    if (returned.wait_for(lock, std::chrono::duration<double>(deadlineSeconds_), [&] { return done; })) return;
    const std::string line = fmt::format(
        "paraxis: {}: {}: the other ranks did not join within the {:g} s deadline (knob comm_deadline); "
        "ending the job\n", who, what, deadlineSeconds_);
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
    std::_Exit(2);
  });
  const int rc = call();  // MPI's C functions return codes; they do not throw
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  returned.notify_all();
  watchdog.join();
  checkMpi(rc, what);
}

std::unique_ptr<Transport> MpiRuntime::world() {
  MPI_Comm dup = MPI_COMM_NULL;
  blocking("MPI_Comm_dup(MPI_COMM_WORLD)", [&] { return MPI_Comm_dup(MPI_COMM_WORLD, &dup); });
  return makeMpiTransport(shared_from_this(), dup);
}

}  // namespace paraxis::comm::mpi
