#pragma once
// How a gradient reduction in flight and the compute beside it get along on this machine
// (`paraxis calibrate --quick`): a convolution's forward and backward timed alone and with an
// allreduce on the communicator's progress thread, as the gradient engine runs it. The header
// keeps torch out of its includers.
#include "comm/communicator.hpp"
#include "hw/cluster.hpp"

namespace paraxis::calib {

struct OverlapMeasurement {
  double bytes = 0;           // the allreduce, sized to outlast the compute alone
  double reductionAlone = 0;  // seconds, slowest rank, median of trials
  double computeAlone = 0;
  double computeBeside = 0;   // the compute with the reduction in flight
  double waitAfter = 0;       // what was left of the reduction when the compute ended
  hw::Overlap overlap;        // slowdown: computeBeside / computeAlone; hidden: the reduction's
                              // progress during computeBeside over computeBeside
};

// Collective over `comm` (of two ranks or more); every rank returns the same figures.
OverlapMeasurement measureOverlap(const comm::Communicator& comm, double deadline);

}  // namespace paraxis::calib
