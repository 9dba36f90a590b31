#pragma once
// A one-rank transport: lets everything above comm run in a single process without MPI.
// Collectives on one rank never send, so only the built-in reference does work (a copy).
#include <memory>

#include "comm/transport.hpp"

namespace paraxis::comm::self {

std::unique_ptr<Transport> makeSelfTransport();

}  // namespace paraxis::comm::self
