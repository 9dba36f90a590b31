#include "train/placed_net.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "comm/collectives.hpp"
#include "comm/posted.hpp"
#include "cost/topology.hpp"
#include "core/error.hpp"
#include "hw/presets.hpp"
#include "parallel/spatial_split.hpp"
#include "plan/op_graph.hpp"
#include "plan/placement.hpp"

namespace paraxis::train {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

bool isLoss(graph::LayerKind k) { return k == graph::LayerKind::kSoftmaxLoss || k == graph::LayerKind::kMseLoss; }

std::size_t countOf(const torch::Tensor& t) { return static_cast<std::size_t>(t.numel()); }

// How a tensor travels: 4-D ones in channels-last order (IrNet's layout for 2-D samples, so that
// neither side transposes), the rest contiguous. Both sides follow the rule, so the bytes agree.
torch::MemoryFormat wireFormat(std::int64_t dims) {
  return dims == 4 ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous;
}

torch::Tensor onWire(const torch::Tensor& t) { return t.contiguous(wireFormat(t.dim())); }

// A receive buffer of `sizes`: in training, `store`'s storage (allocated on first use or when
// the batch changes; a step's tensors are gone by the next step, and first-touch memory costs
// ~100x warm memory here); otherwise a fresh one (an evaluation's outputs outlive the call).
torch::Tensor kept(torch::Tensor& store, const std::vector<std::int64_t>& sizes, const torch::TensorOptions& options,
                   bool training) {
  if (!training) return torch::empty(sizes, options);
  if (!store.defined() || store.sizes().vec() != sizes) store = torch::empty(sizes, options);
  return store.detach();  // a tensor of its own (no gradient from the last step) on the same storage
}

}  // namespace

struct PlacedNet::Step {
  explicit Step(int layers)
      : outputs(layers), buffers(layers), receives(layers), leaves(layers), roots(layers), gradientBuffers(layers),
        gradientReceives(layers) {}
  std::vector<torch::Tensor> outputs;
  std::vector<torch::Tensor> buffers;    // per layer of another rank this rank consumes
  std::vector<comm::Posted> receives;
  std::vector<torch::Tensor> leaves;     // received tensors, and this rank's cut tensors as local users read them
  std::vector<torch::Tensor> roots;      // this rank's cut tensors, connected to the graph that made them
  std::vector<std::vector<torch::Tensor>> gradientBuffers;  // per cut tensor: one per remote user
  std::vector<std::vector<comm::Posted>> gradientReceives;
  std::vector<int> pending;        // per leaf: this rank's segments that read it, still to run
  std::vector<bool> segmentDone;
  std::vector<torch::Tensor> sending;  // alive until their sends complete
  std::vector<comm::Posted> sends;
  torch::Tensor loss;

  void sweepSends() {
    for (comm::Posted& p : sends) p.test();
  }
  // Between layers: a posted message moves only while its rank is inside the transport (a
  // large one needs both sides for its handshake), so the ranks look in after every layer
  // instead of when they next wait.
  void progress() {
    sweepSends();
    for (comm::Posted& p : receives) p.test();
    for (std::vector<comm::Posted>& layer : gradientReceives) {
      for (comm::Posted& p : layer) p.test();
    }
  }
  double transportSeconds() const {
    double total = 0;
    for (const comm::Posted& p : receives) total += p.transportSeconds();
    for (const std::vector<comm::Posted>& layer : gradientReceives) {
      for (const comm::Posted& p : layer) total += p.transportSeconds();
    }
    for (const comm::Posted& p : sends) total += p.transportSeconds();
    return total;
  }
};

