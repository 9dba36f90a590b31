#include "reduce/gradient_engine.hpp"

#include <fmt/format.h>
#include <torch/csrc/autograd/function_hook.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "comm/allreduce.hpp"
#include "core/check.hpp"
#include "core/error.hpp"

namespace paraxis::reduce {
namespace {

// Fires after a parameter's gradient has been accumulated into its (buffer-backed) .grad.
class ReadyHook final : public torch::autograd::FunctionPostHook {
 public:
  ReadyHook(GradientEngine* engine, int parameter) : engine_(engine), parameter_(parameter) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    engine_->markReady(parameter_);
    return outputs;
  }

 private:
  GradientEngine* engine_;
  int parameter_;
};

}  // namespace

GradientEngine::GradientEngine(comm::Communicator comm, std::vector<torch::Tensor> parameters, EngineOptions options)
    : comm_(std::move(comm)), parameters_(std::move(parameters)), options_(options) {
  if (options_.negotiate || options_.priority) negotiation_ = comm_.duplicate();
  formGroups();
  for (int i = 0; i < static_cast<int>(parameters_.size()); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(parameters_[i]);
    accumulator->add_post_hook(std::make_unique<ReadyHook>(this, i));
    accumulators_.push_back(std::move(accumulator));
  }
  sparseActive_ = options_.density < 1.0;
}

GradientEngine::~GradientEngine() {
  if (scheduler_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      backwardDone_ = true;
      reducedChanged_.notify_all();
    }
    scheduler_.join();
  }
  if (negotiator_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      backwardDone_ = true;
    }
    negotiator_.join();
  }
  for (auto& g : groups_) {
    try {
      g.work.wait();
    } catch (...) {  // the step that failed has reported it already
    }
  }
}

void GradientEngine::formGroups() {
  const int n = static_cast<int>(parameters_.size());
  groupOfParameter_.assign(n, -1);
  std::vector<double> bytes;  // backward order: the last parameter's gradient comes first
  for (int i = n - 1; i >= 0; --i) bytes.push_back(static_cast<double>(parameters_[i].numel()) * 4);
  const cost::GroupingRule rule{options_.grouping, static_cast<double>(options_.fusionBytes),
                                static_cast<double>(options_.firstBucketBytes), options_.groups};
  for (const std::vector<int>& members : cost::formGradientGroups(bytes, rule)) {
    Group g;
    for (int k : members) g.members.push_back(n - 1 - k);
    groups_.push_back(std::move(g));
  }
  for (int g = 0; g < static_cast<int>(groups_.size()); ++g) {
    Group& group = groups_[g];
    std::int64_t elements = 0;
    for (int i : group.members) elements += parameters_[i].numel();
    group.buffer = torch::zeros({elements});
    std::int64_t offset = 0;
    for (int i : group.members) {
      torch::Tensor& p = parameters_[i];
      // The parameter's own strides (channels-last weights included): autograd accumulates
      // into a gradient laid out like its parameter without a copy.
      p.mutable_grad() = group.buffer.narrow(0, offset, p.numel()).as_strided(p.sizes(), p.strides());
      offset += p.numel();
      groupOfParameter_[i] = g;
    }
    if (options_.density < 1.0) {
      group.velocity = torch::zeros({elements});
      group.residual = torch::zeros({elements});
    }
  }
  complete_.assign(groups_.size(), 0);
}

void GradientEngine::beginStep() {
  if (negotiator_.joinable()) negotiator_.join();
  if (scheduler_.joinable()) scheduler_.join();  // the caller awaited every group
  std::lock_guard lock(mutex_);
  for (Group& g : groups_) {
    g.buffer.zero_();
    g.pending = static_cast<int>(g.members.size());
    g.launched = false;
  }
  std::fill(complete_.begin(), complete_.end(), 0);
  nextLaunch_ = 0;
  backwardDone_ = false;
  reduced_.assign(groups_.size(), 0);
  failure_ = nullptr;
  if (deferred()) {
    scheduler_ = std::thread(&GradientEngine::scheduleLoop, this);
  } else if (options_.negotiate && !sparseActive_ && comm_.size() > 1) {
    negotiator_ = std::thread(&GradientEngine::negotiationLoop, this);
  }
}

