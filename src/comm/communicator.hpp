#pragma once
// A communicator: a group of ranks, its transport, and the rules every operation on it
// follows — a sequence number per collective call, a deadline on every wait, optional
// fingerprint verification, and an in-order executor for asynchronous calls.
//
// Communicator is a cheap handle (copies share state). Operations on one communicator run
// one at a time in call order, either inline (blocking calls) or on the communicator's
// progress thread (the i-prefixed calls, which return a Work handle).
#include <cstdint>
#include <memory>
#include <string>

#include "comm/transport.hpp"

namespace paraxis::comm {

// The one default of the deadline knob (comm_deadline) and of a communicator built without it.
inline constexpr double kDefaultDeadlineSeconds = 120.0;

struct CommunicatorOptions {
  double deadlineSeconds = kDefaultDeadlineSeconds;  // every blocking wait; operations may override it
  bool verify = false;            // exchange and compare fingerprints before each collective
};

namespace detail {
class CommState;
}

class Communicator {
 public:
  Communicator() = default;
  explicit Communicator(std::shared_ptr<Transport> transport, CommunicatorOptions options = {});

  bool valid() const { return state_ != nullptr; }
  int rank() const;
  int size() const;
  std::string hostName() const;
  const CommunicatorOptions& options() const;

  // Collective: ranks passing the same colour form a communicator, ordered by key (then rank).
  Communicator split(int color, int key) const;
  Communicator duplicate() const;
  Communicator withOptions(CommunicatorOptions options) const;  // a duplicate with other options

  detail::CommState& state() const;

 private:
  std::shared_ptr<detail::CommState> state_;
};

}  // namespace paraxis::comm
