#include "calib/torch/backward_clock.hpp"

#include <ATen/SequenceNumber.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <unordered_set>
#include <utility>

namespace paraxis::calib {
namespace {

using NodeEnd = std::pair<double, std::uint64_t>;  // when (seconds), the node's sequence number

class EndHook final : public torch::autograd::FunctionPostHook {
 public:
  EndHook(std::vector<NodeEnd>* ends, std::uint64_t sequence, double (*now)())
      : ends_(ends), sequence_(sequence), now_(now) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    ends_->emplace_back(now_(), sequence_);
    return outputs;
  }

 private:
  std::vector<NodeEnd>* ends_;
  std::uint64_t sequence_;
  double (*now_)();
};

// The hooks on a graph's nodes, taken off again however the backward ends: a parameter's
// accumulator outlives the graph, and its hook points at this pass's list.
struct Hooked {
  std::vector<std::pair<std::shared_ptr<torch::autograd::Node>, std::uintptr_t>> nodes;
  Hooked() = default;
  Hooked(const Hooked&) = delete;
  Hooked& operator=(const Hooked&) = delete;
  ~Hooked() {
    for (auto& [node, key] : nodes) node->del_post_hook(key);
  }
};

// A parameter's gradient accumulator: autograd gives it the highest number (it runs first).
constexpr std::uint64_t kAccumulation = std::numeric_limits<std::uint64_t>::max();

}  // namespace

void BackwardClock::beforeLayer(int index) { boundaries_.at(static_cast<std::size_t>(index)) = at::sequence_number::peek(); }

void BackwardClock::forwardDone() { boundaries_.back() = at::sequence_number::peek(); }

int BackwardClock::layerOf(std::uint64_t sequence) const {
  if (sequence < boundaries_[1] || sequence >= boundaries_.back()) return -1;
  // The boundaries rise with the layers: the last one at or below it.
  const auto after = std::upper_bound(boundaries_.begin() + 1, boundaries_.end() - 1, sequence);
  return static_cast<int>(after - boundaries_.begin()) - 1;
}

std::vector<double> BackwardClock::backward(const torch::Tensor& output, const torch::Tensor& gradient) {
  std::vector<NodeEnd> ends;
  Hooked hooked;
  std::vector<std::shared_ptr<torch::autograd::Node>> stack{output.grad_fn()};
  std::unordered_set<const torch::autograd::Node*> seen;
  while (!stack.empty()) {
    std::shared_ptr<torch::autograd::Node> node = std::move(stack.back());
    stack.pop_back();
    if (!node || !seen.insert(node.get()).second) continue;
    const std::uintptr_t key =
        node->add_post_hook(std::make_unique<EndHook>(&ends, node->sequence_nr(), now_));
    for (const torch::autograd::Edge& edge : node->next_edges()) stack.push_back(edge.function);
    hooked.nodes.emplace_back(std::move(node), key);
  }
  const double start = now_();
  output.backward(gradient);
  std::sort(ends.begin(), ends.end());
  std::vector<double> seconds(boundaries_.size() - 1, 0.0);
  double previous = start;
  int last = -1;  // the layer of the node before
  for (const auto& [end, sequence] : ends) {
    const int layer = sequence == kAccumulation ? last : layerOf(sequence);
    if (layer >= 0) seconds[static_cast<std::size_t>(layer)] += end - previous;
    if (sequence != kAccumulation) last = layer;
    previous = end;
  }
  return seconds;
}

}  // namespace paraxis::calib
