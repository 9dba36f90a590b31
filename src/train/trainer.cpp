#include "train/trainer.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <numbers>
#include <optional>
#include <ostream>

#include "comm/agreement.hpp"
#include "comm/allreduce.hpp"
#include "comm/collectives.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/trace.hpp"
#include "hw/presets.hpp"
#include "plan/pipeline_schedule.hpp"
#include "train/allocation_peak.hpp"
#include "train/checkpoint.hpp"
#include "train/data_parallel.hpp"
#include "train/device.hpp"
#include "train/dataset.hpp"
#include "train/pipeline_net.hpp"
#include "train/placed_net.hpp"
#include "train/spatial_net.hpp"
#include "train/torch_runtime.hpp"

namespace paraxis::train {

int microBatchesOf(const TrainOptions& o, const plan::Grid& g) {
  if (o.microBatches > 0) return o.microBatches;
  int micro = static_cast<int>(std::min<std::int64_t>(o.batchPerRank, 4LL * g.pipeline));
  while (micro > 1 && o.batchPerRank % micro != 0) --micro;
  return micro;
}

namespace {

// A layer call's samples: a pipeline's micro-batch, else the rank's batch.
std::int64_t samplesPerCall(const TrainOptions& o, const plan::Grid& g) {
  return g.pipeline > 1 ? o.batchPerRank / microBatchesOf(o, g) : o.batchPerRank;
}

// Progress redraws one line with '\r' only on a terminal of this process's own: under a launcher
// (mpirun, srun) a rank's stdout can be a pseudo-terminal while the job's output goes to a file.
bool redrawsProgress(const TrainOptions& o) {
  if (o.quiet || isatty(STDOUT_FILENO) == 0) return false;
  for (const char* launcher : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (std::getenv(launcher) != nullptr) return false;
  }
  return true;
}

using Clock = std::chrono::steady_clock;
constexpr std::int64_t kWarmupIterations = 3;

double learningRate(const TrainOptions& o, double epochProgress, int ranks) {
  double lr = o.learningRate * (o.scaleLearningRate ? ranks : 1);
  if (o.warmupEpochs > 0 && epochProgress < o.warmupEpochs) lr *= (epochProgress + 1e-9) / o.warmupEpochs;
  const double t = epochProgress / std::max(1, o.epochs);
  if (o.lrSchedule == "step") lr *= t < 0.5 ? 1.0 : t < 0.75 ? 0.1 : 0.01;
  if (o.lrSchedule == "cosine") lr *= 0.5 * (1 + std::cos(std::numbers::pi * t));
  return lr;
}

struct Data {
  Dataset train;
  Dataset test;
};

// The run's data where its model runs: a GPU's steps then pick batches without a host copy.
Data onDevice(Data d, const torch::Device& device) {
  for (Dataset* set : {&d.train, &d.test}) {
    set->images = set->images.to(device);
    set->labels = set->labels.to(device);
  }
  return d;
}

IrNet onDevice(IrNet net, const torch::Device& device) {
  net->to(device);  // before the gradient engine lays its buffers out beside the parameters
  return net;
}

Data loadData(const TrainOptions& o, const graph::Model& model) {
  const graph::TensorShape& input = model.inputShape();
  const TargetShape target = targetOf(model);
  if (o.data == "synthetic") {
    const std::int64_t samples = o.syntheticSamples > 0 ? o.syntheticSamples : defaultSyntheticSamples(input);
    return {syntheticDataset(input, target, samples, o.seed),
            syntheticDataset(input, target, std::max(std::min<std::int64_t>(256, samples), samples / 8), o.seed + 1)};
  }
  if (target.kind != TargetShape::Kind::kClass) {
    throw ConfigError(fmt::format("--data {}: Fashion-MNIST has one class per image; model '{}' needs {}", o.data,
                                  model.name(),
                                  target.kind == TargetShape::Kind::kRegression ? "regression targets"
                                                                                : "a class per output position"));
  }
  const std::string dir = o.data == "fashion-mnist" ? std::string(kFashionMnistDir) : o.data;
  Data d{loadFashionMnist(dir, true), loadFashionMnist(dir, false)};
  std::vector<std::int64_t> want{1};
  for (auto e : input.spatial) want.push_back(e);
  std::vector<std::int64_t> have(d.train.images.sizes().begin() + 1, d.train.images.sizes().end());
  if (have != want || input.channels != 1) {
    throw ConfigError(fmt::format("--data {}: images are {}x{}x{}, but model '{}' takes {}", o.data, have[0], have[1],
                                  have[2], model.name(), input.str()));
  }
  return d;
}

// Samples per test batch: up to 500, fewer where one layer's output for the batch would pass
// 1 GiB (cosmoflow@64's largest holds 16 MiB a sample: 500 of them took 8 GiB a rank, and a
// pipeline stage's 2 GiB message past MPI's int count ended the run).
std::int64_t testBatch(const graph::Model& model) {
  std::int64_t widest = 1;
  for (int i = 0; i < model.size(); ++i) widest = std::max(widest, model.layer(i).counts.activationBytes);
  return std::clamp<std::int64_t>((std::int64_t{1} << 30) / widest, 1, 500);
}

// Test loss and accuracy over the whole test split, each replica taking every D-th batch and
// each rank of a replica its part of it (weighted by its share).
std::pair<double, std::optional<double>> evaluate(IrNet& net, BatchExecutor& executor, const Dataset& test,
                                                  const comm::Communicator& comm, int replica, int replicas) {
  torch::NoGradGuard noGrad;
  net->eval();
  double sums[4] = {0, 0, 0, 0};  // loss x samples, correct, samples, positions judged
  const std::int64_t batch = testBatch(net->model());
  const double share = executor.share();
  for (std::int64_t start = replica * batch; start < test.size(); start += batch * replicas) {
    const std::int64_t n = std::min(batch, test.size() - start);
    const torch::Tensor x = test.images.narrow(0, start, n);
    const torch::Tensor y = test.labels.narrow(0, start, n);
    const std::vector<torch::Tensor> out = executor.run(x);
    sums[0] += executor.loss(out, y).item<double>() * static_cast<double>(n) * share;
    if (y.scalar_type() == torch::kInt64) {  // classes, per sample or per position
      const torch::Tensor mine = executor.targetPart(y);
      sums[1] += executor.prediction(out).argmax(1).eq(mine).sum().item<double>();
      sums[3] += static_cast<double>(mine.numel());
    }
    sums[2] += static_cast<double>(n) * share;
  }
  comm::allreduce(comm, sums, sums, 4, comm::DataType::kF64);
  net->train();
  std::optional<double> accuracy;
  if (sums[3] > 0) accuracy = sums[1] / sums[3];
  return {sums[0] / sums[2], accuracy};
}

// The ranks of a grid (data outermost, then the pipeline or channel-slicing axis, spatial
// innermost; the rank order plan::Grid lays out) and the groups each rank belongs to. Only
// the groups the grid uses are split off (a data-parallel run splits nothing).
struct GridGroups {
  parallel::SpatialSplit spatial;  // this rank's replica and slice: its spatial blocks
  parallel::ChannelSplit slices;   // this rank's replica and block: its filter or channel slices
  parallel::ChannelSplit channelSlices;  // filter x channel grids: the channel axis's group
  comm::Communicator weights;      // every rank holding the same weights: the gradient engine's
  std::optional<PipelineLinks> pipeline;  // pipeline grids: this stage's links
  std::optional<comm::Communicator> place;  // placement grids: the ranks of this replica
};

int slicingRanks(const plan::Grid& g) { return g.filter * g.channel; }
// The ranks of the spatial, filter and channel axes (a replica's, or a pipeline stage's).
int layerAxisRanks(const plan::Grid& g) { return g.channel * g.filter * g.spatial(); }

// Each layer's stage, balanced by the oracle's modelled times on `cluster`'s device for one
// micro-batch, so memory-bound layers weigh what they cost; rank 0's partition on every rank
// (replicas must hold the same layers).
std::vector<int> stagesByTime(const comm::Communicator& world, const graph::Model& model, int stages, double samples,
                              const std::string& cluster) {
  std::vector<int> stageOf(static_cast<std::size_t>(model.size()), 0);
  if (world.rank() == 0) {
    const hw::Cluster host = hw::loadCluster(cluster);
    stageOf = plan::modelStages(model, stages, &host.device, samples);
  }
  comm::broadcast(world, stageOf.data(), stageOf.size(), comm::DataType::kI32);
  return stageOf;
}

GridGroups gridGroups(const comm::Communicator& world, const plan::Grid& g, int dims, bool overlap) {
  const int rank = world.rank(), s = g.spatial(), m = slicingRanks(g);
  GridGroups out;
  std::vector<int> grid{g.height, g.width};
  if (dims == 3) grid.insert(grid.begin(), g.depth);
  if (dims < 2) grid.assign(static_cast<std::size_t>(std::max(dims, 0)), 1);
  if (layerAxisRanks(g) > 1) out.spatial = {world.split(rank / s, rank), grid, overlap};
  // The slicing axes' groups: the ranks differing only in their filter slice, and those
  // differing only in their channel slice (`slices` holds the one axis a grid has).
  const int fs = g.filter * s;
  if (g.filter > 1) out.slices = {world.split((rank / fs) * s + rank % s, rank)};
  if (g.channel > 1) {
    parallel::ChannelSplit& channel = g.filter > 1 ? out.channelSlices : out.slices;
    channel.comm = world.split((rank / (fs * g.channel)) * fs + rank % fs, rank);
  }
  const int holders = m * g.pipeline * g.place;  // ranks of a replica holding different weights
  if (g.filterHead) {
    // The head's filters over the spatial group; the engine over the replicas alone (the
    // spatial layers' partial gradients are summed over the group in backward).
    out.slices = {out.spatial.comm};
    out.weights = world.split(rank % s, rank);
  } else {
    out.weights = holders == 1 ? world : world.split((rank / s) % holders, rank);
  }
  if (g.pipeline > 1) out.pipeline = pipelineLinks(world, g.pipeline, layerAxisRanks(g));
  if (g.place > 1) out.place = world.split(rank / g.place, rank);
  return out;
}

// The spatial, filter and channel axes of a replica (or, in a pipeline, of a stage), or null.
std::unique_ptr<SpatialNet> layerAxes(IrNet net, const plan::Grid& g, const GridGroups& groups, const TrainOptions& o) {
  if (layerAxisRanks(g) == 1) return nullptr;
  SpatialOptions options{o.sampleFrom, o.localBatchNorm, o.layerGrids};
  if (slicingRanks(g) > 1 || g.filterHead) {
    options.slices = &groups.slices;
    options.filterAxis = g.filter > 1 || g.filterHead;
    options.filterHead = g.filterHead;
    if (g.filter > 1 && g.channel > 1) options.channelSlices = &groups.channelSlices;
  }
  return std::make_unique<SpatialNet>(std::move(net), groups.spatial, options);
}

std::unique_ptr<BatchExecutor> executorFor(const comm::Communicator& world, IrNet net, const plan::Grid& g,
                                           const GridGroups& groups, const TrainOptions& o) {
  if (g.modelParallel() == 1) return nullptr;
  if (g.place > 1) {
    LayerPlacement placement =
        placeLayers(world, net->model(), {.ranks = g.place, .samples = static_cast<double>(o.batchPerRank),
                                          .forward = o.layerForwardSeconds, .backward = o.layerBackwardSeconds,
                                          .method = o.placementMethod, .timeLimit = o.placementTimeLimit});
    return std::make_unique<PlacedNet>(std::move(net), *groups.place, std::move(placement));
  }
  if (g.pipeline == 1) return layerAxes(std::move(net), g, groups, o);
  const int micro = microBatchesOf(o, g);
  std::vector<int> stages =
      stagesByTime(world, net->model(), g.pipeline, static_cast<double>(o.batchPerRank) / micro, o.stageCluster);
  std::unique_ptr<SpatialNet> inner = layerAxes(net, g, groups, o);
  return std::make_unique<PipelineNet>(std::move(net), *groups.pipeline, micro, o.schedule, std::move(stages),
                                       std::move(inner));
}

// One run of runTraining: set up once, then epochs of steps, each step's times added to the
// report past the warm-up, progress and checkpoints as configured.
class Trainer {
 public:
  Trainer(const comm::Communicator& comm, const graph::Model& model, const TrainOptions& o, std::ostream& out)
      : comm_(comm), model_(model), o_(o), out_(out), threads_(configureTorchThreads(o.threads, comm.size())),
        seeded_((torch::manual_seed(o.seed), true)),  // identical initial weights on every rank
        device_(torchDevice(o.device)),
        data_(onDevice(loadData(o, model), device_)),
        grid_(o.grid ? checkGrid(*o.grid, comm.size(), model) : plan::Grid{.data = comm.size()}),
        replica_(comm.rank() / grid_.modelParallel()),
        groups_(gridGroups(comm, grid_, model.inputShape().rank(), o.haloOverlap)),
        // NCHW on a GPU: cuDNN's fp32 layout, and PyTorch eager's default there.
        net_(onDevice(IrNet(model, IrNetOptions{.channelsLast = !o.device.cuda(), .samplesPerCall = samplesPerCall(o, grid_)}),
                      device_)),
        dp_(groups_.weights, net_, o.comm, {o.momentum, o.nesterov, o.weightDecay, o.skipNonFinite}, executorFor(comm, net_, grid_, groups_, o)),
        lead_(comm.rank() == 0), terminal_(redrawsProgress(o)),
        state_{dp_.parameters(), dp_.net()->buffers(), dp_.momentumBuffers(), dp_.engine().residualState()} {
    report_.ranks = comm.size();
    report_.grid = grid_;
    report_.threads = threads_;
    report_.globalBatch = o.batchPerRank * grid_.data;
    report_.layout = dp_.executor().describe();
    report_.microBatches = grid_.pipeline > 1 ? microBatchesOf(o, grid_) : 1;
    perEpoch_ = data_.train.size() / report_.globalBatch;
    if (perEpoch_ < 1) {
      throw ConfigError(fmt::format("a global batch of {} exceeds the {} training samples", report_.globalBatch,
                                    data_.train.size()));
    }
    total_ = o.iterations > 0 ? o.iterations : perEpoch_ * o.epochs;
    dp_.net()->train();
  }

