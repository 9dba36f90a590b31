#include "train/trainer.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <numbers>
#include <fstream>
#include <ostream>

#include "comm/allreduce.hpp"
#include "core/error.hpp"
#include "train/checkpoint.hpp"
#include "train/data_parallel.hpp"
#include "train/dataset.hpp"
#include "train/torch_runtime.hpp"

namespace paraxis::train {
namespace {

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

Data loadData(const TrainOptions& o, const graph::Model& model) {
  const graph::TensorShape& input = model.inputShape();
  const std::int64_t classes = model.layer(model.size() - 1).inputs.empty()
                                   ? 10
                                   : model.layer(model.layer(model.size() - 1).inputs.front()).output.channels;
  if (o.data == "synthetic") {
    return {syntheticDataset(input, classes, o.syntheticSamples, o.seed),
            syntheticDataset(input, classes, std::max<std::int64_t>(256, o.syntheticSamples / 8), o.seed + 1)};
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

// Test loss and accuracy over the whole test split, each rank taking every P-th sample.
std::pair<double, double> evaluate(IrNet& net, const Dataset& test, const comm::Communicator& comm) {
  torch::NoGradGuard noGrad;
  net->eval();
  double sums[3] = {0, 0, 0};  // loss x samples, correct, samples
  const std::int64_t batch = 500;
  for (std::int64_t start = comm.rank() * batch; start < test.size(); start += batch * comm.size()) {
    const std::int64_t n = std::min(batch, test.size() - start);
    const torch::Tensor x = test.images.narrow(0, start, n);
    const torch::Tensor y = test.labels.narrow(0, start, n);
    const std::vector<torch::Tensor> out = net->run(x);
    sums[0] += net->loss(out, y).item<double>() * static_cast<double>(n);
    sums[1] += net->prediction(out).argmax(1).eq(y).sum().item<double>();
    sums[2] += static_cast<double>(n);
  }
  comm::allreduce(comm, sums, sums, 3, comm::DataType::kF64);
  net->train();
  return {sums[0] / sums[2], sums[1] / sums[2]};
}

}  // namespace

TrainReport runTraining(const comm::Communicator& comm, const graph::Model& model, const TrainOptions& o,
                        std::ostream& out) {
  TrainReport report;
  report.ranks = comm.size();
  report.threads = configureTorchThreads(o.threads, comm.size());
  torch::manual_seed(o.seed);  // identical initial weights on every rank
  const Data data = loadData(o, model);
  if (o.comm.negotiation == Negotiation::kCentralized) {
    throw ConfigError("centralized negotiation is modelled by plan but not run by train: use decentralized or none");
  }
  DataParallelStep dp(comm, IrNet(model), o.comm, {o.momentum, o.nesterov, o.weightDecay});
  dp.net()->train();
  const bool lead = comm.rank() == 0;
  const bool terminal = isatty(STDOUT_FILENO) != 0 && !o.quiet;
  report.globalBatch = o.batchPerRank * comm.size();
  const std::int64_t perEpoch = data.train.size() / report.globalBatch;
  if (perEpoch < 1) {
    throw ConfigError(fmt::format("a global batch of {} exceeds the {} training samples", report.globalBatch,
                                  data.train.size()));
  }
  const std::int64_t total = o.iterations > 0 ? o.iterations : perEpoch * o.epochs;
  const int epochs = static_cast<int>((total + perEpoch - 1) / perEpoch);
  if (lead && !o.quiet) {
    out << fmt::format("training {} on {} rank(s) x {} thread(s): global batch {}, {} iterations ({} per epoch), data {}\n",
                       model.name(), comm.size(), report.threads, report.globalBatch, total, perEpoch, o.data);
  }
  TrainingState state{dp.net()->parameters(), dp.net()->buffers(), dp.momentumBuffers(), dp.engine().residualState()};
  std::int64_t done = 0;
  if (!o.resumeDir.empty()) {
    done = loadCheckpoint(comm, o.resumeDir, state);
    if (lead && !o.quiet) out << fmt::format("resumed from {} at iteration {}\n", o.resumeDir, done);
  }
  const auto started = Clock::now();
  const std::int64_t resumedAt = done;
  std::int64_t measured = 0;
  for (int epoch = static_cast<int>(done / perEpoch); epoch < epochs && done < total; ++epoch) {
    const auto epochStart = Clock::now();
    dp.setSparse(o.comm.sparse() && epoch >= o.sparseWarmupEpochs);
    const std::vector<std::int64_t> mine = shardIndices(data.train.size(), comm.rank(), comm.size(), o.batchPerRank, o.seed, epoch);
    const torch::Tensor index = torch::tensor(mine, torch::kInt64);
    double lossSum = 0;
    std::int64_t steps = 0;
    for (std::int64_t it = done % perEpoch; it < perEpoch && done < total; ++it, ++done, ++steps) {
      auto t = Clock::now();
      const auto iterationStart = t;
      const torch::Tensor idx = index.narrow(0, it * o.batchPerRank, o.batchPerRank);
      const torch::Tensor x = data.train.images.index_select(0, idx);
      const torch::Tensor y = data.train.labels.index_select(0, idx);
      const double loading = std::chrono::duration<double>(Clock::now() - t).count();
      if (done - resumedAt >= kWarmupIterations) report.dataLoading += loading;
      const double progress = static_cast<double>(epoch) + static_cast<double>(it) / static_cast<double>(perEpoch);
      lossSum += dp.step(x, y, learningRate(o, progress, comm.size()));
      const StepTimes& st = dp.times();
      // The first iterations touch fresh memory and warm caches: they stay out of the figures.
      if (done - resumedAt >= kWarmupIterations) {
        report.forward += st.forward;
        report.backward += st.backward;
        report.exposedCommunication += st.exposedCommunication;
        report.totalCommunication += st.totalCommunication;
        report.update += st.update;
        report.trainingSeconds += std::chrono::duration<double>(Clock::now() - iterationStart).count();
        ++measured;
      }
      if (o.checkpointEvery > 0 && !o.checkpointDir.empty() && (done + 1) % o.checkpointEvery == 0) {
        dp.synchronize();
        state.iterationsDone = done + 1;
        saveCheckpoint(comm, o.checkpointDir, state);
      }
      if (lead && terminal && (done % 20 == 0)) {
        const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
        const double rate = static_cast<double>((done + 1) * report.globalBatch) / elapsed;
        out << fmt::format("\r  iteration {}/{}  epoch {}  {:.0f} samples/s  loss {:.4f}  ETA {:.0f} s   ", done + 1,
                           total, epoch + 1, rate, lossSum / static_cast<double>(steps + 1),
                           static_cast<double>(total - done - 1) * static_cast<double>(report.globalBatch) / rate)
            << std::flush;
      }
    }
    dp.synchronize();
    const auto [testLoss, accuracy] = evaluate(dp.net(), data.test, comm);
    EpochReport e{epoch + 1, lossSum / static_cast<double>(std::max<std::int64_t>(1, steps)), testLoss, accuracy,
                  std::chrono::duration<double>(Clock::now() - epochStart).count()};
    report.epochs.push_back(e);
    if (lead && !o.quiet) {
      if (terminal) out << "\r";
      out << fmt::format("epoch {}: train loss {:.4f}, test loss {:.4f}, test accuracy {:.2f}%, {:.1f} s\n", e.epoch,
                         e.trainLoss, e.testLoss, 100 * e.testAccuracy, e.seconds);
    }
  }
  report.iterations = done - resumedAt;
  report.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const double n = static_cast<double>(std::max<std::int64_t>(1, measured));
  report.samplesPerSecond = measured > 0 ? n * static_cast<double>(report.globalBatch) / report.trainingSeconds
                                         : static_cast<double>(report.iterations * report.globalBatch) / report.seconds;
  dp.synchronize();
  if (lead && !o.weightsOut.empty()) {
    std::ofstream file(o.weightsOut, std::ios::binary);
    if (!file) throw ConfigError(fmt::format("--weights-out: cannot write '{}'", o.weightsOut));
    for (const auto& p : dp.net()->parameters()) {
      const torch::Tensor c = p.detach().contiguous();
      file.write(reinterpret_cast<const char*>(c.data_ptr<float>()), static_cast<std::streamsize>(c.numel() * sizeof(float)));
    }
  }
  report.forward /= n;
  report.backward /= n;
  report.exposedCommunication /= n;
  report.totalCommunication /= n;
  report.update /= n;
  report.dataLoading /= n;
  return report;
}

}  // namespace paraxis::train
