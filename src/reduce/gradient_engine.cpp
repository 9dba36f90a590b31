#include "reduce/gradient_engine.hpp"

#include <torch/csrc/autograd/function_hook.h>

#include <algorithm>

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

GradientEngine::Layers GradientEngine::eachTensorALayer(const std::vector<torch::Tensor>& tensors) {
  Layers layers;
  for (const torch::Tensor& t : tensors) layers.push_back({t});
  return layers;
}

GradientEngine::GradientEngine(const comm::Communicator& comm, Layers layers, GradientComm settings,
                               double sparseMomentum, Staging staging)
    : core_(comm, settings) {
  settings.validate("gradient engine settings");
  for (const auto& layer : layers) parameters_.insert(parameters_.end(), layer.begin(), layer.end());
  const bool onCpu = std::all_of(parameters_.begin(), parameters_.end(), [](const torch::Tensor& p) { return p.is_cpu(); });
  if (settings.sparse() && !onCpu) throw ConfigError("--wire chunk-sparse: runs with the model on the CPU only");
  if (settings.sparse()) {
    sparse_ = std::make_unique<ChunkSparseWire>(settings.density, settings.sparseChunkElements, sparseMomentum);
  }
  formGroups(layers, staging);
  ordered_ = makeOrderedScheduler(core_);
  sparseScheduler_ = makeInOrderScheduler(core_, [this](int group) {
    sparse_->reduce(core_.reduceComm(), group, buffers_[group]);
  });
  for (int i = 0; i < static_cast<int>(parameters_.size()); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(parameters_[i]);
    const std::uintptr_t key = accumulator->add_post_hook(std::make_unique<ReadyHook>(this, i));
    hooks_.emplace_back(std::move(accumulator), key);
  }
  sparseActive_ = sparse_ != nullptr;
}

GradientEngine::~GradientEngine() {
  for (auto& [accumulator, key] : hooks_) accumulator->del_post_hook(key);
  ordered_->stop();
  sparseScheduler_->stop();
  for (GradientGroup& g : core_.groups) {
    try {
      g.work.wait();
    } catch (...) {  // the step that failed has reported it already
    }
  }
}

// Layers in backward order, each layer's bytes together: the same list the oracle groups.
// A group's members are its parameters in backward order; the buffer holds them in that order.
void GradientEngine::formGroups(const Layers& layers, Staging staging) {
  std::vector<int> firstParameter(layers.size() + 1, 0);
  for (std::size_t l = 0; l < layers.size(); ++l) firstParameter[l + 1] = firstParameter[l] + static_cast<int>(layers[l].size());
  std::vector<int> backwardLayers;
  std::vector<double> bytes;
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    if (layers[l].empty()) continue;
    double layerBytes = 0;
    for (const torch::Tensor& t : layers[l]) layerBytes += static_cast<double>(t.numel()) * 4;
    backwardLayers.push_back(l);
    bytes.push_back(layerBytes);
  }
  groupOfParameter_.assign(parameters_.size(), -1);
  for (const std::vector<int>& entries : formGradientGroups(bytes, core_.settings())) {
    GradientGroup g;
    for (int k : entries) {
      const int layer = backwardLayers[k];
      g.layers.push_back(layer);
      for (int i = firstParameter[layer + 1] - 1; i >= firstParameter[layer]; --i) g.members.push_back(i);
    }
    const int index = static_cast<int>(core_.groups.size());
    for (int i : g.members) g.elements += parameters_[i].numel();
    addBuffer(g, staging);
    std::int64_t offset = 0;
    for (int i : g.members) {
      torch::Tensor& p = parameters_[i];
      // The parameter's own strides (channels-last weights included): autograd accumulates
      // into a gradient laid out like its parameter without a copy.
      p.mutable_grad() = buffers_.back().narrow(0, offset, p.numel()).as_strided(p.sizes(), p.strides());
      offset += p.numel();
      groupOfParameter_[i] = index;
    }
    if (sparse_) sparse_->addGroup(g.elements);
    core_.groups.push_back(std::move(g));
  }
  core_.complete.assign(core_.groups.size(), 0);
  core_.reduced.assign(core_.groups.size(), 0);
}

// The group's buffer on its members' device, and where the wire reads it but cannot there (or
// `staging` asks), a host copy of it that the reduction fills and empties (pinned for a GPU, so
// that the copies run at the link's speed). One GPU alone at fp32 has no wire to feed.
void GradientEngine::addBuffer(GradientGroup& g, Staging staging) {
  const torch::Device device = parameters_[g.members.front()].device();
  torch::Tensor buffer = torch::zeros({g.elements}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
  if (device.is_cpu() && staging == Staging::kWhereNeeded) {
    g.data = buffer.data_ptr<float>();
  } else if (core_.reductionMovesData() || staging == Staging::kAlways) {
    torch::Tensor host = torch::zeros({g.elements}, torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(device.is_cuda()));
    g.data = host.data_ptr<float>();
    g.stage = [buffer, host](std::int64_t offset, std::int64_t count, bool toHost) {
      torch::NoGradGuard noGrad;
      if (toHost) {
        host.narrow(0, offset, count).copy_(buffer.narrow(0, offset, count));
      } else {
        buffer.narrow(0, offset, count).copy_(host.narrow(0, offset, count));
      }
    };
    staging_.push_back(std::move(host));
  }
  buffers_.push_back(std::move(buffer));
}

void GradientEngine::beginStep() {
  ordered_->stop();
  sparseScheduler_->stop();
  {
    std::lock_guard lock(core_.mutex);
    core_.resetStep();
  }
  for (torch::Tensor& buffer : buffers_) buffer.zero_();
  active().beginStep();
}

void GradientEngine::markReady(int parameter) {
  if (held_) return;
  std::lock_guard lock(core_.mutex);
  const int group = groupOfParameter_[parameter];
  if (--core_.groups[group].pending == 0) {
    core_.complete[group] = 1;
    active().groupComplete(group);
  }
}

void GradientEngine::finishStep(const GroupCallback& onGroupDone) { times_ = active().finish(onGroupDone); }

}  // namespace paraxis::reduce
