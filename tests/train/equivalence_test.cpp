// Data-parallel training equals one rank training on the same global batch: after k steps the
// weights of every rank equal those of a one-rank run (the same DataParallelStep over a
// single-process communicator), for every grouping and negotiation setting; within a stated
// tolerance for fp16 on the wire; and chunk-sparse equals a serial simulation of the same
// compressor on every rank. Run under mpirun (2 and 3 ranks).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "comm/allreduce.hpp"
#include "comm/collectives.hpp"
#include "comm/self/self_transport.hpp"
#include "comm/world.hpp"
#include "core/error.hpp"
#include "common/mpi_test_main.hpp"
#include "train/data_parallel.hpp"

namespace paraxis::train {
namespace {

comm::Communicator* gWorld = nullptr;
constexpr int kLocalBatch = 4;
constexpr int kSteps = 3;
constexpr double kLr = 0.05;
constexpr double kSparseMomentum = 0.9;  // the SGD momentum DataParallelStep hands the compressor

graph::Model tinyModel() {
  graph::ModelBuilder b("tiny", graph::TensorShape{2, {8, 8}});
  int x = b.conv("c1", 0, {.filters = 4, .kernel = {3}, .padding = {1}});
  x = b.maxPool("p1", b.relu("r1", x), {.kernel = {2}});
  x = b.conv("c2", x, {.filters = 6, .kernel = {3}, .padding = {1}});
  x = b.fc("fc", b.flatten("f", b.relu("r2", x)), 5);
  b.softmaxLoss("loss", x);
  return std::move(b).build();
}

struct Batches {
  torch::Tensor x, y;
};

Batches data(int ranks) {
  torch::manual_seed(123);
  const int global = kLocalBatch * ranks;
  return {torch::randn({kSteps * global, 2, 8, 8}), torch::randint(5, {kSteps * global}, torch::kInt64)};
}

std::vector<torch::Tensor> trainDistributed(const comm::Communicator& comm, const GradientComm& engine,
                                            std::vector<double>* losses = nullptr) {
  const Batches d = data(comm.size());
  torch::manual_seed(7);
  DataParallelStep dp(comm, IrNet(tinyModel()), engine, {0.9, false, 1e-4});
  const int global = kLocalBatch * comm.size();
  for (int s = 0; s < kSteps; ++s) {
    const int start = s * global + comm.rank() * kLocalBatch;
    const double loss = dp.step(d.x.narrow(0, start, kLocalBatch), d.y.narrow(0, start, kLocalBatch), kLr);
    if (losses != nullptr) losses->push_back(loss);
  }
  dp.synchronize();
  std::vector<torch::Tensor> out;
  for (const auto& p : dp.parameters()) out.push_back(p.detach().clone());
  return out;
}

// One rank, the whole global batch, the same step code over a one-process communicator.
std::vector<torch::Tensor> trainSerial(int ranks) {
  const comm::Communicator self(comm::self::makeSelfTransport());
  const Batches d = data(ranks);
  torch::manual_seed(7);
  DataParallelStep dp(self, IrNet(tinyModel()), GradientComm{}, {0.9, false, 1e-4});
  const int global = kLocalBatch * ranks;
  for (int s = 0; s < kSteps; ++s) dp.step(d.x.narrow(0, s * global, global), d.y.narrow(0, s * global, global), kLr);
  dp.synchronize();
  std::vector<torch::Tensor> out;
  for (const auto& p : dp.parameters()) out.push_back(p.detach().clone());
  return out;
}

double relativeDifference(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double diff = 0;
  double scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, (a[i] - b[i]).abs().max().item<double>());
    scale = std::max(scale, b[i].abs().max().item<double>());
  }
  return diff / scale;
}

struct Setting {
  const char* name;
  GradientComm options;
};