  TrainReport run() {
    if (lead_ && !o_.quiet) {
      out_ << fmt::format("training {} on {} rank(s) x {} thread(s): global batch {}, {} iterations ({} per epoch), data {}\n",
                          model_.name(), comm_.size(), threads_, report_.globalBatch, total_, perEpoch_, o_.data);
      if (!report_.layout.empty()) out_ << fmt::format("grid {}: {}\n", grid_.str(), report_.layout);
    }
    if (!o_.resumeDir.empty()) {
      done_ = loadCheckpoint(comm_, o_.resumeDir, state_, o_.configuration, std::cerr);
      if (lead_ && !o_.quiet) out_ << fmt::format("resumed from {} at iteration {}\n", o_.resumeDir, done_);
    }
    started_ = Clock::now();
    lastProgress_ = started_;
    resumedAt_ = done_;
    const int epochs = static_cast<int>((total_ + perEpoch_ - 1) / perEpoch_);
    for (int epoch = static_cast<int>(done_ / perEpoch_); epoch < epochs && done_ < total_; ++epoch) runEpoch(epoch);
    dp_.synchronize();
    if (!o_.weightsOut.empty()) writeWeights();
    if (!o_.trace.empty()) writeTrace();
    return finishReport();
  }

 private:
  void runEpoch(int epoch) {
    const auto epochStart = Clock::now();
    const std::vector<std::int64_t> mine =
        shardIndices(data_.train.size(), replica_, grid_.data, o_.batchPerRank, o_.seed, epoch);
    const torch::Tensor index = torch::tensor(mine, torch::kInt64).to(device_);
    double lossSum = 0;
    std::int64_t steps = 0;
    for (std::int64_t it = done_ % perEpoch_; it < perEpoch_ && done_ < total_; ++it, ++done_, ++steps) {
      lossSum += step(epoch, it, index);
      if (o_.checkpointEvery > 0 && !o_.checkpointDir.empty() && (done_ + 1) % o_.checkpointEvery == 0) {
        dp_.synchronize();
        state_.iterationsDone = done_ + 1;
        saveCheckpoint(comm_, o_.checkpointDir, state_, o_.configuration);
      }
      if (lead_ && !o_.quiet && progressDue()) printProgress(epoch, lossSum / static_cast<double>(steps + 1));
    }
    dp_.synchronize();
    const trace::Span evaluation("evaluate", fmt::format("epoch {} test", epoch + 1));
    const auto [testLoss, accuracy] = evaluate(dp_.net(), dp_.executor(), data_.test, comm_, replica_, grid_.data);
    const EpochReport e{epoch + 1, lossSum / static_cast<double>(std::max<std::int64_t>(1, steps)), testLoss, accuracy,
                        std::chrono::duration<double>(Clock::now() - epochStart).count()};
    report_.epochs.push_back(e);
    if (lead_ && !o_.quiet) {
      if (terminal_) out_ << "\r";
      const std::string accuracy =
          e.testAccuracy ? fmt::format(", test accuracy {:.2f}%", 100 * *e.testAccuracy) : std::string();
      out_ << fmt::format("epoch {}: train loss {:.4f}, test loss {:.4f}{}, {:.1f} s\n", e.epoch, e.trainLoss,
                          e.testLoss, accuracy, e.seconds);
    }
  }

