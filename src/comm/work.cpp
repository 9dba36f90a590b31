#include "comm/work.hpp"

namespace paraxis::comm {

void detail::WorkState::finish(std::exception_ptr failure) {
  {
    std::lock_guard lock(mutex);
    done = true;
    error = std::move(failure);
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