std::vector<Setting> denseSettings() {
  GradientComm fusion;
  fusion.order = ReduceOrder::kFifo;
  fusion.fusionBytes = 600;  // several buckets even for this small model
  fusion.firstBucketBytes = 100;
  GradientComm perLayer;
  perLayer.order = ReduceOrder::kFifo;
  perLayer.grouping = Grouping::kPerLayer;
  GradientComm groups;
  groups.order = ReduceOrder::kFifo;
  groups.grouping = Grouping::kGroups;
  groups.groups = 3;
  GradientComm noOverlap = fusion;
  noOverlap.overlap = false;
  GradientComm negotiated = perLayer;
  negotiated.negotiation = Negotiation::kDecentralized;
  // Forward-priority order: more urgent groups overtake queued ones; the next forward
  // completes the updates.
  GradientComm priority = fusion;
  priority.order = ReduceOrder::kForwardPriority;
  priority.chunkBytes = 64;  // far smaller than the groups: partly sent groups get overtaken
  GradientComm priorityPerLayer = perLayer;
  priorityPerLayer.order = ReduceOrder::kForwardPriority;
  GradientComm priorityNoOverlap = priority;
  priorityNoOverlap.overlap = false;
  // Every allreduce the oracle may pick, forced (hierarchical: over this machine's one host).
  GradientComm hierarchical = fusion;
  hierarchical.algorithm = GradientAlgorithm::kHierarchical;
  GradientComm rabenseifner = fusion;
  rabenseifner.algorithm = GradientAlgorithm::kRabenseifner;
  return {{"fusion", fusion},
          {"per-layer", perLayer},
          {"groups", groups},
          {"no-overlap", noOverlap},
          {"decentralized negotiation", negotiated},
          {"forward priority", priority},
          {"forward priority per layer", priorityPerLayer},
          {"forward priority without overlap", priorityNoOverlap},
          {"hierarchical allreduce", hierarchical},
          {"rabenseifner allreduce", rabenseifner}};
}

TEST(Equivalence, DenseFp32MatchesOneRankInEveryGroupingAndNegotiationSetting) {
  const std::vector<torch::Tensor> reference = trainSerial(gWorld->size());
  for (const Setting& s : denseSettings()) {
    const auto weights = trainDistributed(*gWorld, s.options);
    EXPECT_LT(relativeDifference(weights, reference), 1e-5) << s.name;
  }
}

TEST(Equivalence, Fp16OnTheWireStaysWithinHalfPrecision) {
  GradientComm fp16;
  fp16.wire = WireFormat::kF16;
  const double difference = relativeDifference(trainDistributed(*gWorld, fp16), trainSerial(gWorld->size()));
  EXPECT_LT(difference, 5e-3);  // a few fp16 roundings (2^-11) of the gradients per step
  EXPECT_GT(difference, 0);     // the wire really was narrower
}

TEST(Equivalence, Bf16OnTheWireStaysWithinItsPrecision) {
  GradientComm bf16;
  bf16.wire = WireFormat::kBF16;
  const double difference = relativeDifference(trainDistributed(*gWorld, bf16), trainSerial(gWorld->size()));
  EXPECT_LT(difference, 4e-2);  // a few bf16 roundings (2^-8) of the gradients per step
  EXPECT_GT(difference, 0);
}

// A dense tensor's elements in memory order (the engine's buffers hold gradients laid out
// like their parameters: channels-last convolution weights included), and back.
torch::Tensor memoryOrder(const torch::Tensor& t) { return t.as_strided({t.numel()}, {1}); }
torch::Tensor laidOutLike(const torch::Tensor& flat, const torch::Tensor& like) {
  return flat.as_strided(like.sizes(), like.strides());
}