LayerPlacement placeLayers(const comm::Communicator& world, const graph::Model& model, const PlacementRequest& r) {
  LayerPlacement p;
  p.device.assign(static_cast<std::size_t>(model.size()), 0);
  p.order.resize(static_cast<std::size_t>(model.size()));
  if (world.rank() == 0) {
    const hw::Cluster host = hw::loadCluster("local");
    const auto transfer = [&host](double bytes) {
      return cost::pointToPointOn(host, 1, bytes, cost::Congestion::kExpected).seconds;
    };
    plan::OpGraph g = r.forward.empty() ? plan::trainingGraph(model, host, r.samples, r.ranks, r.ranks)
                                        : plan::layerGraph(model, r.forward, r.backward, r.samples, transfer);
    g.receiverCopies = host.device.receivesByCopy;
    const plan::OpPlacement placed = plan::placeBy(r.method, g, {.devices = r.ranks}, r.timeLimit);
    p.makespan = placed.makespan;
    p.oneRank = g.totalSeconds();
    p.method = placed.method;
    std::vector<int> units(static_cast<std::size_t>(g.units()));
    std::iota(units.begin(), units.end(), 0);
    // Forward operation u is unit u's: units by the start of their forward, ties in unit order.
    std::stable_sort(units.begin(), units.end(), [&](int a, int b) { return placed.start[a] < placed.start[b]; });
    p.order.clear();
    for (int u : units) {
      for (int layer : g.unitLayers[u]) {
        p.device[layer] = placed.device[u];
        p.order.push_back(layer);
      }
    }
  }
  comm::broadcast(world, p.device.data(), p.device.size(), comm::DataType::kI32);
  comm::broadcast(world, p.order.data(), p.order.size(), comm::DataType::kI32);
  double predicted[2] = {p.makespan, p.oneRank};
  comm::broadcast(world, predicted, 2, comm::DataType::kF64);
  p.makespan = predicted[0];
  p.oneRank = predicted[1];
  return p;
}

PlacedNet::PlacedNet(IrNet net, comm::Communicator group, LayerPlacement placement)
    : net_(std::move(net)), group_(std::move(group)), device_(std::move(placement.device)),
      order_(std::move(placement.order)), rank_(group_.rank()), makespan_(placement.makespan),
      oneRank_(placement.oneRank), method_(std::move(placement.method)) {
  const graph::Model& model = net_->model();
  const int n = model.size();
  if (static_cast<int>(device_.size()) != n || static_cast<int>(order_.size()) != n) {
    throw ConfigError(fmt::format("a placement of {} layers for model '{}' of {}", device_.size(), model.name(), n));
  }
  for (int i = 0; i < n; ++i) {
    if (isLoss(model.layer(i).kind)) lossLayer_ = i;
  }
  if (lossLayer_ < 0) throw ConfigError(fmt::format("model '{}' has no loss layer for a placement to end in", model.name()));
  for (int i = 0; i < n; ++i) {
    if (device_[i] < 0 || device_[i] >= group_.size()) {
      throw ConfigError(fmt::format("layer '{}' placed on rank {} of a group of {}", model.layer(i).name, device_[i],
                                    group_.size()));
    }
    if (lossLayer_ >= 0 && isLoss(model.layer(i).kind)) device_[i] = device_[lossLayer_];
  }
  position_.assign(n, 0);
  for (int k = 0; k < n; ++k) position_[order_[k]] = k;
  remoteUsers_.resize(n);
  neededHere_.assign(n, false);
  usedHere_.assign(n, false);
  receiveStore_.resize(n);
  gradientStore_.resize(n);
  std::vector<int> users(n, 0);
  for (int c = 1; c < n; ++c) {
    for (int j : model.layer(c).inputs) {
      ++users[j];
      if (j == 0) continue;  // every rank holds the batch
      if (device_[j] != device_[c]) {
        std::vector<int>& users = remoteUsers_[j];
        if (std::find(users.begin(), users.end(), device_[c]) == users.end()) users.push_back(device_[c]);
        if (device_[c] == rank_) neededHere_[j] = true;
      } else if (device_[c] == rank_) {
        usedHere_[j] = true;
      }
    }
  }
  for (std::vector<int>& peers : remoteUsers_) std::sort(peers.begin(), peers.end());
  std::vector<std::vector<int>> consumers(n);
  for (int c = 1; c < n; ++c) {
    for (int j : model.layer(c).inputs) consumers[j].push_back(c);
  }
  // A layer ends its unit unless it feeds exactly one layer, of one input, on its rank.
  cut_.assign(n, false);
  for (int j = 1; j < n; ++j) {
    const std::vector<int>& c = consumers[j];
    const bool chained = c.size() == 1 && model.layer(c[0]).inputs.size() == 1 && device_[c[0]] == device_[j];
    cut_[j] = !c.empty() && !chained;
  }
  buildSegments(consumers);
}

