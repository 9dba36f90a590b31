#pragma once
// The handle of an asynchronous operation (PyTorch c10d's Work, reduced to what we need).
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>

namespace paraxis::comm {

namespace detail {
struct WorkState {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::exception_ptr error;
  double seconds = 0;  // how long the operation ran (not how long it waited in the queue)

  void finish(std::exception_ptr failure, double ranSeconds = 0);
};
}  // namespace detail

class Work {
 public:
  Work() = default;
  explicit Work(std::shared_ptr<detail::WorkState> state) : state_(std::move(state)) {}

  // True once the operation finished (successfully or not). A default Work is finished.
  bool test() const;
  // Blocks until the operation finished and rethrows its error. The operation's own
  // deadline bounds the wait.
  void wait() const;
  // The error the operation ended with, or null.
  std::exception_ptr error() const;
  // How long the operation itself ran, once finished (queueing excluded).
  double seconds() const;

 private:
  std::shared_ptr<detail::WorkState> state_;
};

}  // namespace paraxis::comm