// Every rank's compressor simulated in one process: momentum-corrected accumulation, chunks
// picked by norms summed over ranks, the average of the picked chunks applied.
std::vector<torch::Tensor> trainSparseSerial(int ranks, const GradientComm& o,
                                             const std::vector<std::vector<int>>& groups) {
  const Batches d = data(ranks);
  torch::manual_seed(7);
  IrNet net(tinyModel());
  std::vector<torch::Tensor> params;  // in the engine's order, layer by layer
  for (int layer = 0; layer < net->model().size(); ++layer) {
    for (const auto& p : net->layerParameters(layer)) params.push_back(p);
  }
  std::vector<std::vector<torch::Tensor>> velocity(ranks), residual(ranks);
  for (int r = 0; r < ranks; ++r) {
    for (const auto& g : groups) {
      std::int64_t n = 0;
      for (int i : g) n += params[i].numel();
      velocity[r].push_back(torch::zeros({n}));
      residual[r].push_back(torch::zeros({n}));
    }
  }
  const int global = kLocalBatch * ranks;
  for (int s = 0; s < kSteps; ++s) {
    std::vector<std::vector<torch::Tensor>> flat(ranks);  // per rank, per group
    for (int r = 0; r < ranks; ++r) {
      for (auto& p : params) p.mutable_grad() = torch::Tensor();
      const int start = s * global + r * kLocalBatch;
      const auto out = net->run(d.x.narrow(0, start, kLocalBatch));
      net->loss(out, d.y.narrow(0, start, kLocalBatch)).backward();
      for (const auto& g : groups) {
        std::vector<torch::Tensor> parts;
        for (int i : g) parts.push_back(memoryOrder(params[i].grad()));
        flat[r].push_back(torch::cat(parts));
      }
    }
    torch::NoGradGuard noGrad;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const std::int64_t n = flat[0][gi].numel();
      const std::int64_t chunks = (n + o.sparseChunkElements - 1) / o.sparseChunkElements;
      torch::Tensor norms = torch::zeros({chunks});
      for (int r = 0; r < ranks; ++r) {
        velocity[r][gi].mul_(kSparseMomentum).add_(flat[r][gi]);
        residual[r][gi].add_(velocity[r][gi]);
        norms += torch::constant_pad_nd(residual[r][gi], {0, chunks * o.sparseChunkElements - n})
                     .view({chunks, o.sparseChunkElements}).pow(2).sum(1);
      }
      const std::int64_t keep = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(o.density * chunks)));
      std::vector<std::int64_t> order(chunks);
      std::iota(order.begin(), order.end(), 0);
      const float* norm = norms.data_ptr<float>();
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return norm[a] > norm[b]; });
      order.resize(keep);
      torch::Tensor update = torch::zeros({n});
      for (std::int64_t c : order) {
        const std::int64_t begin = c * o.sparseChunkElements;
        const std::int64_t len = std::min(n, begin + o.sparseChunkElements) - begin;
        torch::Tensor sum = torch::zeros({len});
        for (int r = 0; r < ranks; ++r) sum += residual[r][gi].narrow(0, begin, len) * (1.0F / static_cast<float>(ranks));
        update.narrow(0, begin, len).copy_(sum);
        for (int r = 0; r < ranks; ++r) {
          residual[r][gi].narrow(0, begin, len).zero_();
          velocity[r][gi].narrow(0, begin, len).zero_();
        }
      }
      std::int64_t offset = 0;
      for (int i : groups[gi]) {
        // SGD as DataParallelStep applies it: weight decay, no momentum while sparse.
        const torch::Tensor g = laidOutLike(update.narrow(0, offset, params[i].numel()), params[i]).add(params[i], 1e-4);
        params[i].sub_(g, kLr);
        offset += params[i].numel();
      }
    }
  }
  std::vector<torch::Tensor> out;
  for (const auto& p : params) out.push_back(p.detach().clone());
  return out;
}

