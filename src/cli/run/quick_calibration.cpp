// paraxis calibrate --quick: micro-benchmarks only, under mpirun, written as a cluster file.
// Per network level the job spans: a ping-pong (the point-to-point path: halo exchange,
// pipeline boundaries), the gradient engine's allreduce and a ring allgather (a split layer's
// collectives), 1 KiB to 16 MiB; every path's effective alpha and beta fitted to its sweep
// (calib/link_fit.hpp). Before that, the layers of four models timed on every rank at once,
// which fits the device with the node's sharing of cores and memory included
// (device_measurement); after it, an allreduce beside a convolution's forward and backward,
// which gives the overlap, and equal compute on every rank followed by a blocking allreduce,
// which gives the ranks' skew (calib/torch/overlap_bench.hpp); and the rate of the fp16/bf16
// wire's conversions (comm/convert_bench.hpp).
#include "cli/run/quick_calibration.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "calib/link_fit.hpp"
#include "calib/torch/overlap_bench.hpp"
#include "cli/json_output.hpp"
#include "cli/kernel_shapes.hpp"
#include "cli/model_source.hpp"
#include "cli/run/device_measurement.hpp"
#include "cli/run/run_configuration.hpp"
#include "comm/allreduce.hpp"
#include "comm/bench.hpp"
#include "comm/collectives.hpp"
#include "comm/convert_bench.hpp"
#include "comm/hierarchy.hpp"
#include "comm/world.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/table.hpp"
#include "core/thread_slice.hpp"
#include "core/units.hpp"
#include "hw/cluster_yaml.hpp"
#include "hw/presets.hpp"