void PlacedNet::buildSegments(const std::vector<std::vector<int>>& consumers) {
  const graph::Model& model = net_->model();
  Segment loss;
  for (int end = 1; end < model.size(); ++end) {
    if (device_[end] != rank_ || (!cut_[end] && !consumers[end].empty())) continue;
    int first = end;  // back along the chain to the unit's first layer
    while (model.layer(first).inputs.size() == 1) {
      const int p = model.layer(first).inputs[0];
      if (p == 0 || cut_[p] || device_[p] != rank_) break;
      first = p;
    }
    const bool isLossChain = isLoss(model.layer(end).kind);
    Segment& g = isLossChain ? loss : segments_.emplace_back();
    if (!isLossChain) g.root = end;
    for (int j : model.layer(first).inputs) {
      if (j != 0) g.leaves.push_back(j);
    }
  }
  if (device_[lossLayer_] == rank_) segments_.push_back(std::move(loss));
}

// A remote input, as a leaf of this rank's graph; waits for it the first time.
torch::Tensor PlacedNet::arrived(Step& s, int layer, bool training) {
  if (s.leaves[layer].defined()) return s.leaves[layer];
  s.sweepSends();
  waited_ += s.receives[layer].waitIdle();
  s.leaves[layer] = s.buffers[layer].requires_grad_(training);
  return s.leaves[layer];
}

// Layer c's inputs that are leaves here (received, or cut on this rank). Each segment of
// backward that reads a leaf adds its gradient into the leaf's. A layer that overwrites its
// first input reads a copy (a leaf that needs a gradient cannot be written in place); the
// others read the leaf itself: a copy per read cost as much as the transfers (inception-mini).
void PlacedNet::readInputs(Step& s, int c, bool training) {
  const std::vector<int>& inputs = net_->model().layer(c).inputs;
  for (int j : inputs) {
    if (j == 0) continue;
    if (device_[j] != rank_) {
      s.outputs[j] = arrived(s, j, training);
    } else if (s.leaves[j].defined()) {
      s.outputs[j] = s.leaves[j];
    } else {
      continue;
    }
    if (j == inputs.front() && net_->overwritesInput(c)) s.outputs[j] = s.outputs[j].clone();
  }
}

torch::Tensor PlacedNet::receiveBuffer(int layer, const torch::Tensor& batch, bool training) {
  const graph::TensorShape& shape = net_->model().layer(layer).output;
  std::vector<std::int64_t> sizes{batch.size(0), shape.channels};
  sizes.insert(sizes.end(), shape.spatial.begin(), shape.spatial.end());
  const torch::TensorOptions options = batch.options()
                                           .dtype(net_->parameters().front().scalar_type())
                                           .memory_format(wireFormat(static_cast<std::int64_t>(sizes.size())));
  return kept(receiveStore_[layer], sizes, options, training);
}

