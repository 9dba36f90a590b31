#include "calib/torch/overlap_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "comm/agreement.hpp"
#include "comm/allreduce.hpp"
#include "comm/bench.hpp"
#include "comm/collectives.hpp"
#include "comm/hierarchy.hpp"
#include "core/error.hpp"
#include "core/gradient_comm.hpp"
#include "core/median.hpp"
#include "train/torch_runtime.hpp"

namespace paraxis::calib {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTrials = 3;
constexpr int kOverlapTrials = 5;  // each a few tenths of a second, 1.5 s on the netns hosts

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A training step's worth of convolution: forward and backward of a 3x3, 64-channel layer.
class ComputeLoop {
 public:
  explicit ComputeLoop(int repeats = 4, int samples = 8, int side = 32)
      : repeats_(repeats),
        input_(torch::randn({samples, 64, side, side}).requires_grad_(true)),
        weight_(torch::randn({64, 64, 3, 3}).requires_grad_(true)) {}
  void operator()() {
    for (int i = 0; i < repeats_; ++i) torch::conv2d(input_, weight_, {}, 1, 1).sum().backward();
  }

 private:
  int repeats_;
  torch::Tensor input_, weight_;
};

// The gradient engine's calls while backward runs under forward priority (reduce/schedulers.cpp):
// its readiness agreement, then one chunk of the default size, and again.
class ChunkedCalls {
 public:
  ChunkedCalls(const comm::Communicator& comm, float* data, const comm::AllreduceOptions& options)
      : comm_(comm), data_(data), options_(options) {}
  void operator()(std::size_t count) const {
    const auto chunk = static_cast<std::size_t>(GradientComm{}.chunkBytes / sizeof(float));
    for (std::size_t at = 0; at < count; at += chunk) {
      comm::agreeOnFlags(comm_, {1});
      comm::iallreduce(comm_, data_ + at, data_ + at, std::min(chunk, count - at), comm::DataType::kF32, options_).wait();
    }
  }

 private:
  const comm::Communicator& comm_;
  float* data_;
  comm::AllreduceOptions options_;
};

// Joined when it goes out of scope too (a compute that throws must not leave it running).
class JoinedThread {
 public:
  template <typename F>
  explicit JoinedThread(F&& f) : thread_(std::forward<F>(f)) {}
  ~JoinedThread() { join(); }
  JoinedThread(const JoinedThread&) = delete;
  JoinedThread& operator=(const JoinedThread&) = delete;
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

// The engine's calls (readiness agreement, one chunk) back to back on a duplicate of `comm`
// from a thread of its own, until stop(): each round first agrees that every rank still runs,
// so all stop after the same call.
class BackgroundChunks {
 public:
  BackgroundChunks(const comm::Communicator& comm, double deadline)
      : comm_(comm.duplicate()), data_(static_cast<std::size_t>(GradientComm{}.chunkBytes / sizeof(float)), 1.0F) {
    options_.deadlineSeconds = deadline;
    options_.prescale = 1.0F / static_cast<float>(comm_.size());
    thread_ = std::make_unique<JoinedThread>([this] {
      try {
        while (comm::agreeOnFlags(comm_, {static_cast<std::uint8_t>(running_.load() ? 1 : 0)})[0] != 0) {
          comm::iallreduce(comm_, data_.data(), data_.data(), data_.size(), comm::DataType::kF32, options_).wait();
        }
      } catch (...) {
        failed_ = std::current_exception();
      }
    });
  }
  ~BackgroundChunks() { running_ = false; }  // members go in reverse: the thread is joined first
  void stop() {
    running_ = false;
    thread_->join();
    if (failed_) std::rethrow_exception(failed_);
  }