namespace paraxis::cli {
namespace {

using calib::LinkOperation;
using calib::LinkSample;
using Clock = std::chrono::steady_clock;  // how long the whole measurement took

constexpr std::size_t kSmallest = 1024, kLargest = 16u << 20;
// The median of 11: a CI run's 16 MiB allreduce measured twice its trend in 3 of 5 trials (the
// VM's neighbours); 11 trials of the largest size take ~70 ms here.
constexpr int kTrials = 11;

comm::AllreduceOptions reducing(comm::ReduceOp op, double deadline) {
  comm::AllreduceOptions o;
  o.op = op;
  o.deadlineSeconds = deadline;
  return o;
}

// Rank r must sit on node r / devices_per_node, as the oracle places ranks.
void requireLayout(const comm::Communicator& world, const hw::Cluster& cluster, double deadline) {
  const comm::Hierarchy hosts = comm::Hierarchy::fromHosts(world);
  std::int64_t first[2] = {world.rank(), -world.rank()};  // min and -max of the host's world ranks
  comm::allreduce(hosts.local(), first, first, 2, comm::DataType::kI64, reducing(comm::ReduceOp::kMin, deadline));
  const std::int64_t perHost = hosts.localSize();
  const bool contiguous = first[0] == world.rank() - world.rank() % perHost && -first[1] == first[0] + perHost - 1;
  const bool fits = hosts.groups() == 1 ? perHost <= cluster.devicesPerNode : perHost == cluster.devicesPerNode;
  if (!hosts.uniform() || !contiguous || !fits || world.size() > cluster.totalDevices()) {
    throw ConfigError(fmt::format(
        "--cluster {}: places {} devices per node on {} node(s), but this job runs {} rank(s) on {} host(s) x {}{}: "
        "give a cluster that describes the job (ranks of one host consecutive)",
        cluster.name, cluster.devicesPerNode, cluster.nodes, world.size(), hosts.groups(), perHost,
        hosts.uniform() && contiguous ? "" : " (uneven or interleaved)"));
  }
}

// Seconds one call takes on the slowest rank of `group` (comm/bench.hpp), batching more calls
// per trial for small messages.
double timeCalls(const comm::Communicator& group, std::size_t bytes, const std::function<void()>& call, double deadline) {
  const int calls = static_cast<int>(std::clamp<std::size_t>((1u << 20) / bytes, 1, 50));
  return comm::timeCollectively(group, calls, kTrials, call, deadline);
}

// The three paths on level `level`: a message between rank 0 and the first rank of the next
// unit below, and the collectives over the level's first unit. Ranks outside sit it out.
std::vector<LinkSample> sweepLevel(const comm::Communicator& world, const hw::Cluster& cluster, int level,
                                   double deadline, std::vector<float>& buffer) {
  const std::int64_t inner = level == 0 ? 1 : cluster.levels[level - 1].ranks;
  const auto size = static_cast<int>(std::min<std::int64_t>(world.size(), cluster.levels[level].ranks));
  // Every unit of the level at once, as a job runs them (each host's share of a hierarchical
  // allreduce, every host's halo exchanges): 2 netns hosts x 2 ranks of this 2-core VM timed
  // one host's pair alone at 0.2 ms for a 1.7 MiB reduce-scatter that took 3.9 ms in a lenet
  // step, both hosts' pairs at once. Rank 0's unit and pair give the samples.
  const int rank = world.rank();
  const int first = rank / size * size;  // the first rank of this rank's unit
  const bool inPair = (rank == first || rank == first + inner) && first + inner < world.size();
  const comm::Communicator pair = world.split(2 * (rank / size) + (inPair ? 0 : 1), rank);
  const comm::Communicator unit = world.split(rank / size, rank);
  std::vector<LinkSample> samples;
  float* data = buffer.data();
  for (std::size_t bytes = kSmallest; bytes <= kLargest; bytes *= 4) {
    const std::size_t count = bytes / sizeof(float);
    if (inPair) {
      const int peer = 1 - pair.rank();
      const double roundTrip = timeCalls(pair, bytes, [&] {
        if (pair.rank() == 0) comm::send(pair, data, count, comm::DataType::kF32, peer, {.deadlineSeconds = deadline});
        comm::recv(pair, data, count, comm::DataType::kF32, peer, {.deadlineSeconds = deadline});
        if (pair.rank() == 1) comm::send(pair, data, count, comm::DataType::kF32, peer, {.deadlineSeconds = deadline});
      }, deadline);
      samples.push_back({hw::CommPath::kPointToPoint, LinkOperation::kPointToPoint, {2, inner}, double(bytes), roundTrip / 2});
    }
    if (const int members = unit.size(); members > 1) {
      comm::AllreduceOptions averaging = reducing(comm::ReduceOp::kSum, deadline);
      averaging.prescale = 1.0F / static_cast<float>(members);  // as the gradient engine averages
      const double reduce = timeCalls(unit, bytes, [&] {
        comm::iallreduce(unit, data, data, count, comm::DataType::kF32, averaging).wait();
      }, deadline);
      samples.push_back({hw::CommPath::kGradientAllreduce, LinkOperation::kAllreduce,
                         {members, 1, hw::CommPath::kGradientAllreduce}, double(bytes), reduce});
      // Each rank's block comes from behind the gathered total (the buffer holds two).
      const std::size_t block = count / static_cast<std::size_t>(members);
      const double gather = timeCalls(unit, bytes, [&] {
        comm::allgather(unit, data + count, data, block, comm::DataType::kF32, {.deadlineSeconds = deadline});
      }, deadline);
      samples.push_back({hw::CommPath::kCollectives, LinkOperation::kAllgather, {members, 1}, double(block * members * 4), gather});
    }
  }
  comm::barrier(world, deadline);
  return samples;
}

struct QuickResult {
  hw::Cluster before;  // as given
  DeviceMeasurement device;
  std::vector<calib::PathLinkFit> links;
  std::optional<calib::OverlapMeasurement> overlap;  // with two ranks or more
  std::optional<calib::SkewMeasurement> skew;        // the same
  hw::Cluster calibrated;
  int ranks = 1, hosts = 1;
  int ranksOnCores = 1, cores = 1;  // the ranks that share this rank's kernel, and its cores
  double seconds = 0;
  // Where those seconds went, by phase in the order first met (PhaseClock's keys), each phase's
  // laps summed: what to cut where a calibration runs past its 2 minutes (the 2x2 netns hosts of
  // a VM twice as slow: 163 s, 59 of them the skew sittings and 76 the layers, 2026-12-07).
  std::vector<std::pair<std::string, double>> phases;
  std::string dtype;  // whose peak the device fit may raise
  std::vector<std::string> models;  // whose layers it timed
};

// The point-to-point figures become the levels' own (the wire as MPI drives it); the other
// paths keep theirs where they differ from it.
void adoptPointToPoint(hw::Cluster& c) {
  std::vector<hw::PathLink>& p2p = c.implementation.paths[static_cast<int>(hw::CommPath::kPointToPoint)];
  for (const hw::PathLink& link : p2p) {
    for (hw::NetworkLevel& level : c.levels) {
      if (level.name == link.level) level.alpha = link.alpha, level.beta = link.beta;
    }
  }
  p2p.clear();
}

// Every level the job spans, inner first; rank 0 ends with every sample.
std::vector<LinkSample> sweepLevels(const comm::Communicator& world, const hw::Cluster& cluster, double deadline,
                                    std::ostream& progress) {
  std::vector<float> buffer(2 * kLargest / sizeof(float), 1.0F);
  std::vector<LinkSample> samples;
  std::int64_t spanned = 1;
  for (int level = 0; level < static_cast<int>(cluster.levels.size()); ++level) {
    const std::int64_t size = std::min<std::int64_t>(world.size(), cluster.levels[level].ranks);
    if (size <= spanned) continue;
    progress << fmt::format("timing level {} ({} ranks): ping-pong, gradient allreduce, allgather, {} to {} ...\n",
                            cluster.levels[level].name, size, units::formatBytes(kSmallest), units::formatBytes(kLargest));
    progress.flush();
    const std::vector<LinkSample> more = sweepLevel(world, cluster, level, deadline, buffer);
    samples.insert(samples.end(), more.begin(), more.end());
    spanned = size;
  }
  return samples;
}

// The wire's conversions on every rank at once (they share the node's memory bandwidth, as the
// progress threads of a job do); the slowest rank's rate.
hw::WireConversion measureWireConversion(const comm::Communicator& world, double deadline) {
  const comm::ConvertPath path = comm::activeConvertPath();  // only the path the wire runs
  const std::vector<comm::ConversionRow> rows =
      comm::runConversionBench({.elements = std::size_t{4} << 20, .trials = 3, .paths = {path}});
  double rates[2] = {comm::allreduceConversionRate(rows, comm::DataType::kF16, path),
                     comm::allreduceConversionRate(rows, comm::DataType::kBF16, path)};
  comm::allreduce(world, rates, rates, 2, comm::DataType::kF64, reducing(comm::ReduceOp::kMin, deadline));
  return {.f16 = rates[0], .bf16 = rates[1]};
}

// The ranks' drift, in sittings spread over the calibration (measure() sits three times) and
// pooled: one sitting's waits swung 2-3x between calibrations minutes apart (sync_wait_beside
// 116-369 us, skew 2.2-8.9 % over five on 2 ranks here; one 2-rank matrix's runs re-validated at
// 9.3-11.5 % across that range, 2026-12-04), a stall's rate following the machine's load from
// one few seconds to the next.
class SkewSittings {
 public:
  SkewSittings(const comm::Communicator& world, double deadline, std::ostream& progress)
      : world_(world), deadline_(deadline), progress_(progress) {}
  void sit() {
    if (world_.size() < 2) return;
    progress_ << fmt::format("timing how far ranks computing the same drift apart (sitting {}) ...\n",
                             sittings_.size() + 1);
    progress_.flush();
    sittings_.push_back(calib::timeSkewSitting(world_, deadline_));
  }
  // Writes skew, sync_wait_beside and, where the kernel's ranks outnumber its cores,
  // handoff_wait. The quiet wait is written as a pipeline's handoff wait, not as sync_wait: a
  // stage waits for its neighbour's whole pass and gives its core away, which another rank
  // then holds for a slice (2x2 netns hosts, 4 ranks on 2 cores: 1.65 ms read, lenet data=2 x
  // pipeline=2 predicted 21 % short without it, 6 % long with it); with a core each it gets
  // its core back at once (2 ranks here: 0.01-0.28 ms read, and every small model's pipeline
  // predicted long already). A split layer's ranks mostly meet within the spin (sync_wait at
  // 1.7 ms put the netns matrix at 22.4 % against 12.2 % without, 2026-12-04). The wait beside
  // the engine's calls is the one split training meets: 0.06-0.37 ms here over sixteen
  // calibrations, where split runs wait ~0.2 ms.
  void adopt(QuickResult& r) const {
    if (sittings_.empty()) return;
    r.skew = calib::skewFromSittings(sittings_);
    r.calibrated.implementation.skew = r.skew->skew;
    r.calibrated.implementation.skewBeside = r.skew->skewBeside;
    r.calibrated.implementation.syncWaitBeside = r.skew->syncWaitBeside;
    r.calibrated.implementation.handoffWait = r.ranksOnCores > r.cores ? r.skew->syncWait : 0;
  }