void PlacedNet::forward(const torch::Tensor& batch, bool training, Step& s) {
  const graph::Model& model = net_->model();
  for (int j = 1; j < model.size(); ++j) {
    if (!neededHere_[j]) continue;
    s.buffers[j] = receiveBuffer(j, batch, training);
    s.receives[j] = comm::postRecv(group_, s.buffers[j].data_ptr(), countOf(s.buffers[j]), parallel::commTypeOf(s.buffers[j]),
                                   device_[j], {.tag = j});
  }
  s.outputs[0] = onWire(batch);  // as IrNet::run lays its input out
  for (int l : order_) {
    if (l == 0 || device_[l] != rank_ || isLoss(model.layer(l).kind)) continue;
    readInputs(s, l, training);
    net_->beforeLayer(l);
    const auto start = std::chrono::steady_clock::now();
    s.outputs[l] = net_->applyLayer(l, s.outputs);
    net_->layerDone(l, s.outputs[l], start);
    s.progress();
    if (!cut_[l]) continue;
    s.roots[l] = s.outputs[l];
    if (!remoteUsers_[l].empty()) {
      const torch::Tensor& c = s.sending.emplace_back(onWire(s.outputs[l].detach()));
      for (int peer : remoteUsers_[l]) {
        s.sends.push_back(comm::postSend(group_, c.data_ptr(), countOf(c), parallel::commTypeOf(c), peer, {.tag = l}));
      }
    }
    // This rank's users read a leaf, whose gradient joins the others'.
    if (usedHere_[l]) s.leaves[l] = s.outputs[l].detach().requires_grad_(training);
  }
  // The loss's inputs from other ranks (the loss layer is skipped above).
  if (lossLayer_ >= 0 && device_[lossLayer_] == rank_) {
    for (int i = 0; i < model.size(); ++i) {
      if (!isLoss(model.layer(i).kind)) continue;
      readInputs(s, i, training);
    }
  }
}

void PlacedNet::postGradientReceives(Step& s) {
  for (int l = 1; l < static_cast<int>(device_.size()); ++l) {
    if (device_[l] != rank_ || !s.roots[l].defined()) continue;
    for (int peer : remoteUsers_[l]) {
      std::vector<torch::Tensor>& store = gradientStore_[l];
      const std::size_t k = s.gradientBuffers[l].size();
      if (store.size() <= k) store.resize(k + 1);
      const torch::Tensor& root = s.roots[l];
      torch::Tensor& g = s.gradientBuffers[l].emplace_back(
          kept(store[k], root.sizes().vec(), root.options().memory_format(wireFormat(root.dim())), true));
      s.gradientReceives[l].push_back(comm::postRecv(group_, g.data_ptr(), countOf(g), parallel::commTypeOf(g), peer,
                                                     {.tag = l + static_cast<int>(device_.size())}));
    }
  }
}

void PlacedNet::sendLeafGradient(Step& s, int j) {
  const torch::Tensor& leaf = s.leaves[j];
  const torch::Tensor& c = s.sending.emplace_back(leaf.defined() && leaf.grad().defined() ? onWire(leaf.grad())
                                                                                          : torch::zeros_like(s.buffers[j]));
  s.sends.push_back(comm::postSend(group_, c.data_ptr(), countOf(c), parallel::commTypeOf(c), device_[j],
                                   {.tag = j + static_cast<int>(device_.size())}));
}

// The ready segment latest in the order (the loss's first); -1 when none is left.
int PlacedNet::nextSegment(const Step& s) const {
  int best = -1, bestPosition = -1;
  for (int k = 0; k < static_cast<int>(segments_.size()); ++k) {
    const Segment& g = segments_[k];
    if (s.segmentDone[k] || (g.root >= 0 && s.pending[g.root] > 0)) continue;
    const int position = g.root < 0 ? static_cast<int>(order_.size()) : position_[g.root];
    if (position > bestPosition) best = k, bestPosition = position;
  }
  return best;
}

void PlacedNet::runSegment(Step& s, const Segment& g) {
  if (g.root < 0) {
    if (s.loss.defined()) s.loss.backward();
  } else {
    const int r = g.root;
    torch::Tensor grad = s.leaves[r].defined() && s.leaves[r].grad().defined() ? s.leaves[r].grad() : torch::Tensor();
    for (std::size_t q = 0; q < s.gradientReceives[r].size(); ++q) {
      s.sweepSends();
      waited_ += s.gradientReceives[r][q].waitIdle();
      const torch::Tensor& received = s.gradientBuffers[r][q];
      grad = grad.defined() ? grad + received : received;
    }
    if (grad.defined() && s.roots[r].defined() && s.roots[r].requires_grad()) {
      torch::autograd::backward({s.roots[r]}, {grad});
    }
  }
  for (int j : g.leaves) {
    if (--s.pending[j] == 0 && neededHere_[j]) sendLeafGradient(s, j);
  }
  s.progress();
}