  // Chunk-sparse starts at the step where training has run --sparse-warmup-epochs (a fraction
  // starts it mid-epoch); switching drains the engine, so it happens only when the state changes.
  void useSparseFrom(double progress) {
    const bool sparse = o_.comm.sparse() && progress >= o_.sparseWarmupEpochs;
    if (sparseOn_ && *sparseOn_ == sparse) return;
    dp_.setSparse(sparse);
    sparseOn_ = sparse;
  }

  // Iteration `it` of the epoch: load the batch, step, and add its times past the warm-up
  // (the first iterations touch fresh memory and warm caches). Returns the local loss.
  double step(int epoch, std::int64_t it, const torch::Tensor& index) {
    const bool measured = done_ - resumedAt_ >= kWarmupIterations;
    const trace::Span span("step", fmt::format("iteration {}{}", done_ + 1, measured ? "" : " (warm-up)"));
    const auto start = Clock::now();
    const torch::Tensor idx = index.narrow(0, it * o_.batchPerRank, o_.batchPerRank);
    const torch::Tensor x = data_.train.images.index_select(0, idx);
    const torch::Tensor y = data_.train.labels.index_select(0, idx);
    const auto loaded = Clock::now();
    trace::complete("data_loading", "data_loading", start, loaded);
    const double loading = std::chrono::duration<double>(loaded - start).count();
    const double progress = static_cast<double>(epoch) + static_cast<double>(it) / static_cast<double>(perEpoch_);
    useSparseFrom(progress);
    double loss = 0;
    {
      const AllocationPeak peak;
      loss = dp_.step(x, y, learningRate(o_, progress, grid_.data));
      report_.peakStepBytes = std::max(report_.peakStepBytes, peak.peakBytes());
    }
    // The step's closing agreement (the replica's loss, the divergence check) is its first
    // synchronisation after backward: the ranks wait there for the slowest one and for the
    // reductions queued ahead on the communicator, so its time is exposed communication. Where
    // ranks compute different layers, a stage whose passes end first waits there for the
    // others' (uniform-cnn's second stage under 1F1B: 31 ms a step), which is the pipeline's
    // idle time, not communication.
    const bool waitsForStages = grid_.ranksRunDifferentLayers();
    const auto agreeing = Clock::now();
    loss = dp_.executor().replicaLoss(loss);
    stopIfDiverged(loss);
    const auto agreed = Clock::now();
    const char* agreement = waitsForStages ? "bubble" : "gradient_exposed";
    trace::complete(agreement, agreement, agreeing, agreed);
    if (measured) {
      const StepTimes& st = dp_.times();
      const BatchExecutor::LayerComm layers = dp_.executor().layerComm();
      plan::TimeBreakdown& t = report_.time;
      t.dataLoading += loading;
      t.forward += st.forward - layers.forward.total();
      t.backwardData += st.backward - layers.backward.total();
      t.halo += layers.forward.halo + layers.backward.halo;
      t.shuffle += layers.forward.shuffle + layers.backward.shuffle;
      t.layerCollectives += layers.forward.collectives + layers.backward.collectives;
      t.pipelineP2P += layers.pipelineTransfers;
      t.bubble += layers.bubble;
      t.gradientExposed += st.exposedCommunication;
      (waitsForStages ? t.bubble : t.gradientExposed) += std::chrono::duration<double>(agreed - agreeing).count();
      t.gradientAllreduce += st.totalCommunication;
      t.update += st.update;
      report_.trainingSeconds += std::chrono::duration<double>(Clock::now() - start).count();
      ++report_.measuredIterations;
    }
    return loss;
  }