 private:
  const comm::Communicator& world_;
  double deadline_;
  std::ostream& progress_;
  std::vector<calib::SkewSitting> sittings_;
};

// Adds the seconds since its last lap (or its start) to a phase of `phases`, summing repeats.
class PhaseClock {
 public:
  explicit PhaseClock(std::vector<std::pair<std::string, double>>& phases) : phases_(phases) {}
  void lap(const std::string& phase) {
    const auto now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    const auto at = std::ranges::find(phases_, phase, &std::pair<std::string, double>::first);
    if (at == phases_.end()) {
      phases_.emplace_back(phase, seconds);
    } else {
      at->second += seconds;
    }
  }

 private:
  std::vector<std::pair<std::string, double>>& phases_;
  Clock::time_point last_ = Clock::now();
};

// `bench`: the layers to time (bench.models, loaded as `models`), the rest set here.
QuickResult measure(const QuickCalibration& o, ComputeBench bench, const std::vector<graph::Model>& models,
                    const comm::Communicator& world, double deadline, std::ostream& progress) {
  const auto start = Clock::now();
  QuickResult r;
  r.before = hw::loadCluster(o.cluster);
  r.calibrated = r.before;
  requireLayout(world, r.calibrated, deadline);
  r.ranks = world.size();
  r.hosts = comm::Hierarchy::fromHosts(world).groups();
  r.ranksOnCores = comm::Hierarchy::fromMachines(world).localSize();
  r.cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  PhaseClock clock(r.phases);
  SkewSittings skew(world, deadline, progress);
  const auto sitSkew = [&] {
    skew.sit();
    clock.lap("skew_sittings");
  };
  sitSkew();
  // The device first: the reductions' gamma reads its memory bandwidth.
  bench.batches = {32, 4, 1};
  // CosmoFlow at 32^3 over 32 samples, the largest default pass (29 GFLOP), keeps its batches;
  // a model of larger samples is timed at fewer (CosmoFlow at 64^3: 3 and 1).
  bench.largestPassFlops = 32e9;
  r.models = bench.models;
  bench.rounds = 3;
  bench.repeats = 3;
  // One timing more where the machine's speed moved, where it ends within the first of the
  // calibration's 2 minutes: the rest (the sittings, the wires' sweeps, the overlap) took ~16 s
  // on 2 ranks and ~55 s on the 2x2 netns hosts here, where 4 ranks on 2 cores time the layers
  // in ~36 s (95 s with one timing, 131 s with two; 2 ranks: 33 s and 61 s, 2026-12-07).
  bench.attempts = 2;
  bench.timeAgainBy = start + std::chrono::seconds(60);
  bench.steadySpread = o.steadySpread;
  bench.dtype = r.dtype = o.dtype;
  r.device = measureDevice(bench, models, r.calibrated.device, r.calibrated.device.peak(o.dtype), world,
                           r.calibrated.ranksOnANode(world.size()), deadline, progress);
  r.calibrated.device = r.device.fitted;
  clock.lap("device");
  sitSkew();
  progress << fmt::format("timing the wire's fp16/bf16 conversions ({} path) ...\n",
                          comm::convertPathName(comm::activeConvertPath()));
  progress.flush();
  r.calibrated.implementation.wireConversion = measureWireConversion(world, deadline);
  clock.lap("wire_conversion");
  const std::vector<LinkSample> samples = sweepLevels(world, r.calibrated, deadline, progress);
  clock.lap("links");
  r.links = calib::fitPathLinks(r.calibrated, samples);
  adoptPointToPoint(r.calibrated);
  if (world.size() > 1) {
    progress << "timing a gradient allreduce beside a convolution's forward and backward ...\n";
    progress.flush();
    r.overlap = calib::measureOverlap(world, deadline);
    r.calibrated.implementation.overlap = r.overlap->overlap;
    // The rate through the next forward is reported, not written: on 2 ranks here it read 29 %
    // and took resnet18@64 data=2 from -23 to -14 %, but on the 2x2 netns hosts it read 23 %
    // where the wire, not the cores, sets the tail's pace, and put data=4 at +196 % (lenet) and
    // +208 % (resnet18) against +5 and -7 % without it (2026-12-04): the check's waits hold the
    // ranks' drift apart and each call's start, which a constant rate does not describe.
    r.calibrated.implementation.overlap.forward.reset();
    // What the overlap and the waits were measured with: a run with another slice waits otherwise.
    r.calibrated.implementation.commThreadSlice = core::commThreadSliceInEffect();
    clock.lap("overlap");
  }
  sitSkew();
  skew.adopt(r);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.calibrated.implementation.source =
      fmt::format("paraxis calibrate --quick: {} rank(s) on {} host(s), {:.0f} s", r.ranks, r.hosts, r.seconds);
  r.calibrated.description += fmt::format(" (calibrated by paraxis calibrate --quick, {} rank(s) on {} host(s))",
                                          r.ranks, r.hosts);
  return r;
}

// A path is fitted with one line; shared memory is not one (a message that leaves the caches
// runs at DRAM speed: this VM's 16 MiB allreduce came 1.2-2.1x above the line). Say where the
// line misses the largest message by more than half, and which way its predictions err there.
void printAffineMisses(const std::vector<calib::PathLinkFit>& links, std::ostream& out) {
  for (const calib::PathLinkFit& f : links) {
    const auto largest = std::max_element(f.samples.begin(), f.samples.end(),
                                          [](const LinkSample& a, const LinkSample& b) { return a.bytes < b.bytes; });
    if (largest == f.samples.end()) continue;
    const double fitted = f.fitted[static_cast<std::size_t>(largest - f.samples.begin())];
    const double ratio = largest->seconds / fitted;
    if (ratio < 1.5 && ratio > 1 / 1.5) continue;
    out << fmt::format("note: {} on {}: {} measured {}, the line says {} ({:.1f}x): messages this large will be {}-predicted\n",
                       hw::kCommPathKeys[static_cast<int>(f.path)], f.link.level, units::formatBytes(largest->bytes),
                       units::formatSeconds(largest->seconds), units::formatSeconds(fitted), ratio, ratio > 1 ? "under" : "over");
  }
}

// "a / b / c" of each figure as a percentage, or in seconds' units.
std::string joinedPercents(const std::vector<double>& values) {
  std::string text;
  for (const double v : values) text += fmt::format("{}{:.1f}%", text.empty() ? "" : " / ", v * 100);
  return text;
}

std::string joinedSeconds(const std::vector<double>& values) {
  std::string text;
  for (const double v : values) text += (text.empty() ? "" : " / ") + units::formatSeconds(v);
  return text;
}

// The ranks' skew and the waits it measured, and what of them it wrote.
void printSkew(const QuickResult& r, std::ostream& out) {
  if (!r.skew) return;
  const calib::SkewMeasurement& k = *r.skew;
  out << fmt::format("skew: after {} / {} / {} of the same compute a blocking allreduce took {} / {} / {} ({} right "
                     "after a barrier): ranks drift apart by {:.1f}% of what they compute; the layer-sized spans "
                     "wait {} more ({}; not written as implementation.sync_wait, set by hand)\n",
                     units::formatSeconds(k.spans.layerCompute), units::formatSeconds(k.spans.shortCompute),
                     units::formatSeconds(k.spans.longCompute), units::formatSeconds(k.spans.layerWait),
                     units::formatSeconds(k.spans.shortWait), units::formatSeconds(k.spans.longWait),
                     units::formatSeconds(k.spans.latency), k.skew * 100, units::formatSeconds(k.syncWait),
                     r.calibrated.implementation.handoffWait > 0
                         ? fmt::format("implementation.handoff_wait: {} ranks share this machine's {} cores, so a "
                                       "pipeline stage that waits loses its core", r.ranksOnCores, r.cores)
                         : fmt::format("not written as implementation.handoff_wait: {} rank(s) on this machine's {} "
                                       "cores, a pipeline stage that waits keeps its core", r.ranksOnCores, r.cores));
  out << fmt::format("  with the gradient engine's calls in flight beside them, {} spans wait {} each: a synchronisation "
                     "there waits {} more (implementation.sync_wait_beside; no less than the quiet spans')\n",
                     units::formatSeconds(k.spans.besideCompute), units::formatSeconds(k.spans.besideWait),
                     units::formatSeconds(k.syncWaitBeside));
  out << fmt::format("  beside them, after {} / {} of compute it took {} / {}: ranks drift apart by {:.1f}% of what they "
                     "compute while the engine's reductions are in flight (implementation.skew_beside)\n",
                     units::formatSeconds(k.spans.shortBesideCompute), units::formatSeconds(k.spans.longBesideCompute),
                     units::formatSeconds(k.spans.shortBesideWait), units::formatSeconds(k.spans.longBesideWait),
                     k.skewBeside * 100);
  out << fmt::format(
      "  the spans pooled over {} sittings; the skews are the medians of the sittings' own (skew {}, "
      "beside {}), the waits the median of their {} blocks of layer-sized spans, which leaves a "
      "stall's blocks out (that wait, each sitting's blocks' median: {}); the spans' images {} pixels "
      "a side, sized to this machine's speed\n",
      k.sittingSkew.size(), joinedPercents(k.sittingSkew), joinedPercents(k.sittingSkewBeside),
      k.sittingSkew.size() * calib::kSkewBlocks, joinedSeconds(k.sittingSyncWaitBeside),
      fmt::join(k.sittingSide, " / "));
}

void printQuick(const QuickResult& r, const hw::Cluster& before, std::ostream& out) {
  Table t;
  for (const char* h : {"path", "level", "alpha", "bandwidth", "calls", "fit error", "was"}) {
    t.addColumn(h, std::string(h) == "path" || std::string(h) == "level" ? Table::Align::kLeft : Table::Align::kRight);
  }
  for (const calib::PathLinkFit& f : r.links) {
    const auto level = std::find_if(before.levels.begin(), before.levels.end(),
                                    [&](const hw::NetworkLevel& l) { return l.name == f.link.level; });
    t.addRow({hw::kCommPathKeys[static_cast<int>(f.path)], f.link.level, units::formatSeconds(f.link.alpha),
              units::formatRate(1 / f.link.beta), std::to_string(f.samples.size()), fmt::format("{:.1f}%", f.meanError * 100),
              fmt::format("{}, {}", units::formatSeconds(level->alpha), units::formatRate(level->bandwidth()))});
  }
  out << '\n';
  if (r.links.empty()) {
    out << "one rank: no communication to time (run it under mpirun with the job's ranks and hosts)\n";
  } else {
    t.print(out);
  }
  out << "point_to_point becomes the level's own alpha and bandwidth; the others are kept as paths.\n";
  printAffineMisses(r.links, out);
  const hw::Device& d = r.calibrated.device;
  out << fmt::format("device: memory bandwidth {} (was {}); peak {} (was {}); efficiency",
                     units::formatRate(d.memoryBandwidth), units::formatRate(before.device.memoryBandwidth),
                     units::formatFlopRate(d.peak(r.dtype)), units::formatFlopRate(before.device.peak(r.dtype)));
  out << efficiencyCurveText(d.efficiency);
  out << "\nfraction of that bandwidth reached (forward, backward):  " << memoryKindsText(d);
  if (const std::string rows = kernelShapesText(d); !rows.empty()) out << "\nat half rate over rows: " << rows;
  if (const std::string native = nativeCurvesText(d); !native.empty()) {
    out << "\nnative calls' forward (LibTorch's own kernel) by work per pass: " << native;
  }
  out << '\n' << weightTrafficText(d);
  if (const std::string overhead = callOverheadText(r.device); !overhead.empty()) out << '\n' << overhead;
  out << '\n' << speedProbeText(d);
  if (const std::string drift = speedDriftText(r.device); !drift.empty()) out << '\n' << drift;
  out << fmt::format("\n({} ranks at once: the node's sharing of cores and memory is in these figures)\n", r.ranks);
  out << cacheText(r.device) << '\n';
  out << sharingText(r.device) << '\n';
  if (const std::string shared = timeSharingText(r.device); !shared.empty()) out << shared << '\n';
  const hw::WireConversion& w = r.calibrated.implementation.wireConversion;
  out << fmt::format("wire conversion ({} path, fused decode+add+encode then decode): f16 {}, bf16 {} of f32 gradient\n",
                     comm::convertPathName(comm::activeConvertPath()), units::formatRate(w.f16), units::formatRate(w.bf16));
  if (r.overlap) {
    const calib::OverlapMeasurement& o = *r.overlap;
    out << fmt::format("overlap: a {} allreduce ({} alone) beside {} of convolution ({} alone): compute {:.2f}x longer, "
                       "the allreduce at {:.0f}% of its speed ({} left after)\n",
                       units::formatBytes(o.bytes), units::formatSeconds(o.reductionAlone),
                       units::formatSeconds(o.computeBeside), units::formatSeconds(o.computeAlone),
                       o.overlap.slowdown, o.overlap.hidden * 100, units::formatSeconds(o.waitAfter));
    out << fmt::format("  chunk by chunk, each after a readiness agreement ({} alone), as the engine sends while backward "
                       "runs: at {:.0f}% of its speed ({} left after)\n",
                       units::formatSeconds(o.chunkedAlone), o.overlap.whileChunked() * 100,
                       units::formatSeconds(o.chunkedWaitAfter));
    out << fmt::format("  through the next forward (forward priority: {} groups, one call each, while layer-sized spans "
                       "compute and wait for each in turn): {} alone, {} of compute took {}: at {:.0f}% of its speed "
                       "(not written: implementation.overlap.forward is set by hand)\n",
                       o.tailGroups, units::formatSeconds(o.tailAlone), units::formatSeconds(o.tailCompute),
                       units::formatSeconds(o.tailElapsed), o.overlap.forward.value_or(1) * 100);
  }
  printSkew(r, out);
  if (const auto& slice = r.calibrated.implementation.commThreadSlice) {
    out << fmt::format("communication threads ran with {} (implementation.comm_thread_slice; the comm_thread_slice "
                       "knob)\n", core::threadSliceText(*slice));
  }
  std::vector<std::string> phases;
  for (const auto& [phase, seconds] : r.phases) phases.push_back(fmt::format("{} {:.0f} s", phase, seconds));
  out << fmt::format("measured in {:.0f} s ({})\n", r.seconds, fmt::join(phases, ", "));
}

nlohmann::json phaseSecondsJson(const QuickResult& r) {
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& [phase, seconds] : r.phases) phases[phase] = seconds;
  return phases;
}

// The skew sittings' figures (null with one rank).
nlohmann::json skewJson(const QuickResult& r) {
  if (!r.skew) return nullptr;
  const calib::SkewMeasurement& k = *r.skew;
  return {{"skew", k.skew},
          {"sync_wait_s", k.syncWait},
          {"handoff_wait_s", r.calibrated.implementation.handoffWait},
          {"ranks_sharing_cores", r.ranksOnCores},
          {"cores", r.cores},
          {"compute_s", k.compute},
          {"wait_s", k.wait},
          {"latency_s", k.spans.latency},
          {"short_compute_s", k.spans.shortCompute},
          {"short_wait_s", k.spans.shortWait},
          {"long_compute_s", k.spans.longCompute},
          {"long_wait_s", k.spans.longWait},
          {"layer_compute_s", k.spans.layerCompute},
          {"layer_wait_s", k.spans.layerWait},
          {"sync_wait_beside_s", k.syncWaitBeside},
          {"beside_compute_s", k.spans.besideCompute},
          {"beside_wait_s", k.spans.besideWait},
          {"skew_beside", k.skewBeside},
          {"short_beside_compute_s", k.spans.shortBesideCompute},
          {"short_beside_wait_s", k.spans.shortBesideWait},
          {"long_beside_compute_s", k.spans.longBesideCompute},
          {"long_beside_wait_s", k.spans.longBesideWait},
          {"sittings",
           {{"skew", k.sittingSkew},
            {"skew_beside", k.sittingSkewBeside},
            {"sync_wait_s", k.sittingSyncWait},
            {"sync_wait_beside_s", k.sittingSyncWaitBeside},
            {"side", k.sittingSide}}}};
}

nlohmann::json quickJson(const QuickResult& r, const std::string& written) {
  nlohmann::json links = nlohmann::json::array();
  for (const calib::PathLinkFit& f : r.links) {
    nlohmann::json sweep = nlohmann::json::array();
    for (std::size_t i = 0; i < f.samples.size(); ++i) {
      sweep.push_back({{"bytes", f.samples[i].bytes}, {"ranks", f.samples[i].group.size},
                       {"seconds", f.samples[i].seconds}, {"fitted_seconds", f.fitted[i]}});
    }
    links.push_back({{"path", hw::kCommPathKeys[static_cast<int>(f.path)]}, {"level", f.link.level},
                     {"alpha_s", f.link.alpha}, {"beta_s_per_byte", f.link.beta}, {"samples", sweep},
                     {"mean_error", f.meanError}});
  }
  nlohmann::json efficiency = nlohmann::json::array();
  for (const hw::EfficiencyPoint& p : r.calibrated.device.efficiency) {
    efficiency.push_back({{"flops", p.flops}, {"efficiency", p.efficiency}});
  }
  nlohmann::json overlap = nullptr;
  if (r.overlap) {
    const calib::OverlapMeasurement& o = *r.overlap;
    overlap = {{"hidden", o.overlap.hidden}, {"slowdown", o.overlap.slowdown}, {"bytes", o.bytes},
               {"reduction_alone_s", o.reductionAlone}, {"compute_alone_s", o.computeAlone},
               {"compute_beside_s", o.computeBeside}, {"wait_after_s", o.waitAfter},
               {"chunked", o.overlap.whileChunked()}, {"chunked_alone_s", o.chunkedAlone},
               {"chunked_compute_beside_s", o.chunkedBeside}, {"chunked_wait_after_s", o.chunkedWaitAfter},
               {"forward", o.overlap.forward.value_or(1)}, {"tail_alone_s", o.tailAlone},
               {"tail_compute_s", o.tailCompute}, {"tail_elapsed_s", o.tailElapsed}};
  }
  const nlohmann::json skew = skewJson(r);
  return {{"cluster", r.calibrated.name},
          {"ranks", r.ranks},
          {"hosts", r.hosts},
          {"seconds", r.seconds},
          {"phase_seconds", phaseSecondsJson(r)},
          {"models", r.models},
          {"paths", links},
          {"overlap", overlap},
          {"skew", skew},
          {"memory_bandwidth_bytes_per_s", r.calibrated.device.memoryBandwidth},
          {"efficiency", efficiency},
          {"speed_probe_s", r.calibrated.device.speedProbe},
          {"speed_probe_before_s", r.device.timings.probeBefore},
          {"speed_probe_after_s", r.device.timings.probeAfter},
          {"layer_timings", r.device.layerTimings},
          {"sharing", sharingJson(r.device)},
          {"cache", cacheJson(r.device)},
          {"layer_overhead", callOverheadJson(r.device)},
          {"traffic_counts_at_limit", calib::trafficCountsAtTheirLimit(r.calibrated.device)},
          {"wire_conversion_bytes_per_s",
           {{"f16", r.calibrated.implementation.wireConversion.f16},
            {"bf16", r.calibrated.implementation.wireConversion.bf16}}},
          {"wrote", written}};
}

}  // namespace