void GradientEngine::endBackward() {
  std::lock_guard lock(mutex_);
  backwardDone_ = true;
  reducedChanged_.notify_all();
}

void GradientEngine::awaitGroup(int group) {
  std::unique_lock lock(mutex_);
  const auto deadline = std::chrono::duration<double>(comm_.options().deadlineSeconds);
  if (!reducedChanged_.wait_for(lock, deadline, [&] { return reduced_.at(group) != 0 || failure_ != nullptr; })) {
    throw TimeoutError(fmt::format("gradient group {} of {} was not reduced within the {:.0f} s deadline", group,
                                   groups_.size(), comm_.options().deadlineSeconds));
  }
  if (failure_ != nullptr) std::rethrow_exception(failure_);
}

// One thread runs every collective of the step, in an order that depends only on agreed
// state: while some group is not yet agreed ready, negotiate; then reduce the agreed group that
// comes first in the forward pass (groups are numbered in backward order: the highest index).
// With nothing agreed to send, the thread sleeps until this rank has a group the others have
// not agreed yet, so it spends no CPU beside backward.
void GradientEngine::scheduleLoop() {
  const int count = static_cast<int>(groups_.size());
  std::vector<std::uint8_t> ready(groups_.size(), 0);
  std::vector<std::uint8_t> agreed(groups_.size(), 0);
  std::vector<std::int64_t> sent(groups_.size(), 0);  // elements
  const auto chunk = std::max<std::int64_t>(1, static_cast<std::int64_t>(options_.chunkBytes / sizeof(float)));
  comm::AllreduceOptions o;
  o.prescale = 1.0F / static_cast<float>(comm_.size());
  if (options_.fp16) o.wire = comm::DataType::kF16;
  const auto deadline = std::chrono::duration<double>(comm_.options().deadlineSeconds);
  auto readyHere = [&](int g) { return backwardDone_ || (options_.overlap && complete_[g] != 0); };
  double reducing = 0;
  bool allAgreed = false;
  int left = count;
  try {
    auto highestAgreed = [&] {
      for (int g = count - 1; g >= 0; --g) {
        if (agreed[g] != 0 && sent[g] < groups_[g].buffer.numel()) return g;
      }
      return -1;
    };
    while (left > 0) {
      if (!allAgreed) {
        const bool pending = highestAgreed() >= 0;
        {
          std::unique_lock lock(mutex_);
          auto news = [&] {
            for (int g = 0; g < count; ++g) {
              if (agreed[g] == 0 && readyHere(g)) return true;
            }
            return false;
          };
          if (!pending && !reducedChanged_.wait_for(lock, deadline, [&] { return stopping_ || news(); })) {
            throw TimeoutError(fmt::format("gradient groups: backward produced no new group within the {:.0f} s deadline",
                                           comm_.options().deadlineSeconds));
          }
          if (stopping_) return;
          for (int g = 0; g < count; ++g) ready[g] = readyHere(g);
        }
        const std::vector<std::uint8_t> now = agreeReady(ready);
        bool progress = false;
        allAgreed = true;
        for (int g = 0; g < count; ++g) {
          progress = progress || (now[g] != 0 && agreed[g] == 0);
          allAgreed = allAgreed && now[g] != 0;
        }
        agreed = now;
        // Another rank is behind: wait a cycle before asking again.
        if (!progress && !pending) std::this_thread::sleep_for(std::chrono::duration<double>(options_.cycleSeconds));
      }
      const int pick = highestAgreed();
      if (pick < 0) continue;
      // While backward runs, one chunk at a time, so a group that becomes ready can overtake;
      // once every group is agreed the order is final and the rest goes out in one call.
      Group& g = groups_[pick];
      const std::int64_t n = allAgreed ? g.buffer.numel() - sent[pick] : std::min(chunk, g.buffer.numel() - sent[pick]);
      float* data = g.buffer.data_ptr<float>() + sent[pick];
      const auto start = std::chrono::steady_clock::now();
      comm::iallreduce(comm_, data, data, static_cast<std::size_t>(n), comm::DataType::kF32, o).wait();
      reducing += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      sent[pick] += n;
      if (sent[pick] < g.buffer.numel()) continue;
      --left;
      std::lock_guard lock(mutex_);
      reduced_[pick] = 1;
      if (left == 0) totalSeconds_ = reducing;
      reducedChanged_.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    failure_ = std::current_exception();
    reducedChanged_.notify_all();
  }
}

void GradientEngine::markReady(int parameter) {
  std::lock_guard lock(mutex_);
  Group& g = groups_[groupOfParameter_[parameter]];
  if (--g.pending == 0) {
    complete_[groupOfParameter_[parameter]] = 1;
    if (deferred()) reducedChanged_.notify_all();
  }
  if (options_.overlap && !options_.negotiate && !deferred() && !sparseActive_) launchReadyInOrder();
}

// Caller holds mutex_. Groups go out in their fixed order, so every rank issues the same
// sequence of collectives whatever order its gradients arrived in.
void GradientEngine::launchReadyInOrder() {
  while (nextLaunch_ < static_cast<int>(groups_.size()) && complete_[nextLaunch_] != 0) launch(nextLaunch_++);
}

void GradientEngine::launch(int index) {
  Group& g = groups_[index];
  g.launched = true;
  comm::AllreduceOptions o;
  o.prescale = 1.0F / static_cast<float>(comm_.size());
  if (options_.fp16) o.wire = comm::DataType::kF16;
  g.work = comm::iallreduce(comm_, g.buffer.data_ptr<float>(), g.buffer.data_ptr<float>(),
                            static_cast<std::size_t>(g.buffer.numel()), comm::DataType::kF32, o);
}

// One negotiation round: a bitwise AND over ranks of the groups each has ready, so every
// rank learns the same set (no coordinator). Through the progress thread (an i-call), whose
// polling yields to the backward pass it overlaps.
std::vector<std::uint8_t> GradientEngine::agreeReady(const std::vector<std::uint8_t>& readyHere) {
  const std::size_t count = readyHere.size();
  if (comm_.size() == 1) return readyHere;
  std::vector<std::uint64_t> bits((count + 63) / 64, 0);
  for (std::size_t g = 0; g < count; ++g) {
    if (readyHere[g] != 0) bits[g / 64] |= 1ULL << (g % 64);
  }
  comm::iallreduce(negotiation_, bits.data(), bits.data(), bits.size(), comm::DataType::kU64,
                   {.algorithm = comm::AllreduceAlgorithm::kRecursiveDoubling, .op = comm::ReduceOp::kBitAnd})
      .wait();
  std::vector<std::uint8_t> agreed(count);
  for (std::size_t g = 0; g < count; ++g) agreed[g] = static_cast<std::uint8_t>((bits[g / 64] >> (g % 64)) & 1ULL);
  return agreed;
}

void GradientEngine::negotiationLoop() {
  std::vector<std::uint8_t> ready(groups_.size());
  while (true) {
    {
      std::lock_guard lock(mutex_);
      for (std::size_t g = 0; g < groups_.size(); ++g) ready[g] = complete_[g] != 0 || backwardDone_;
    }
    const std::vector<std::uint8_t> agreed = agreeReady(ready);
    bool all = true;
    {
      std::lock_guard lock(mutex_);
      for (std::size_t g = 0; g < groups_.size(); ++g) {
        if (agreed[g] != 0 && !groups_[g].launched) launch(static_cast<int>(g));
        all = all && groups_[g].launched;
      }
    }
    if (all) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(options_.cycleSeconds));
  }
}

