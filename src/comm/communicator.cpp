#include "comm/communicator.hpp"

#include "comm/comm_state.hpp"
#include "core/check.hpp"

namespace paraxis::comm {

Communicator::Communicator(std::shared_ptr<Transport> transport, CommunicatorOptions options)
    : state_(std::make_shared<detail::CommState>(std::move(transport), options)) {}

detail::CommState& Communicator::state() const {
  check(state_ != nullptr, "communicator is valid");
  return *state_;
}

int Communicator::rank() const { return state().transport().rank(); }
int Communicator::size() const { return state().transport().size(); }
std::string Communicator::hostName() const { return state().transport().hostName(); }
const CommunicatorOptions& Communicator::options() const { return state().options(); }

Communicator Communicator::split(int color, int key) const {
  std::shared_ptr<Transport> sub;
  // Runs as an operation so that it waits for queued asynchronous work first.
  state().run({.op = Operation::kBarrier}, [&](OpContext&) { sub = state().transport().split(color, key); });
  return Communicator(std::move(sub), options());
}

Communicator Communicator::duplicate() const { return split(0, rank()); }

Communicator Communicator::withOptions(CommunicatorOptions options) const {
  Communicator copy = duplicate();
  return Communicator(copy.state().sharedTransport(), options);
}

}  // namespace paraxis::comm