void runQuickCalibration(const QuickCalibration& o, const CLI::App& command, Context& context) {
  const double deadline = context.knobs.getDouble("comm_deadline");
  comm::World world = comm::openWorld(context.argc, context.argv,
                                      {.deadlineSeconds = deadline, .verify = context.knobs.getBool("comm_verify")});
  agreeAcrossRanks(world.comm, runConfiguration(command, context.knobs));
  requireWritableDirectory(o.out, "--out");
  requireWritableDirectory(o.saveCalls, "--save-calls");
  ComputeBench bench;
  if (!o.models.empty()) bench.models = o.models;
  const std::vector<graph::Model> models = loadModels(bench.models, "--quick-models");
  const bool lead = world.comm.rank() == 0;
  std::ostringstream quiet;
  std::ostream& progress = lead && !o.json ? context.out : quiet;
  const QuickResult r = measure(o, bench, models, world.comm, deadline, progress);
  if (!lead) return;
  if (!o.out.empty()) {
    const std::string yaml = hw::clusterYaml(r.calibrated);
    hw::loadClusterText(yaml, o.out);  // what is written must load
    writeFileAtomically(o.out, yaml, "--out");
  }
  if (!o.saveCalls.empty()) calib::writeSavedTimings(o.saveCalls, r.device.timings, "--save-calls");
  if (o.json) return printJson(quickJson(r, o.out), context);
  printQuick(r, r.before, context.out);
  if (!o.out.empty()) context.out << fmt::format("wrote {} (use it as --cluster {})\n", o.out, o.out);
}

}  // namespace paraxis::cli
