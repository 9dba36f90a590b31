#include "plan/op_graph.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "cost/compute.hpp"
#include "cost/topology.hpp"
#include "plan/time_sharing_walk.hpp"

namespace paraxis::plan {
namespace {

// Per layer its unit: a chain continues while a layer has one input whose producer feeds it
// alone. Units come out in a topological order (a chain depends on others only through its
// first layer, whose inputs sit in units made before it).
std::vector<int> unitsOf(const graph::Model& model, std::vector<std::vector<int>>& layersOfUnit) {
  std::vector<int> consumers(model.size(), 0);
  for (const graph::Layer& l : model.layers()) {
    for (int p : l.inputs) ++consumers[p];
  }
  std::vector<int> unit(model.size(), 0);
  for (int i = 0; i < model.size(); ++i) {
    const std::vector<int>& in = model.layer(i).inputs;
    if (in.size() == 1 && consumers[in[0]] == 1) {
      unit[i] = unit[in[0]];
    } else {
      unit[i] = static_cast<int>(layersOfUnit.size());
      layersOfUnit.emplace_back();
    }
    layersOfUnit[unit[i]].push_back(i);
  }
  return unit;
}

}  // namespace

double OpGraph::totalSeconds() const {
  double total = 0;
  for (const OpNode& op : ops) total += op.seconds;
  return total;
}

double OpGraph::busySeconds(int op, const std::vector<int>& inEdges, const std::vector<int>& unitDevice) const {
  double busy = ops[op].seconds;
  if (!receiverCopies) return busy;
  for (int e : inEdges) {
    if (unitDevice[ops[edges[e].from].unit] != unitDevice[ops[op].unit]) busy += edges[e].seconds;
  }
  return busy;
}

double OpGraph::arrival(int e, double finish, const std::vector<int>& unitDevice) const {
  const OpEdge& edge = edges[e];
  const bool crosses = unitDevice[ops[edge.from].unit] != unitDevice[ops[edge.to].unit];
  return finish + (crosses && !receiverCopies ? edge.seconds : 0);
}

std::vector<std::vector<int>> OpGraph::outEdges() const {
  std::vector<std::vector<int>> out(ops.size());
  for (int e = 0; e < static_cast<int>(edges.size()); ++e) out[edges[e].from].push_back(e);
  return out;
}

std::vector<std::vector<int>> OpGraph::inEdges() const {
  std::vector<std::vector<int>> in(ops.size());
  for (int e = 0; e < static_cast<int>(edges.size()); ++e) in[edges[e].to].push_back(e);
  return in;
}

std::vector<std::vector<bool>> OpGraph::reachability() const {
  const int n = size();
  std::vector<std::vector<bool>> reaches(n, std::vector<bool>(n, false));
  const std::vector<std::vector<int>> out = outEdges();
  // Operations are in a topological order: a successor's set is complete before its predecessors'.
  for (int i = n - 1; i >= 0; --i) {
    for (int e : out[i]) {
      const int j = edges[e].to;
      reaches[i][j] = true;
      for (int k = 0; k < n; ++k) {
        if (reaches[j][k]) reaches[i][k] = true;
      }
    }
  }
  return reaches;
}

OpGraph layerGraph(const graph::Model& model, const std::vector<double>& forward, const std::vector<double>& backward,
                   double samples, const std::function<double(double)>& transfer, double optimizerStatesPerWeight) {
  OpGraph g;
  const std::vector<int> unit = unitsOf(model, g.unitLayers);
  const int units = static_cast<int>(g.unitLayers.size());
  std::vector<double> unitForward(units, 0), unitBackward(units, 0);
  g.unitBytes.assign(units, 0);
  for (int i = 0; i < model.size(); ++i) {
    unitForward[unit[i]] += forward[i];
    unitBackward[unit[i]] += backward[i];
    const graph::LayerCounts& c = model.layer(i).counts;
    g.unitBytes[unit[i]] += static_cast<double>(c.params) * model.bytesPerElement() * (2 + optimizerStatesPerWeight) +
                            static_cast<double>(c.activationBytes) * samples;
  }
  for (int u = 0; u < units; ++u) {
    const std::vector<int>& layers = g.unitLayers[u];
    g.unitNames.push_back(layers.size() == 1 ? model.layer(layers[0]).name
                                             : model.layer(layers.front()).name + ".." + model.layer(layers.back()).name);
  }
  // Forward operations 0..units-1 in unit order, then backward ones in reverse unit order.
  for (int u = 0; u < units; ++u) g.ops.push_back({"fwd " + g.unitNames[u], unitForward[u], u});
  for (int u = units - 1; u >= 0; --u) g.ops.push_back({"bwd " + g.unitNames[u], unitBackward[u], u});
  const auto backwardOp = [units](int u) { return 2 * units - 1 - u; };
  std::map<std::pair<int, int>, double> crossing;  // (producer unit, consumer unit) -> bytes
  for (int i = 0; i < model.size(); ++i) {
    for (int p : model.layer(i).inputs) {
      if (unit[p] != unit[i]) crossing[{unit[p], unit[i]}] += static_cast<double>(model.layer(p).counts.activationBytes) * samples;
    }
  }
  for (const auto& [pair, bytes] : crossing) {
    const double seconds = transfer(bytes);
    g.edges.push_back({pair.first, pair.second, bytes, seconds});
    g.edges.push_back({backwardOp(pair.second), backwardOp(pair.first), bytes, seconds});
  }
  for (int u = 0; u < units; ++u) g.edges.push_back({u, backwardOp(u), 0, 0});
  return g;
}

OpGraph trainingGraph(const graph::Model& model, const hw::Cluster& cluster, double samples,
                      std::int64_t ranks, int devices, double optimizerStatesPerWeight) {
  const double sharing = cluster.sharingFactor(ranks);
  const cost::DeviceRates rates(cluster.device, cluster.device.peak("fp32"));
  cost::LogMemo logs;
  const std::vector<cost::LayerProfile> profiles = cost::profileLayers(model);
  cost::LocalShare share;
  share.samples = samples;
  share.weightsResident =
      cost::wholeModelResidentShare(model, profiles, cluster.device, samples, optimizerStatesPerWeight);
  detail::LayerArrays a;
  a.reset(model.size());
  for (int i = 0; i < model.size(); ++i) {
    const cost::LayerTimes t = cost::layerTimes(rates, profiles[i], share, model.bytesPerElement(), logs);
    a.forward[i] = sharing * t.forward;
    a.backwardData[i] = sharing * t.backwardData;
    a.backwardWeight[i] = sharing * t.backwardWeight;
    a.backward[i] = a.backwardData[i] + a.backwardWeight[i];
  }
  // Where the ranks time-share the cores, each device computes its share of the forward, then of
  // the backward, between two waits for another's tensors: the oracle's walk of a placement's
  // stage (time_sharing_walk.hpp).
  if (const hw::TimeSharing timeSharing = cluster.timeSharingAt(ranks); !timeSharing.isIdentity()) {
    detail::noGroupAwaits(a, model.size());
    detail::stretchSpans(timeSharing, true, 1 / static_cast<double>(std::max(devices, 1)), 0, a);
  }
  const auto transfer = [&cluster](double bytes) {
    return cost::pointToPointOn(cluster, 1, bytes, cost::Congestion::kExpected).seconds +
           cluster.implementation.handoffWait;
  };
  OpGraph g = layerGraph(model, a.forward, a.backward, samples, transfer, optimizerStatesPerWeight);
  g.receiverCopies = cluster.device.receivesByCopy;
  return g;
}

OpGraph explicitGraph(const std::vector<double>& seconds, const std::vector<OpEdge>& edges,
                      const std::vector<double>& unitBytes) {
  OpGraph g;
  for (int i = 0; i < static_cast<int>(seconds.size()); ++i) {
    g.ops.push_back({"op" + std::to_string(i), seconds[i], i});
    g.unitNames.push_back("op" + std::to_string(i));
    g.unitLayers.push_back({i});
  }
  g.edges = edges;
  g.unitBytes = unitBytes;
  return g;
}

}  // namespace paraxis::plan
