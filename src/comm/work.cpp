#include "comm/work.hpp"

namespace paraxis::comm {

void detail::WorkState::finish(std::exception_ptr failure, double ranSeconds) {
  {
    std::lock_guard lock(mutex);
    done = true;
    error = std::move(failure);
    seconds = ranSeconds;
  }
  done_cv.notify_all();
}

bool Work::test() const {
  if (!state_) return true;
  std::lock_guard lock(state_->mutex);
  return state_->done;
}

void Work::wait() const {
  if (!state_) return;
  std::unique_lock lock(state_->mutex);
  state_->done_cv.wait(lock, [&] { return state_->done; });
  if (state_->error) std::rethrow_exception(state_->error);
}

std::exception_ptr Work::error() const {
  if (!state_) return nullptr;
  std::lock_guard lock(state_->mutex);
  return state_->error;
}

}  // namespace paraxis::comm

namespace paraxis::comm {

double Work::seconds() const {
  if (!state_) return 0;
  std::lock_guard lock(state_->mutex);
  return state_->seconds;
}

}  // namespace paraxis::comm
