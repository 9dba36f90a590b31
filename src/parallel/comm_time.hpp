#pragma once
// Where the distributed layers' communication time goes, in the oracle's vocabulary: halo
// exchanges of windowed layers, shuffles between distributions, and the small collectives of
// batch-norm and global pooling over a spatial group (layer collectives). A thread sets a sink;
// the layers, forward and backward (autograd runs CPU graphs on the calling thread), add to it.
#include <chrono>
#include <cstdint>

namespace paraxis::parallel {

enum class CommKind { kHalo, kShuffle, kCollective };

struct CommTimes {
  double halo = 0;
  double shuffle = 0;
  double collectives = 0;
  double total() const { return halo + shuffle + collectives; }
};

// The sink of this thread (null: not counted). The caller keeps it alive while it is set.
void setCommTimeSink(CommTimes* sink);
// Adds the time from `start` to now under `kind` (and, when tracing, the interval itself, with
// the bytes this rank sent and received; < 0: not known).
void addCommTime(CommKind kind, std::chrono::steady_clock::time_point start, std::int64_t bytes = -1);

}  // namespace paraxis::parallel