void PlacedNet::backward(Step& s) {
  postGradientReceives(s);
  s.pending.assign(device_.size(), 0);
  for (const Segment& g : segments_) {
    for (int j : g.leaves) ++s.pending[j];
  }
  s.segmentDone.assign(segments_.size(), false);
  for (std::size_t done = 0; done < segments_.size(); ++done) {
    const int k = nextSegment(s);
    if (k < 0) throw InternalError("a placement's backward has units left and none ready");
    s.segmentDone[k] = true;
    runSegment(s, segments_[k]);
  }
}

void PlacedNet::finishSends(Step& s) {
  s.sweepSends();
  for (comm::Posted& w : s.sends) waited_ += w.waitIdle();
  comm_ = {};
  comm_.pipelineTransfers = s.transportSeconds();
  comm_.bubble = waited_;
}

BatchExecutor::Pass PlacedNet::forwardBackward(const torch::Tensor& batch, const torch::Tensor& target,
                                               reduce::GradientEngine& /*engine*/) {
  Step s(net_->model().size());
  Pass pass;
  waited_ = 0;
  auto start = Clock::now();
  double idle = waited_ + s.transportSeconds();
  forward(batch, true, s);
  if (lossLayer_ >= 0 && device_[lossLayer_] == rank_) {
    s.loss = net_->loss(s.outputs, target);
    pass.loss = s.loss.item<double>();
  }
  pass.forwardSeconds = since(start) - (waited_ + s.transportSeconds() - idle);
  start = Clock::now();
  idle = waited_ + s.transportSeconds();
  backward(s);
  pass.backwardSeconds = since(start) - (waited_ + s.transportSeconds() - idle);
  finishSends(s);
  return pass;
}

std::vector<torch::Tensor> PlacedNet::run(const torch::Tensor& batch) {
  Step s(net_->model().size());
  forward(batch, false, s);
  // Every loss's input (the main one and auxiliary heads'), from the loss's rank to every rank
  // of the replica, so that each rank evaluates the whole loss and the prediction.
  const graph::Model& model = net_->model();
  const int root = device_[lossLayer_];
  std::vector<torch::Tensor> outputs = std::move(s.outputs);
  for (int i = 0; i < model.size(); ++i) {
    if (!isLoss(model.layer(i).kind)) continue;
    const int slot = model.layer(i).inputs.front();
    torch::Tensor input = root == rank_ ? onWire(outputs[slot]) : s.buffers[slot];
    if (!input.defined()) input = receiveBuffer(slot, batch, false);
    comm::broadcast(group_, input.data_ptr(), countOf(input), parallel::commTypeOf(input), {.root = root});
    outputs[slot] = input;
  }
  finishSends(s);
  return outputs;
}

torch::Tensor PlacedNet::loss(const std::vector<torch::Tensor>& outputs, const torch::Tensor& target) {
  return net_->loss(outputs, target);
}

double PlacedNet::replicaLoss(double local) {
  comm::broadcast(group_, &local, 1, comm::DataType::kF64, {.root = device_[lossLayer_]});
  return local;
}

std::vector<torch::Tensor> PlacedNet::wholeParameters() {
  std::vector<torch::Tensor> out;
  for (int i = 0; i < net_->model().size(); ++i) {
    for (const torch::Tensor& p : net_->layerParameters(i)) {
      torch::Tensor t = p.detach().clone().contiguous();
      comm::broadcast(group_, t.data_ptr(), countOf(t), parallel::commTypeOf(t), {.root = device_[i]});
      out.push_back(t);
    }
  }
  return out;
}

std::string PlacedNet::describe() const {
  std::vector<int> layers(static_cast<std::size_t>(group_.size()), 0);
  for (int d : device_) ++layers[d];
  std::string text = fmt::format("a placement of the replica's layers on {} ranks ({} layers each)", group_.size(),
                                 fmt::join(layers, ", "));
  if (makespan_ > 0) {
    text += fmt::format("; by {} on the measured layer times: a step in {:.1f} ms against {:.1f} ms on one rank ({:.2f}x)",
                        method_, makespan_ * 1e3, oneRank_ * 1e3, oneRank_ / makespan_);
  }
  return text;
}

}  // namespace paraxis::train
