#pragma once
// Where a replicated run's exposed gradient time went, from its `train --trace` file
// (docs/trace.md): the waits the report's `gradient_exposed` sums, by where the step met them,
// and the reduction call the gradient engine still had in flight when backward ended, which
// the next forward's first group waits behind. What `validate --trace` holds the oracle's
// exposed gradient time against.
#include <string>

#include "calib/trace_events.hpp"

namespace paraxis::calib {

struct ExposedGradient {
  int steps = 0;  // the measured steps with a backward, over every rank (0: none, or no reduction)
  // Seconds a step, means over those steps: the forward's first wait for a gradient group (under
  // forward priority, for the previous step's first layers), its later waits, and the waits
  // after backward (the step's closing agreement, where the ranks meet the slowest one; under
  // fifo order the reductions as well). Updates applied inside a wait are not its time.
  double forwardFirst = 0, forwardLater = 0, afterBackward = 0;
  // The share of those steps whose backward ended with one of the engine's reduction calls in
  // flight (a chunk sent beside backward), and how long that call ran on past backward's end,
  // the mean over them.
  double inFlightShare = 0, inFlightAfter = 0;
  double total() const { return forwardFirst + forwardLater + afterBackward; }
};

// Every rank's measured steps. Throws as readRankTraces (calib/trace_events.hpp).
ExposedGradient readExposedGradient(const std::string& path);
ExposedGradient exposedGradient(const RankTraces& ranks);

}  // namespace paraxis::calib
