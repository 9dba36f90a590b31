#include "calib/torch/compute_bench.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "calib/torch/backward_clock.hpp"
#include "core/cpu_clock.hpp"
#include "core/median.hpp"
#include "core/trace.hpp"
#include "cost/compute.hpp"
#include "graph/zoo/zoo.hpp"
#include "train/device.hpp"
#include "train/ir_module.hpp"
#include "train/sgd_step.hpp"
#include "train/torch_runtime.hpp"

namespace paraxis::calib {
namespace {

using Clock = std::chrono::steady_clock;

// Passes before the layers are timed (forward and backward): the first ones fault in the heap
// the gradients grow into (first-touch memory is ~100x slower here: one max pool's backward
// took 54 ms in each of its first two passes, 2.7 ms after). The heap can still grow in a later pass (a
// pool's backward: 14.4, 14.8, 1.4 ms); a backward is the median of its passes, which one such
// pass does not move. Not the fastest: with 4 ranks on 2 cores (the netns hosts) the fastest
// pass is one the other ranks left the core to, and the fitted backward ran 15-20 % faster
// than training's (the netns matrix 20.2 % off with it, 15.5 % with the median, 2 ranks 11.5
// and 9.9 %, on the same runs).
constexpr int kWarmUps = 2;

// On a GPU a layer's passes are timed kQueued at a time between two synchronisations: alone,
// each call started on an idle device and ended on a wait, and training queues the next
// kernels while the GPU works. On an H100, ResNet-50's layers timed one call at a time summed
// to 10 % more forward and 15-20 % more backward than training measured (batches 32 and 64),
// ~18 us a call; the idle launch taken off each call covered a third of it.
constexpr int kQueued = 4;

// Seconds of `calls` queued between two synchronisations, per call.
double perQueuedCall(const torch::Device& device, const std::function<void()>& calls) {
  train::synchronizeDevice(device);
  const auto start = Clock::now();
  for (int q = 0; q < kQueued; ++q) calls();
  train::synchronizeDevice(device);
  return std::chrono::duration<double>(Clock::now() - start).count() / kQueued;
}

// On a GPU, each layer's backward pass alone (0 where none is taken), kQueued at a time: its
// inputs are the forward's outputs, detached, needing a gradient (not the data's: training
// never takes it); the median of `repeats` passes after the warm-ups.
// Out-of-place ReLU and Add: an in-place op cannot write a leaf that needs a gradient. The
// inputs' gradients are dropped before each pass: in training a gradient flows on to the
// producer, it is not added into a held tensor (accumulating here made a ReLU's backward 30x
// slower than in a training step).
std::vector<double> isolatedBackwardSeconds(const graph::Model& model, const torch::Tensor& input, int repeats,
                                            const std::function<void()>& beforePass) {
  const torch::Device device = input.device();
  train::IrNet net(model, train::IrNetOptions{.inPlace = false, .channelsLast = device.is_cpu(), .samplesPerCall = input.size(0)});
  net->to(device);
  net->train();
  std::vector<torch::Tensor> outputs;
  {
    torch::NoGradGuard values;
    outputs = net->run(input);
  }
  std::vector<double> seconds(model.size(), 0.0);
  for (int i = 1; i < model.size(); ++i) {
    const graph::Layer& layer = model.layer(i);
    if (layer.counts.forwardFlops <= 0 || !outputs[i].defined()) continue;
    std::vector<torch::Tensor> inputs = outputs;
    for (int j : layer.inputs) {
      if (j != 0) inputs[j] = outputs[j].detach().requires_grad_(true);
    }
    const torch::Tensor y = net->applyLayer(i, inputs);
    if (!y.requires_grad()) continue;
    const torch::Tensor gradient = torch::randn_like(y);
    std::vector<double> times;
    for (int pass = 0; pass < repeats + kWarmUps; ++pass) {
      if (beforePass) beforePass();
      const double call = perQueuedCall(device, [&] {
        for (int j : layer.inputs) inputs[j].mutable_grad().reset();
        y.backward(gradient, /*retain_graph=*/true);
      });
      if (pass >= kWarmUps) times.push_back(call);
    }
    seconds[i] = median(std::move(times));
  }
  return seconds;
}

// `batch` samples of random data shaped as the model's input.
torch::Tensor randomInput(const graph::Model& model, std::int64_t batch) {
  const graph::TensorShape& shape = model.inputShape();
  std::vector<std::int64_t> dims{batch, shape.channels};
  dims.insert(dims.end(), shape.spatial.begin(), shape.spatial.end());
  return torch::randn(dims);
}

// A GPU's queued calls start their first kernel on an idle device and end on a
// synchronisation; in training the next kernels are queued while the GPU works, and neither
// shows. The median time of launching a one-element kernel and waiting for it (0 on the CPU),
// a kQueued-th of it taken off each timed call, leaves the kernels' own time.
double idleLaunchSeconds(const torch::Device& device) {
  if (device.is_cpu()) return 0;
  torch::Tensor one = torch::zeros({1}, torch::TensorOptions().device(device));
  std::vector<double> times;
  for (int trial = 0; trial < 50; ++trial) {
    train::synchronizeDevice(device);
    const auto start = Clock::now();
    one.add_(1);
    train::synchronizeDevice(device);
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(std::move(times));
}

// `seconds` less the idle launch, keeping at least a tenth of it (a call is never free).
double lessLaunch(double seconds, double launch) { return std::max(seconds - launch, 0.1 * seconds); }

constexpr std::int64_t kProbeSamples = 8;
constexpr int kProbePasses = 7;

// Per layer, the median forward and backward seconds over `repeats` passes after the warm-ups
// (backward 0 where none was taken; forward empty for layers not run).
struct LayerSeconds {
  std::vector<std::vector<double>> forward;
  std::vector<double> backward;
  double wallPerCpu = 0;      // TimedCall::wallPerCpu
  double stepCpuSeconds = 0;  // TimedCall::stepCpuSeconds
};

// On a GPU, each layer's forward alone, kQueued calls at a time, over the whole forward's
// outputs; `repeats` passes after the warm-ups (empty for layers not run).
std::vector<std::vector<double>> queuedForwardSeconds(train::IrNet& net, const torch::Tensor& input, int repeats,
                                                      const std::function<void()>& beforePass) {
  const graph::Model& model = net->model();
  std::vector<torch::Tensor> outputs;
  {
    torch::NoGradGuard values;
    outputs = net->run(input);
  }
  std::vector<std::vector<double>> seconds(model.size());
  for (int i = 1; i < model.size(); ++i) {
    if (model.layer(i).counts.forwardFlops <= 0 || !outputs[i].defined()) continue;
    for (int pass = 0; pass < repeats + kWarmUps; ++pass) {
      if (beforePass) beforePass();
      const double call = perQueuedCall(input.device(), [&] { (void)net->applyLayer(i, outputs); });
      if (pass >= kWarmUps) seconds[i].push_back(call);
    }
  }
  return seconds;
}

// The update a training step applies between one backward and the next forward: SGD with
// momentum over every parameter, as train runs it (sgd_step.hpp), at a learning rate that
// leaves the weights as they are. It streams the weights, their gradients and the momentum
// through the caches (134 MiB for ResNet-18), so the next forward reads its weights from
// memory as a training step's does, not from the caches the previous pass left them in.
// Without it the calibration's passes ran faster than training's at the same speed probe
// (resnet18 64², data=2: the run's layers 7.6 % forward and 5.5 % backward over the
// calibration's, 2026-12-06); with it, five calibrations alternated with five without
// priced the 20 rows of the 2-rank matrix 3-12 % higher at the same speed probe (median 7 %),
// where fifteen 2-rank sittings' predictions had sat a median 7 % short (2026-12-07).
class StepUpdate {
 public:
  explicit StepUpdate(std::vector<torch::Tensor> params) : params_(std::move(params)) {
    for (const torch::Tensor& p : params_) momenta_.push_back(torch::zeros_like(p));
  }
  void apply() {
    torch::NoGradGuard noGrad;
    for (std::size_t k = 0; k < params_.size(); ++k) {
      if (params_[k].grad().defined()) train::sgdStep(params_[k], params_[k].grad(), momenta_[k], {}, kRate);
    }
  }

 private:
  static constexpr double kRate = 1e-9;
  std::vector<torch::Tensor> params_, momenta_;
};

// Where the ranks time-share the cores, a layer's calls shorter than the scheduler's slice ran
// whole on a core and the longer ones shared it, so that the medians of their wall times mixed
// two speeds: on the netns hosts (4 ranks on this project's 2-core VM) the fitted curves ran at
// 1.2x their 2-rank figures' time at 3 MFLOP and 1.7x at 300 MFLOP, and ResNet-18@64's pipeline
// (micro-batches of one sample, all four ranks computing) ran 2x what its layers' medians said
// (data=2 x pipeline=2 12-20 % short in every netns sitting), where its steps at one sample ran
// 1.9x their CPU time. So each layer is timed on the thread's CPU clock (the median over the
// passes), and its steps' wall time over their CPU time is kept with their CPU time: the oracle
// prices a span of compute at its CPU time times hw::TimeSharing, fitted to those, at the span's
// length (a split layer's short passes stretch less than a data-parallel step's whole one). One
// thread only: the CPU clock does not see LibTorch's other threads. 2026-12-07, the three netns
// sittings' runs against calibrations made minutes apart: that row -14 to -2 %, the mean error
// 7.6 to 5.2-6.9 %; on 2 ranks the steps ran 1.00-1.05x their CPU time.
bool timesOnCpuClock(const torch::Device& device, int threads) {
  return device.is_cpu() && threads == 1 && core::threadCpuSeconds() >= 0;
}

LayerSeconds timeLayers(train::IrNet& net, const torch::Tensor& input, int repeats, bool cpuClock,
                        const std::function<void()>& beforePass) {
  const graph::Model& model = net->model();
  const torch::Device device = input.device();
  // On a GPU the autograd nodes' hooks would fire as the CPU queues the kernels, not as they end.
  if (!device.is_cpu()) {
    return {queuedForwardSeconds(net, input, repeats, beforePass),
            isolatedBackwardSeconds(model, input, repeats, beforePass)};
  }
  double (*now)() = cpuClock ? core::threadCpuSeconds : core::wallSeconds;
  std::vector<double> marks(model.size() + 1);
  BackwardClock clock(model.size(), now);
  net->setBeforeLayer([&](int i) {
    marks[i] = now();
    clock.beforeLayer(i);
  });
  // On the CPU each pass is a training step's: the forward, one backward through the whole model, each
  // layer's share of it timed by the autograd nodes it made (backward_clock.hpp), then the update.
  // Timed alone, each repeated with its data hot in the caches and no autograd around it,
  // small-cnn@32's pooling, ReLU, batch-norm and fully connected backward ran 1.5-2.4x faster
  // than in a training step, the backward 13 % faster in all (2 ranks, batch 16, 2026-12-04).
  StepUpdate update(net->parameters());
  torch::Tensor gradient;
  LayerSeconds s{std::vector<std::vector<double>>(model.size()), std::vector<double>(model.size(), 0.0)};
  std::vector<std::vector<double>> backward(model.size());
  double wall = 0, spent = 0;  // the timed steps' wall and clock seconds
  for (int pass = 0; pass < repeats + kWarmUps; ++pass) {
    for (torch::Tensor& p : net->parameters()) {
      if (p.grad().defined()) p.mutable_grad().zero_();  // as the gradient engine zeroes its buffers
    }
    if (beforePass) beforePass();
    const double wallStart = core::wallSeconds(), start = now();
    const std::vector<torch::Tensor> outputs = net->run(input);
    marks[model.size()] = now();
    clock.forwardDone();
    std::vector<double> shares;
    if (const torch::Tensor& y = net->prediction(outputs); y.requires_grad()) {
      if (!gradient.defined()) gradient = torch::randn_like(y);
      shares = clock.backward(y, gradient);
    }
    update.apply();
    if (pass < kWarmUps) continue;  // allocations, oneDNN's kernel choice, the heap's first touch
    spent += now() - start;         // the wall's readings around the clock's: the wall's span holds it
    wall += core::wallSeconds() - wallStart;
    for (int i = 1; i < model.size(); ++i) {
      s.forward[i].push_back(marks[i + 1] - marks[i]);
      if (!shares.empty()) backward[i].push_back(shares[i]);
    }
  }
  net->setBeforeLayer(nullptr);
  // One thread's CPU time never exceeds its wall time; a ratio below 1 is the clocks' grain.
  if (cpuClock && spent > 0) {
    s.wallPerCpu = std::max(1.0, wall / spent);
    s.stepCpuSeconds = spent / repeats;
  }
  for (int i = 1; i < model.size(); ++i) s.backward[i] = backward[i].empty() ? 0 : median(backward[i]);
  return s;
}

}  // namespace

double speedProbeSeconds(const std::function<void()>& beforePass, bool cpuClock) {
  double (*now)() = cpuClock ? core::threadCpuSeconds : core::wallSeconds;
  const trace::Quiet untraced;
  train::configureTorchThreads(1, 1);
  torch::manual_seed(1);
  const graph::Model model = graph::buildZooModel("small-cnn", {.spatial = {32}});
  train::IrNet net(model, train::IrNetOptions{.samplesPerCall = kProbeSamples});
  net->train();
  const torch::Tensor input = randomInput(model, kProbeSamples);
  std::vector<double> times;
  for (int pass = 0; pass < kProbePasses + kWarmUps; ++pass) {
    for (torch::Tensor& p : net->parameters()) p.mutable_grad().reset();
    if (beforePass) beforePass();
    const double start = now();
    const std::vector<torch::Tensor> outputs = net->run(input);
    // The loss layer's output is the trainer's (it needs the labels): the last defined one.
    auto last = std::find_if(outputs.rbegin(), outputs.rend(), [](const torch::Tensor& t) { return t.defined(); });
    last->sum().backward();
    if (pass >= kWarmUps) times.push_back(now() - start);
  }
  return median(std::move(times));
}

std::vector<TimedCall> benchLayers(const graph::Model& model, std::int64_t batch, int threads, int repeats,
                                         const std::function<void()>& beforePass, const ComputeDevice& on) {
  train::configureTorchThreads(threads, 1);
  const torch::Device device = train::torchDevice(on);
  torch::manual_seed(1);
  // The layouts training runs at that batch on that device.
  train::IrNet net(model, train::IrNetOptions{.channelsLast = !on.cuda(), .samplesPerCall = batch});
  net->to(device);
  net->train();
  const torch::Tensor input = randomInput(model, batch).to(device);

  const LayerSeconds seconds = timeLayers(net, input, repeats, timesOnCpuClock(device, threads), beforePass);
  const double launch = idleLaunchSeconds(device) / kQueued;
  std::vector<TimedCall> calls;
  for (int i = 1; i < model.size(); ++i) {
    const graph::Layer& layer = model.layer(i);
    if (layer.counts.forwardFlops <= 0 || seconds.forward[i].empty()) continue;
    const graph::Layer& in = layer.inputs.empty() ? layer : model.layer(layer.inputs.front());
    const cost::LayerWork work =
        cost::layerWork(layer, static_cast<double>(in.counts.activationBytes) / model.bytesPerElement(),
                        {.samples = static_cast<double>(batch)}, model.bytesPerElement(), {}, 0,
                        cost::nativeKernelRule(layer, in.output));
    TimedCall call{work.forward.flops, work.forward.bytes, work.kernel >= 0, lessLaunch(median(seconds.forward[i]), launch),
                   work.kernel, work.memoryKind};
    if (seconds.backward[i] > 0) {
      call.backwardData = work.backwardData;
      call.backwardWeight = work.backwardWeight;
      call.backwardSeconds = lessLaunch(seconds.backward[i], launch);
    }
    if (cost::accumulatesBySample(work.kernel)) {
      call.accumulatedWeights = static_cast<double>(layer.counts.params) * model.bytesPerElement();
    }
    call.layer = layer.name;
    call.rows = work.forward.rows;
    call.depth = work.forward.depth;
    call.samples = static_cast<double>(batch);
    call.native = work.forward.native;
    call.strided = work.forward.strided;
    call.columnBytes = work.columnBytes;
    call.wallPerCpu = seconds.wallPerCpu;
    call.stepCpuSeconds = seconds.stepCpuSeconds;
    calls.push_back(call);
  }
  // What the timed passes touch between two uses of a layer's weights (no optimizer runs here).
  const double workingSet =
      cost::wholeModelWorkingSet(model, cost::profileLayers(model), static_cast<double>(batch), /*optimizerStates=*/0);
  for (TimedCall& c : calls) c.workingSet = workingSet;
  return calls;
}

}  // namespace paraxis::calib