void GradientEngine::finishStep(const std::function<void(int)>& onGroupDone) {
  const auto start = std::chrono::steady_clock::now();
  if (deferred()) {
    endBackward();
    double callbacks = 0;
    for (int index = static_cast<int>(groups_.size()) - 1; index >= 0; --index) {
      awaitGroup(index);
      if (onGroupDone) {
        const auto before = std::chrono::steady_clock::now();
        onGroupDone(index);
        callbacks += std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
      }
    }
    exposedSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - callbacks;
    return;
  }
  {
    std::lock_guard lock(mutex_);
    backwardDone_ = true;
    if (!options_.negotiate && !sparseActive_) {
      std::fill(complete_.begin(), complete_.end(), 1);
      launchReadyInOrder();
    }
  }
  if (negotiator_.joinable()) negotiator_.join();
  if (options_.negotiate && !sparseActive_ && comm_.size() == 1) {
    for (int g = 0; g < static_cast<int>(groups_.size()); ++g) launch(g);
  }
  totalSeconds_ = 0;
  double callbacks = 0;
  for (int index = 0; index < static_cast<int>(groups_.size()); ++index) {
    Group& g = groups_[index];
    g.work.wait();
    totalSeconds_ += g.work.seconds();
    if (sparseActive_) sparseReduce(g);
    if (onGroupDone) {
      const auto before = std::chrono::steady_clock::now();
      onGroupDone(index);
      callbacks += std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
    }
  }
  exposedSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - callbacks;
  if (sparseActive_) totalSeconds_ = exposedSeconds_;  // reduced after backward, all of it exposed
}