  // A nan or inf loss on any rank stops every rank at the same iteration, with one line naming
  // the iteration, the loss and the first parameter whose gradient or value is not finite;
  // with skipNonFinite the step's updates were skipped instead and training goes on.
  void stopIfDiverged(double loss) {
    if (o_.skipNonFinite) return;
    const std::string mine =
        std::isfinite(loss) ? "" : fmt::format("loss {}{}", std::isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf", firstNonFinite());
    if (const auto first = comm::firstFailure(comm_, mine)) {  // one 8-byte allreduce while all is well
      throw Error(fmt::format("training diverged at iteration {}: {}; lower --lr, or --skip-nonfinite to skip such steps",
                              done_ + 1, comm::describe(comm_, *first)));
    }
  }

  std::string firstNonFinite() {
    torch::NoGradGuard noGrad;
    for (const auto& p : dp_.net()->named_parameters()) {
      const torch::Tensor& g = p.value().grad();
      if (g.defined() && !torch::isfinite(g).all().item<bool>()) return fmt::format(", first non-finite gradient: {}", p.key());
      if (!torch::isfinite(p.value()).all().item<bool>()) return fmt::format(", first non-finite parameter: {}", p.key());
    }
    return "";
  }

  // On a terminal every 20th iteration redraws one line; elsewhere a line every
  // progressInterval seconds (a file or pipe keeps each line whole).
  bool progressDue() {
    if (terminal_) return done_ % 20 == 0;
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - lastProgress_).count() < o_.progressInterval) return false;
    lastProgress_ = now;
    return true;
  }