TEST(Equivalence, ChunkSparseMatchesASerialSimulationOfTheCompressor) {
  GradientComm o;
  o.wire = WireFormat::kChunkSparse;
  o.density = 0.25;
  o.sparseChunkElements = 16;
  o.fusionBytes = 600;
  o.firstBucketBytes = 100;
  std::vector<std::vector<int>> groups;
  {
    torch::manual_seed(7);
    DataParallelStep probe(comm::Communicator(comm::self::makeSelfTransport()), IrNet(tinyModel()), o,
                           {kSparseMomentum, false, 1e-4});
    for (int g = 0; g < probe.engine().groupCount(); ++g) groups.push_back(probe.engine().groupOf(g));
  }
  const auto distributed = trainDistributed(*gWorld, o);
  const auto serial = trainSparseSerial(gWorld->size(), o, groups);
  // Two ranks add the same two numbers in either order: bit-exact. Three ranks may sum in
  // another order.
  const double tolerance = gWorld->size() <= 2 ? 0 : 1e-6;
  EXPECT_LE(relativeDifference(distributed, serial), tolerance);
  EXPECT_GT(relativeDifference(distributed, trainSerial(gWorld->size())), 1e-4);  // it really was sparse
}


// Buffers staged through host copies around each reduction (the path a GPU's buffers take,
// forced on the CPU) reduce to the average over ranks, in both orders and with chunks smaller
// than a group (forward priority stages chunk by chunk).
TEST(Engine, StagedBuffersReduceToTheAverage) {
  const double meanScale = (gWorld->size() + 1) / 2.0;  // rank r scales its loss by r + 1
  for (const ReduceOrder order : {ReduceOrder::kFifo, ReduceOrder::kForwardPriority}) {
    torch::manual_seed(5);
    const torch::Tensor w = torch::randn({300}).requires_grad_(true);
    const torch::Tensor v = torch::randn({7, 5}).requires_grad_(true);
    GradientComm settings;
    settings.order = order;
    settings.grouping = Grouping::kPerLayer;
    settings.chunkBytes = 256;
    reduce::GradientEngine engine(*gWorld, {{w}, {v}}, settings, 0.9, reduce::GradientEngine::Staging::kAlways);
    engine.beginStep();
    const double scale = gWorld->rank() + 1;
    ((w * scale).sum() + (v * v * scale).sum()).backward();
    if (engine.deferred()) {
      engine.endBackward();
      for (int g = 0; g < engine.groupCount(); ++g) engine.awaitGroup(g);
    } else {
      engine.finishStep();
    }
    const char* name = order == ReduceOrder::kFifo ? "fifo" : "forward priority";
    EXPECT_LT((w.grad() - meanScale).abs().max().item<double>(), 1e-5) << name;
    EXPECT_LT((v.grad() - 2 * v.detach() * meanScale).abs().max().item<double>(), 1e-4) << name;
  }
}

// A failure on the engine's negotiation thread (here: a peer that never joins the step, so the
// readiness round times out) reaches the caller of finishStep as the comm error, instead of
// terminating the process; the waiting rank is not held past the deadline.
TEST(Engine, ABackgroundTimeoutReachesTheCaller) {
  if (gWorld->size() < 2) GTEST_SKIP() << "needs a peer that stays away";
  const comm::Communicator comm = gWorld->withOptions({.deadlineSeconds = 2, .verify = false});
  torch::Tensor weight = torch::ones({64}, torch::requires_grad());
  GradientComm settings;
  settings.order = ReduceOrder::kFifo;
  settings.negotiation = Negotiation::kDecentralized;
  {
    reduce::GradientEngine engine(comm, reduce::GradientEngine::eachTensorALayer({weight}), settings);
    if (comm.rank() == 0) {
      engine.beginStep();
      (weight * torch::randn({64})).sum().backward();
      const auto start = std::chrono::steady_clock::now();
      std::string message = "no error";
      try {
        engine.finishStep();
      } catch (const Error& e) {
        message = e.what();
      }
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_NE(message.find("allreduce"), std::string::npos) << message;
      EXPECT_LT(waited, 4 * 2.0);
    }
  }
  comm::barrier(*gWorld);
}

}  // namespace
}  // namespace paraxis::train

int main(int argc, char** argv) {
  torch::set_num_threads(1);
  return paraxis::testing::runMpiTests(argc, argv, "training equivalence",
                                       [](paraxis::comm::Communicator* world) { paraxis::train::gWorld = world; });
}