// Deep-gradient-compression style: momentum-corrected accumulation, chunks chosen by the
// norms summed over ranks (so every rank picks the same), dense allreduce of those chunks.
void GradientEngine::sparseReduce(Group& g) {
  const std::int64_t n = g.buffer.numel();
  const std::int64_t chunk = options_.chunkElements;
  const std::int64_t chunks = (n + chunk - 1) / chunk;
  g.velocity.mul_(options_.sparseMomentum).add_(g.buffer);
  g.residual.add_(g.velocity);
  const torch::Tensor padded = torch::constant_pad_nd(g.residual, {0, chunks * chunk - n});
  torch::Tensor norms = padded.view({chunks, chunk}).pow(2).sum(1).contiguous();
  comm::allreduce(comm_, norms.data_ptr<float>(), norms.data_ptr<float>(), static_cast<std::size_t>(chunks),
                  comm::DataType::kF32);
  const std::int64_t keep = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(options_.density * chunks)));
  // Stable order by norm, ties to the lower index: identical on every rank.
  std::vector<std::int64_t> order(chunks);
  std::iota(order.begin(), order.end(), 0);
  const float* norm = norms.data_ptr<float>();
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return norm[a] > norm[b]; });
  order.resize(keep);
  std::sort(order.begin(), order.end());
  std::vector<float> send;
  send.reserve(keep * chunk);
  const float* residual = g.residual.data_ptr<float>();
  for (std::int64_t c : order) {
    const std::int64_t begin = c * chunk;
    const std::int64_t end = std::min(n, begin + chunk);
    send.insert(send.end(), residual + begin, residual + end);
  }
  comm::allreduce(comm_, send.data(), send.data(), send.size(), comm::DataType::kF32,
                  {.prescale = 1.0F / static_cast<float>(comm_.size())});
  g.buffer.zero_();
  float* out = g.buffer.data_ptr<float>();
  float* velocity = g.velocity.data_ptr<float>();
  float* res = g.residual.data_ptr<float>();
  std::size_t cursor = 0;
  for (std::int64_t c : order) {
    const std::int64_t begin = c * chunk;
    const std::int64_t end = std::min(n, begin + chunk);
    for (std::int64_t i = begin; i < end; ++i) {
      out[i] = send[cursor++];
      res[i] = 0;
      velocity[i] = 0;  // momentum factor masking
    }
  }
}

std::vector<torch::Tensor> GradientEngine::residualState() const {
  std::vector<torch::Tensor> out;
  for (const Group& g : groups_) {
    if (g.velocity.defined()) {
      out.push_back(g.velocity);
      out.push_back(g.residual);
    }
  }
  return out;
}

}  // namespace paraxis::reduce