  void printProgress(int epoch, double meanLoss) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - started_).count();
    const double rate = static_cast<double>((done_ + 1) * report_.globalBatch) / elapsed;
    out_ << fmt::format("{}  iteration {}/{}  epoch {}  {:.0f} samples/s  loss {:.4f}  ETA {:.0f} s{}",
                        terminal_ ? "\r" : "", done_ + 1, total_, epoch + 1, rate, meanLoss,
                        static_cast<double>(total_ - done_ - 1) * static_cast<double>(report_.globalBatch) / rate,
                        terminal_ ? "   " : "\n")
         << std::flush;
  }

  void writeWeights() {
    const std::vector<torch::Tensor> whole = dp_.executor().wholeParameters();  // collective
    if (!lead_) return;
    std::string bytes;
    for (const auto& p : whole) {
      const torch::Tensor c = p.detach().to(torch::kCPU, torch::kFloat32).contiguous();
      bytes.append(reinterpret_cast<const char*>(c.data_ptr<float>()), c.numel() * sizeof(float));
    }
    writeFileAtomically(o_.weightsOut, bytes, "--weights-out");
  }

  // Every rank's timeline into one file (a process per rank), written by rank 0: the ranks'
  // texts gathered as 8-byte words, each padded to the longest.
  void writeTrace() {
    const std::string mine = trace::eventsJson(comm_.rank(), fmt::format("rank {}", comm_.rank()));
    std::int64_t length = static_cast<std::int64_t>(mine.size());
    std::int64_t longest = length;
    comm::allreduce(comm_, &length, &longest, 1, comm::DataType::kI64, {.op = comm::ReduceOp::kMax});
    const std::size_t words = (static_cast<std::size_t>(longest) + 15) / 8;  // a word for the length
    std::vector<std::uint64_t> send(words, 0);
    send[0] = static_cast<std::uint64_t>(length);
    std::memcpy(send.data() + 1, mine.data(), mine.size());
    std::vector<std::uint64_t> all(words * static_cast<std::size_t>(comm_.size()));
    comm::allgather(comm_, send.data(), all.data(), words, comm::DataType::kU64);
    if (!lead_) return;
    std::string text = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
    for (int r = 0; r < comm_.size(); ++r) {
      const std::uint64_t* block = all.data() + words * static_cast<std::size_t>(r);
      const auto length = static_cast<std::size_t>(std::min<std::uint64_t>(block[0], (words - 1) * 8));
      text += r > 0 ? "," : "";
      text.append(reinterpret_cast<const char*>(block + 1), length);
    }
    writeFileAtomically(o_.trace, text + "]}\n", "--trace");
  }

  // Every rank's breakdown; the report keeps the busiest rank's where ranks compute different
  // layers (pipeline stages, placed devices), as the oracle's breakdown is its slowest stage's.
  // Rank 0's is the first stage's: resnet18@64 on 2 stages, 8 micro-batches of one, ran 96 ms of
  // backward a step there and 116 ms on the second stage, which sets the step.
  void takeBusiestRanksBreakdown() {
    const std::size_t terms = std::size(plan::kTimeTerms);
    std::vector<double> mine(terms);
    for (std::size_t k = 0; k < terms; ++k) mine[k] = report_.time.*plan::kTimeTerms[k].field;
    std::vector<double> all(terms * static_cast<std::size_t>(comm_.size()));
    comm::allgather(comm_, mine.data(), all.data(), terms, comm::DataType::kF64);
    const double n = static_cast<double>(std::max<std::int64_t>(1, report_.measuredIterations));
    report_.rankBusy.clear();
    for (int r = 0; r < comm_.size(); ++r) {
      plan::TimeBreakdown t;
      for (std::size_t k = 0; k < terms; ++k) t.*plan::kTimeTerms[k].field = all[terms * static_cast<std::size_t>(r) + k];
      report_.rankBusy.push_back(t.busy() / n);
    }
    if (!grid_.ranksRunDifferentLayers()) return;
    const auto busiest = std::max_element(report_.rankBusy.begin(), report_.rankBusy.end()) - report_.rankBusy.begin();
    report_.breakdownRank = static_cast<int>(busiest);
    const double* theirs = all.data() + terms * static_cast<std::size_t>(busiest);
    for (std::size_t k = 0; k < terms; ++k) report_.time.*plan::kTimeTerms[k].field = theirs[k];
  }

  TrainReport finishReport() {
    comm::allreduce(comm_, &report_.peakStepBytes, &report_.peakStepBytes, 1, comm::DataType::kI64,
                    {.op = comm::ReduceOp::kMax});
    takeBusiestRanksBreakdown();
    report_.iterations = done_ - resumedAt_;
    report_.allreduceAlgorithm = dp_.engine().allreduceAlgorithm();
    report_.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    const std::int64_t measured = report_.measuredIterations;
    const double n = static_cast<double>(std::max<std::int64_t>(1, measured));
    report_.samplesPerSecond = measured > 0
                                   ? n * static_cast<double>(report_.globalBatch) / report_.trainingSeconds
                                   : static_cast<double>(report_.iterations * report_.globalBatch) / report_.seconds;
    plan::TimeBreakdown& t = report_.time;
    for (double* v : {&t.forward, &t.backwardData, &t.gradientExposed, &t.gradientAllreduce, &t.update, &t.dataLoading,
                      &t.halo, &t.shuffle, &t.layerCollectives, &t.pipelineP2P, &t.bubble}) {
      *v /= n;
    }
    // The engine times the reductions from their start; the step can wait longer than that for
    // one (it queued behind another, its thread was not scheduled). The reduction's time then is
    // at least what the step waited for it.
    t.gradientAllreduce = std::max(t.gradientAllreduce, t.gradientExposed);
    return report_;
  }

  const comm::Communicator& comm_;
  const graph::Model& model_;
  const TrainOptions& o_;
  std::ostream& out_;
  int threads_;
  bool seeded_;
  torch::Device device_;
  Data data_;
  plan::Grid grid_;
  int replica_;  // this rank's data replica
  GridGroups groups_;  // outlive every backward pass
  IrNet net_;
  DataParallelStep dp_;
  bool lead_;
  bool terminal_;
  TrainingState state_;
  TrainReport report_;
  std::int64_t perEpoch_ = 0;
  std::int64_t total_ = 0;
  std::int64_t done_ = 0;
  std::int64_t resumedAt_ = 0;
  std::optional<bool> sparseOn_;
  Clock::time_point started_;
  Clock::time_point lastProgress_ = Clock::now();
};

}  // namespace

