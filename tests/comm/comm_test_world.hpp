#pragma once
// The test harness's world (set up in comm_test_main.cpp). Each test takes a fresh duplicate
// so that a test that breaks its communicator on purpose cannot disturb the next one.
#include "comm/allreduce.hpp"
#include "comm/collectives.hpp"
#include "core/error.hpp"
#include "comm/communicator.hpp"

namespace paraxis::comm::testing {

extern Communicator* gWorld;
extern int gExpectedHosts;  // from --expect-hosts; 0 when the run did not say
Communicator freshComm(CommunicatorOptions options = {.deadlineSeconds = 60, .verify = true});

}  // namespace paraxis::comm::testing
