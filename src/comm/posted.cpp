#include "comm/posted.hpp"

#include <fmt/format.h>

#include "comm/comm_state.hpp"
#include "core/trace.hpp"

namespace paraxis::comm {

Posted::Posted(const Communicator& comm, const CallInfo& info)
    : comm_(comm), context_(std::make_unique<OpContext>(comm.state(), info, 0)), done_(false),
      posted_(std::chrono::steady_clock::now()) {
  context_->timeTransport();
}

Posted::Posted(Posted&& other) noexcept
    : comm_(std::move(other.comm_)), context_(std::move(other.context_)), request_(other.request_),
      done_(other.done_), posted_(other.posted_), seconds_(other.seconds_) {
  other.done_ = true;
}

Posted& Posted::operator=(Posted&& other) noexcept {
  if (this != &other) {
    release();
    comm_ = std::move(other.comm_);
    context_ = std::move(other.context_);
    request_ = other.request_;
    done_ = other.done_;
    posted_ = other.posted_;
    seconds_ = other.seconds_;
    other.done_ = true;
  }
  return *this;
}

Posted::~Posted() { release(); }

void Posted::release() {
  if (!done_ && context_) context_->transport().abandon(request_);
  done_ = true;
}

void Posted::finish() {
  done_ = true;
  const auto now = std::chrono::steady_clock::now();
  seconds_ = std::chrono::duration<double>(now - posted_).count();
  if (trace::enabled() && context_) {
    // Posting to completion, while the thread computes: on a row of its own.
    const CallInfo& info = context_->info();
    trace::completeOnRow("point-to-point", "p2p",
                         fmt::format("{} {}", info.op == Operation::kSend ? "send to" : "receive from", info.root), posted_,
                         now, static_cast<std::int64_t>(info.bytes));
  }
}

bool Posted::test() {
  if (done_) return true;
  if (context_->test(request_)) finish();
  return done_;
}

void Posted::wait() {
  if (done_) return;
  try {
    context_->wait(request_);  // the deadline and the timeout's one line are OpContext's
  } catch (...) {
    done_ = true;  // the timeout abandoned the request
    throw;
  }
  finish();
}

double Posted::waitIdle() {
  const double moving = transportSeconds();
  const auto start = std::chrono::steady_clock::now();
  wait();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return wall - (transportSeconds() - moving);
}

Posted Posted::post(const Communicator& comm, const CallInfo& info, const void* out, void* in) {
  Posted p(comm, info);
  p.request_ = info.op == Operation::kSend ? p.context_->send(out, info.bytes, info.root)
                                           : p.context_->recv(in, info.bytes, info.root);
  return p;
}

}  // namespace paraxis::comm