PlanExecution planExecution(const std::vector<plan::LayerDistribution>& layers, const graph::Model& model) {
  if (static_cast<int>(layers.size()) != model.size()) {
    throw ConfigError(fmt::format("the plan has {} layers, model '{}' {}", layers.size(), model.name(), model.size()));
  }
  for (int i = 0; i < model.size(); ++i) {
    if (layers[i].layer != model.layer(i).name) {
      throw ConfigError(fmt::format("layer {} is '{}' in the plan but '{}' in model '{}'", i, layers[i].layer,
                                    model.layer(i).name, model.name()));
    }
  }
  const plan::Distribution& first = layers.front().distribution;
  const auto gridOf = [&](const plan::Distribution& d) {
    return model.inputShape().rank() == 3 ? std::vector<int>{d.depth, d.height, d.width} : std::vector<int>{d.height, d.width};
  };
  PlanExecution e{model.size(), {}};
  for (int i = 0; i < model.size(); ++i) {
    const plan::Distribution& d = layers[i].distribution;
    const bool sameSplit = d.sample == first.sample && d.replicas == 1 && d.spatial() == first.spatial();
    if (e.sampleFrom == model.size() && !sameSplit) e.sampleFrom = i;
    if (i >= e.sampleFrom && d.spatial() > 1) {
      throw ConfigError(fmt::format("layer '{}': the plan splits it {} after leaving {} at layer '{}'; train runs "
                                    "spatial grids of the first layer's rank count, then whole samples, so far",
                                    layers[i].layer, d.str(), first.str(), layers[e.sampleFrom].layer));
    }
    e.layerGrids.push_back(i < e.sampleFrom ? gridOf(d) : gridOf(first));
  }
  return e;
}

