#include "parallel/comm_time.hpp"

namespace paraxis::parallel {
namespace {

thread_local CommTimes* tSink = nullptr;

}  // namespace

void setCommTimeSink(CommTimes* sink) { tSink = sink; }

void addCommTime(CommKind kind, double seconds) {
  if (tSink == nullptr) return;
  switch (kind) {
    case CommKind::kHalo: tSink->halo += seconds; break;
    case CommKind::kShuffle: tSink->shuffle += seconds; break;
    case CommKind::kCollective: tSink->collectives += seconds; break;
  }
}

}  // namespace paraxis::parallel