 private:
  comm::Communicator comm_;
  std::vector<float> data_;
  comm::AllreduceOptions options_;
  std::atomic<bool> running_ = true;
  std::exception_ptr failed_;
  std::unique_ptr<JoinedThread> thread_;  // last: joined before the rest goes
};

struct Beside {
  double compute = 0, waitAfter = 0;  // seconds
};

// One trial of `compute` with a reduction in flight: `start()` sets it off (a posted call, or
// a thread of its own) and returns what waits for it. Over the slowest rank, the compute and
// the wait after it.
template <typename Start>
Beside timeBeside(const comm::Communicator& comm, ComputeLoop& compute, const Start& start, double deadline) {
  comm::barrier(comm, deadline);
  const auto begin = Clock::now();
  auto finish = start();
  compute();
  const double computed = since(begin);
  finish();
  return {comm::slowestRank(comm, computed, deadline), comm::slowestRank(comm, since(begin) - computed, deadline)};
}

// The compute beside one posted allreduce of `count` floats.
Beside besideOneCall(const comm::Communicator& comm, ComputeLoop& compute, float* data, std::size_t count,
                     const comm::AllreduceOptions& options, double deadline) {
  return timeBeside(comm, compute, [&] {
    comm::Work work = comm::iallreduce(comm, data, data, count, comm::DataType::kF32, options);
    return [work] { work.wait(); };
  }, deadline);
}

// The compute beside the engine's chunked calls of `count` floats, from a thread of their own.
Beside besideChunks(const comm::Communicator& comm, ComputeLoop& compute, const ChunkedCalls& chunked,
                    std::size_t count, double deadline) {
  return timeBeside(comm, compute, [&] {
    auto failed = std::make_shared<std::exception_ptr>();
    auto thread = std::make_shared<JoinedThread>([&chunked, count, failed] {
      try {
        chunked(count);
      } catch (...) {
        *failed = std::current_exception();
      }
    });
    return [thread, failed] {
      thread->join();
      if (*failed) std::rethrow_exception(*failed);
    };
  }, deadline);
}

// The progress a reduction of `alone` seconds made beside `b.compute`, over that compute.
double progressRate(double alone, const Beside& b) {
  return std::clamp(std::clamp(alone - b.waitAfter, 0.0, alone) / b.compute, 0.0, 1.0);
}

// The previous step's reductions through the next forward under forward priority (reduce/
// schedulers.cpp once every group is agreed): a thread of its own reduces kTailGroups groups,
// one call each, the one the forward needs first first; the forward runs layer-sized spans and
// waits (asleep, as train's awaitGroup) for each group before its share of them. Alone: the
// same calls back to back. Slowest rank's times.
struct ForwardTail {
  double alone = 0, compute = 0, elapsed = 0;  // seconds
};
constexpr int kTailGroups = 4;
constexpr int kSpansPerGroup = 2;

ForwardTail tailThroughForward(const comm::Communicator& comm, ComputeLoop& span, float* data, std::size_t count,
                               const comm::AllreduceOptions& options, double deadline) {
  const std::size_t per = std::max<std::size_t>(1, count / kTailGroups);
  auto group = [&](int g) {
    comm::iallreduce(comm, data + g * per, data + g * per, per, comm::DataType::kF32, options).wait();
  };
  ForwardTail t;
  t.alone = comm::timeTrial(comm, 1, [&] { for (int g = 0; g < kTailGroups; ++g) group(g); }, deadline);
  std::mutex mutex;
  std::condition_variable changed;
  int done = 0;  // groups reduced; guarded by mutex
  std::exception_ptr failed;
  comm::barrier(comm, deadline);
  const auto begin = Clock::now();
  double computed = 0;
  {
    JoinedThread reducer([&] {
      for (int g = 0; g < kTailGroups && !failed; ++g) {
        try {
          group(g);
        } catch (...) {
          failed = std::current_exception();
        }
        std::lock_guard lock(mutex);
        ++done;
        changed.notify_all();
      }
    });
    for (int g = 0; g < kTailGroups; ++g) {
      {
        std::unique_lock lock(mutex);
        if (!changed.wait_for(lock, std::chrono::duration<double>(deadline), [&] { return done > g || failed; })) {
          throw TimeoutError(fmt::format("calibrate: gradient group {} of the forward-priority check was not reduced "
                                         "within the {:.0f} s deadline", g, deadline));
        }
      }
      if (failed) break;
      for (int k = 0; k < kSpansPerGroup; ++k) {
        const auto start = Clock::now();
        span();
        computed += since(start);
      }
    }
  }
  if (failed) std::rethrow_exception(failed);
  t.elapsed = comm::slowestRank(comm, since(begin), deadline);
  t.compute = comm::slowestRank(comm, computed, deadline);
  return t;
}

// The rate r (a fraction of the speed alone) at which the tail, moving at r while the forward
// computes and while it waits, makes the forward wait what `t` measured: plan's model
// (gradient_schedule.cpp), group g done at C_g / r and reached after F_g of compute.
double rateThroughForward(const ForwardTail& t) {
  const double perGroup = t.alone / kTailGroups;
  const double perSpans = t.compute / kTailGroups;
  const double waited = std::max(0.0, t.elapsed - t.compute);
  auto modelWait = [&](double rate) {
    double wait = 0;
    for (int g = 0; g < kTailGroups; ++g) wait = std::max(wait, (g + 1) * perGroup / rate - g * perSpans);
    return wait;
  };
  if (perGroup <= 0 || modelWait(1.0) >= waited) return 1.0;
  double low = 1e-4, high = 1.0;  // modelWait falls as the rate rises
  if (modelWait(low) <= waited) return low;
  for (int i = 0; i < 60; ++i) {
    const double mid = std::sqrt(low * high);
    (modelWait(mid) > waited ? low : high) = mid;
  }
  return std::sqrt(low * high);
}

// Each trial's figures, alone and beside timed back to back: the machine's speed drifts over
// seconds on a shared VM (calibrations minutes apart read slowdown 1.00 and 1.39 on the netns
// hosts), so each ratio is taken within its trial and the medians over the trials.
struct Trials {
  std::vector<double> computeAlone, reductionAlone, computeBeside, waitAfter, chunkedAlone, chunkedBeside,
      chunkedWaitAfter, slowdown, hidden, chunked, tailAlone, tailCompute, tailElapsed, forward;
};

}  // namespace

OverlapMeasurement measureOverlap(const comm::Communicator& comm, double deadline) {
  train::configureTorchThreads(1, 1);
  ComputeLoop compute;
  OverlapMeasurement m;
  // Each timing warms up first (oneDNN's kernel choice, the autograd buffers, first touch);
  // the probes size the reduction.
  const double computeProbe = comm::timeCollectively(comm, 1, 1, compute, deadline);
  // A reduction 1.5x as long as the compute alone, so that some of it is left when the
  // compute ends and its progress beside the compute can be read off.
  std::vector<float> data(std::size_t{16} << 20, 1.0F);  // 64 MiB at most
  comm::AllreduceOptions averaging;
  averaging.prescale = 1.0F / static_cast<float>(comm.size());
  averaging.deadlineSeconds = deadline;
  auto reduce = [&](std::size_t count) { comm::iallreduce(comm, data.data(), data.data(), count, comm::DataType::kF32, averaging).wait(); };
  std::size_t count = std::size_t{1} << 20;
  const double probe = comm::timeCollectively(comm, 1, 1, [&] { reduce(count); }, deadline);
  count = std::clamp<std::size_t>(static_cast<std::size_t>(static_cast<double>(count) * 1.5 * computeProbe / probe),
                                  std::size_t{64} << 10, data.size());
  m.bytes = static_cast<double>(count) * sizeof(float);
  // The same bytes as the engine sends them while backward runs.
  const ChunkedCalls chunked(comm, data.data(), averaging);
  // The forward's spans (~1.4 ms, as between a step's layers), and a tail half as long alone
  // as their compute (resnet18@64 data=2's ~5 ms against a ~20 ms forward), so that the forward
  // meets it at several groups.
  ComputeLoop span(1, 1);
  const double spanProbe = comm::timeCollectively(comm, 1, 1, span, deadline);
  const std::size_t tailCount = std::clamp<std::size_t>(
      static_cast<std::size_t>((std::size_t{1} << 20) * 0.5 * kTailGroups * kSpansPerGroup * spanProbe / probe),
      std::size_t{16} << 10, data.size());
  reduce(count);  // warm-ups at this size
  chunked(count);
  Trials t;
  for (int trial = 0; trial < kOverlapTrials; ++trial) {
    t.computeAlone.push_back(comm::timeTrial(comm, 1, compute, deadline));
    t.reductionAlone.push_back(comm::timeTrial(comm, 1, [&] { reduce(count); }, deadline));
    const Beside one = besideOneCall(comm, compute, data.data(), count, averaging, deadline);
    t.chunkedAlone.push_back(comm::timeTrial(comm, 1, [&] { chunked(count); }, deadline));
    const Beside calls = besideChunks(comm, compute, chunked, count, deadline);
    t.computeBeside.push_back(one.compute);
    t.waitAfter.push_back(one.waitAfter);
    t.chunkedBeside.push_back(calls.compute);
    t.chunkedWaitAfter.push_back(calls.waitAfter);
    t.slowdown.push_back(one.compute / t.computeAlone.back());
    t.hidden.push_back(progressRate(t.reductionAlone.back(), one));
    t.chunked.push_back(progressRate(t.chunkedAlone.back(), calls));
    const ForwardTail tail = tailThroughForward(comm, span, data.data(), tailCount, averaging, deadline);
    t.tailAlone.push_back(tail.alone);
    t.tailCompute.push_back(tail.compute);
    t.tailElapsed.push_back(tail.elapsed);
    t.forward.push_back(rateThroughForward(tail));
  }
  m.computeAlone = median(t.computeAlone);
  m.reductionAlone = median(t.reductionAlone);
  m.computeBeside = median(t.computeBeside);
  m.waitAfter = median(t.waitAfter);
  m.chunkedAlone = median(t.chunkedAlone);
  m.chunkedBeside = median(t.chunkedBeside);
  m.chunkedWaitAfter = median(t.chunkedWaitAfter);
  m.overlap.slowdown = std::clamp(median(t.slowdown), 1.0, 100.0);
  m.overlap.hidden = median(t.hidden);
  m.overlap.chunked = median(t.chunked);
  m.tailAlone = median(t.tailAlone);
  m.tailCompute = median(t.tailCompute);
  m.tailElapsed = median(t.tailElapsed);
  m.tailGroups = kTailGroups;
  m.overlap.forward = median(t.forward);
  return m;
}

namespace {

// A blocking 8-byte allreduce over `group`: a layer's collective, or a step's closing wait.
void synchroniseOn(const comm::Communicator& group, double deadline) {
  double word = 0;
  comm::AllreduceOptions options;
  options.deadlineSeconds = deadline;
  comm::allreduce(group, &word, &word, 1, comm::DataType::kF64, options);
}

struct SpanKind {
  int repeats = 1, samples = 1, count = 1;
  bool chained = false;  // back to back after one barrier, else each from a barrier of its own
  int side = 32;         // the images'
};

// The spans' image side that makes a layer-sized span (one 32x32 image: ~1.4 ms on the VM the
// spans were designed on) last about that long here: the slowest rank's (timeCollectively), the
// same on every rank.
// The spans stand for a step's stretches between synchronisations, and the skew and the waits
// are rates and per-synchronisation times, so the spans keep their length, not their work: at
// fixed work a VM 3.5x as slow (4.9 ms a layer-sized span) sat 13 s a sitting on 2 ranks, 40 s
// of a 105 s calibration; sized, ~5 s (2026-12-08). Work goes with the area; no larger than 64.
int spanSide(const comm::Communicator& comm, double deadline) {
  constexpr double kLayerSpan = 1.4e-3;
  constexpr int kDesignSide = 32;
  ComputeLoop probe(1, 1, kDesignSide);
  const double slowest = comm::timeCollectively(comm, 1, 5, probe, deadline);
  return std::clamp(static_cast<int>(std::lround(kDesignSide * std::sqrt(kLayerSpan / slowest))), 8, 64);
}

// `kind`'s spans, each synchronising over `group`: their mean compute and mean wait (the time
// that was not this rank's compute) into out[0] and out[1]; given `blocks`, also the mean wait
// of each of kSkewBlocks runs of spans in turn.
void timeSpans(const comm::Communicator& comm, const comm::Communicator& group, SpanKind kind, double deadline,
               double* out, double* blocks = nullptr) {
  ComputeLoop compute(kind.repeats, kind.samples, kind.side);
  compute();  // warm-up
  double computed = 0, elapsed = 0;
  if (kind.chained) comm::barrier(comm, deadline);
  const int perBlock = std::max(1, kind.count / kSkewBlocks);
  for (int t = 0; t < kind.count; ++t) {
    if (!kind.chained) comm::barrier(comm, deadline);
    const auto start = Clock::now();
    compute();
    const double spanCompute = since(start);
    synchroniseOn(group, deadline);
    const double spanElapsed = since(start);
    computed += spanCompute;
    elapsed += spanElapsed;
    if (blocks != nullptr && t / perBlock < kSkewBlocks) blocks[t / perBlock] += (spanElapsed - spanCompute) / perBlock;
  }
  out[0] = computed / kind.count;
  out[1] = (elapsed - computed) / kind.count;
}

// The 12 span means (compute and wait: layer-sized, short, long; then beside the reductions the
// same), then the alone and the beside layer-sized spans' blocks.
constexpr int kSpanMeans = 12;
constexpr double SkewSitting::*kSpanMeanFigures[kSpanMeans] = {
    &SkewSitting::layerCompute,    &SkewSitting::layerWait,         &SkewSitting::shortCompute,
    &SkewSitting::shortWait,       &SkewSitting::longCompute,       &SkewSitting::longWait,
    &SkewSitting::besideCompute,   &SkewSitting::besideWait,        &SkewSitting::shortBesideCompute,
    &SkewSitting::shortBesideWait, &SkewSitting::longBesideCompute, &SkewSitting::longBesideWait};

SkewSitting sittingFrom(const std::vector<double>& sums, double latency, int side) {
  SkewSitting m;
  m.side = side;
  m.latency = latency;
  for (int i = 0; i < kSpanMeans; ++i) m.*kSpanMeanFigures[i] = sums[i];
  const auto blocks = sums.begin() + kSpanMeans;
  m.layerWaitBlocks.assign(blocks, blocks + kSkewBlocks);
  m.besideWaitBlocks.assign(blocks + kSkewBlocks, blocks + 2 * kSkewBlocks);
  return m;
}

}  // namespace

SkewSitting timeSkewSitting(const comm::Communicator& comm, double deadline) {
  train::configureTorchThreads(1, 1);
  const double latency =
      comm::timeCollectively(comm, 1, 2 * kTrials, [&] { synchroniseOn(comm, deadline); }, deadline);
  // Spans of a few milliseconds to a few tens, as between a step's synchronisations; each rank
  // its own times (the wait is what one rank loses to the others). The waits are rare long
  // stalls among short ones: with 6 spans of each length, calibrations minutes apart read
  // 1.1-19.8 % on 2 ranks here, so 24 of each (~3 s more).
  // The drift shows over the long spans; what a synchronisation waits whatever the compute
  // before it, over many layer-sized ones (~1.4 ms, as between a step's halo exchanges): on
  // two points 11 and 45 ms apart the line's intercept read 0, 0.1 and 1.1 ms minutes apart.
  // The layer-sized spans run back to back, as a step's layers do: a rank that waited and gets
  // its core back late makes the others wait at the next synchronisation (a barrier before each
  // span would absorb that, and did: 0-0.1 ms per synchronisation against 0.2 ms in training).
  // The longer spans each start from a barrier, to see the drift alone.
  const int side = spanSide(comm, deadline);
  const SpanKind layerSpans{.count = 240, .chained = true, .side = side},
      shortSpans{.samples = 8, .count = 24, .side = side},
      longSpans{.repeats = 4, .samples = 8, .count = 24, .side = side};
  std::vector<double> sums(kSpanMeans + 2 * kSkewBlocks, 0.0);
  double* const sum = sums.data();
  timeSpans(comm, comm, layerSpans, deadline, sum, sum + kSpanMeans);
  timeSpans(comm, comm, shortSpans, deadline, sum + 2);
  timeSpans(comm, comm, longSpans, deadline, sum + 4);
  // The layer-sized spans again with the gradient engine's calls in flight on a thread of its
  // own, as a replicated step's synchronisations meet them (forward priority reduces from
  // backward into the next forward): the waiting rank gives its core away and gets it back
  // only after that thread's time slice. The spans synchronise within a host, as a split
  // layer's group does, while the engine's calls span every rank (synchronising the whole 2x2
  // netns job instead read 3 ms, within each host 1.6-1.7 ms, where resnet18 data=2 x h=2
  // training waited ~1.4 ms at each halo exchange and batch norm). Then the short and the long
  // spans beside them, over every rank as a replicated step's closing wait: the engine's threads
  // take one rank's cores and then another's, so the ranks drift apart faster than alone (2 ranks
  // here: 0.5-6.2 % of the compute, five of seven calibrations 3.5-6.2 %, against 0.4-7.5 % alone,
  // 2026-12-06).
  {
    const comm::Hierarchy hosts = comm::Hierarchy::fromHosts(comm);
    BackgroundChunks background(comm, deadline);
    timeSpans(comm, hosts.local(), layerSpans, deadline, sum + 6, sum + kSpanMeans + kSkewBlocks);
    timeSpans(comm, comm, shortSpans, deadline, sum + 8);
    timeSpans(comm, comm, longSpans, deadline, sum + 10);
    background.stop();
  }
  comm::AllreduceOptions options;
  options.deadlineSeconds = deadline;
  comm::allreduce(comm, sum, sum, sums.size(), comm::DataType::kF64, options);
  for (double& s : sums) s /= comm.size();
  return sittingFrom(sums, latency, side);
}

namespace {

// Each block's wait (the whole mean where a sitting has no blocks) less the latency and the
// drift's share of the compute before it, in [0, 1] s.
std::vector<double> synchronisationWaits(const std::vector<double>& blocks, double mean, double latency,
                                         double driftShare) {
  std::vector<double> waits = blocks.empty() ? std::vector<double>{mean} : blocks;
  for (double& w : waits) w = std::clamp(w - latency - driftShare, 0.0, 1.0);
  return waits;
}
std::vector<double> layerWaits(const SkewSitting& s, double skew) {
  return synchronisationWaits(s.layerWaitBlocks, s.layerWait, s.latency, skew * s.layerCompute);
}
std::vector<double> besideWaits(const SkewSitting& s, double skew) {
  return synchronisationWaits(s.besideWaitBlocks, s.besideWait, s.latency, skew * s.besideCompute);
}

// The figures from one set of span means (a sitting's, or the pool's).
SkewMeasurement skewFrom(const SkewSitting& s) {
  SkewMeasurement m;
  m.spans = s;
  m.compute = (s.shortCompute + s.longCompute) / 2;
  m.wait = (s.shortWait + s.longWait) / 2;
  auto slope = [](double shortCompute, double shortWait, double longCompute, double longWait) {
    const double span = longCompute - shortCompute;
    return span > 0 ? std::clamp((longWait - shortWait) / span, 0.0, 1.0) : 0.0;
  };
  m.skew = slope(s.shortCompute, s.shortWait, s.longCompute, s.longWait);
  m.skewBeside = slope(s.shortBesideCompute, s.shortBesideWait, s.longBesideCompute, s.longBesideWait);
  m.syncWait = median(layerWaits(s, m.skew));
  // The engine's calls beside a synchronisation add to its wait, never take from it; the two
  // estimates scatter apart with the machine's load (one calibration read 221 us without them
  // and 0 with them, which left the 2-rank matrix's h=2 communication predicted at a third of
  // what ran), so the smaller one is not taken.
  m.syncWaitBeside = std::max(m.syncWait, median(besideWaits(s, m.skew)));
  return m;
}

}  // namespace

SkewMeasurement skewFromSittings(const std::vector<SkewSitting>& sittings) {
  if (sittings.empty()) throw InternalError("skewFromSittings: no sitting");
  const auto n = static_cast<double>(sittings.size());
  SkewSitting pool;
  for (const SkewSitting& s : sittings) {
    pool.latency += s.latency / n;
    for (const auto figure : kSpanMeanFigures) pool.*figure += s.*figure / n;
  }
  // The spans' means pooled; the slopes each the median of the sittings' own, and the waits
  // the median of every sitting's blocks, each less its own sitting's latency (one sitting in a
  // slow spell read a 0.4 ms latency, which taken from the pool left sync_wait_beside at 40 us
  // where the sittings read 0, 273 and 130). A stall does not set them: it holds a few blocks of
  // a sitting or most of one (one sitting's blocks beside the engine's calls read 76, 50, 319,
  // 728, 1093, 891, 1046 and 1170 us where the next two's all read 50-150), and the median of
  // three sittings' means still took it where two of three had one: 342 us and 1.08 ms read
  // where the quiet blocks sit at 50-100 us, and the 2-rank matrix's h=2 rows were predicted
  // ~30 % over the level of the rest, and 1.8-3x of what they measured, 2026-12-07).
  SkewMeasurement m = skewFrom(pool);
  std::vector<double> layer, beside;
  for (const SkewSitting& s : sittings) {
    const SkewMeasurement alone = skewFrom(s);
    m.sittingSyncWaitBeside.push_back(alone.syncWaitBeside);
    m.sittingSkew.push_back(alone.skew);
    m.sittingSkewBeside.push_back(alone.skewBeside);
    m.sittingSyncWait.push_back(alone.syncWait);
    m.sittingSide.push_back(s.side);
    std::ranges::copy(layerWaits(s, alone.skew), std::back_inserter(layer));
    std::ranges::copy(besideWaits(s, alone.skew), std::back_inserter(beside));
  }
  m.skew = median(m.sittingSkew);
  m.skewBeside = median(m.sittingSkewBeside);
  m.syncWait = median(layer);
  m.syncWaitBeside = std::max(m.syncWait, median(beside));
  return m;
}

}  // namespace paraxis::calib
