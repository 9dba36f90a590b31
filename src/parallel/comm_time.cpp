#include "parallel/comm_time.hpp"

#include "core/trace.hpp"

namespace paraxis::parallel {
namespace {

thread_local CommTimes* tSink = nullptr;

}  // namespace

void setCommTimeSink(CommTimes* sink) { tSink = sink; }

void addCommTime(CommKind kind, std::chrono::steady_clock::time_point start, std::int64_t bytes) {
  const auto end = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(end - start).count();
  static constexpr const char* kNames[] = {"halo", "shuffle", "layer_collectives"};
  const char* name = kNames[static_cast<int>(kind)];
  trace::complete(name, name, start, end, bytes);
  if (tSink == nullptr) return;
  switch (kind) {
    case CommKind::kHalo: tSink->halo += seconds; break;
    case CommKind::kShuffle: tSink->shuffle += seconds; break;
    case CommKind::kCollective: tSink->collectives += seconds; break;
  }
}

}  // namespace paraxis::parallel