plan::Grid checkGrid(const plan::Grid& g, int ranks, const graph::Model& model) {
  if (g.place > 1 && g.modelParallel() != g.place) {
    throw ConfigError(fmt::format("grid {}: a placement goes with the data axis only", g.str()));
  }
  if (std::string problem = plan::pipelineProblem(model, g.pipeline); !problem.empty()) {
    throw ConfigError(fmt::format("grid {}: {}", g.str(), problem));
  }
  const int dims = model.inputShape().rank();
  if (g.spatial() > 1 && (dims < 2 || (dims == 2 && g.depth > 1))) {
    throw ConfigError(fmt::format("grid {}: model '{}' takes {} samples; a spatial axis needs 2-D (h, w) or 3-D "
                                  "(d, h, w) ones",
                                  g.str(), model.name(), model.inputShape().str()));
  }
  if (g.total() != ranks) {
    throw ConfigError(fmt::format("grid {} needs {} ranks but {} were started", g.str(), g.total(), ranks));
  }
  return g;
}

TrainReport runTraining(const comm::Communicator& comm, const graph::Model& model, const TrainOptions& o,
                        std::ostream& out) {
  if (o.comm.negotiation == Negotiation::kCentralized) {
    throw ConfigError("centralized negotiation is modelled by plan but not run by train: use decentralized or none");
  }
  if (o.device.cuda() && o.grid && o.grid->total() != o.grid->data) {
    throw ConfigError(fmt::format("--device {}: runs the data axis only so far; grid {} splits the model",
                                  o.device.str(), o.grid->str()));
  }
  return Trainer(comm, model, o, out).run();
}

}  // namespace paraxis::train
