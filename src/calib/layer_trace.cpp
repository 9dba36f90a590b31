#include "calib/layer_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "calib/trace_events.hpp"
#include "core/error.hpp"
#include "core/median.hpp"

namespace paraxis::calib {
namespace {

struct Call {
  std::string layer;
  TraceInterval at;
};

// One rank's layers: its measured steps, its main thread's communication (merged into disjoint
// intervals, in order) and its layers' calls.
struct RankEvents {
  std::vector<TraceInterval> steps, communication;
  std::vector<Call> forward, backward;
};

// The breakdown's own communication intervals (docs/trace.md), which a layer's interval holds.
bool isCommunication(const std::string& category) {
  return category == "halo" || category == "shuffle" || category == "layer_collectives";
}

// The backward calls that are their layers' own: not those holding another layer's backward.
// Where an input feeds several layers, each one's interval ends when the input's gradient is
// complete, after every branch (docs/trace.md): a residual block's shortcut convolution, done
// first, holds the whole main branch (ResNet-18's layer4 downsampling: 9 ms for a 0.2 ms call).
std::vector<Call> ownBackwards(std::vector<Call> calls) {
  std::sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) { return a.at.begin < b.at.begin; });
  std::vector<Call> own;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const bool holdsNext = i + 1 < calls.size() && calls[i + 1].at.begin > calls[i].at.begin &&
                           calls[i + 1].at.end <= calls[i].at.end && calls[i + 1].layer != calls[i].layer;
    if (!holdsNext) own.push_back(std::move(calls[i]));
  }
  return own;
}

RankEvents layersOf(const RankTrace& trace) {
  RankEvents r;
  r.steps = trace.steps;
  std::vector<TraceInterval> communication;
  for (const TraceEvent& e : trace.events) {
    const bool main = trace.onMain(e);
    if (e.category == "layer" && main) r.forward.push_back({e.name, e.at});
    if (e.category == "layer_backward") r.backward.push_back({e.name, e.at});
    if (isCommunication(e.category) && main) communication.push_back(e.at);
  }
  r.communication = mergedIntervals(std::move(communication));
  r.backward = ownBackwards(std::move(r.backward));
  return r;
}

// One layer's calls on one rank inside the measured steps: each one's compute and the
// communication inside it, in seconds.
struct Samples {
  std::vector<double> compute, communication;
  double medianCompute() const { return median(compute); }
  double medianCommunication() const { return median(communication); }
  int calls() const { return static_cast<int>(compute.size()); }
};

// The calls inside the rank's measured steps, by layer, in one pass; `order`: the layers in the
// order they first ran there.
std::map<std::string, Samples> samplesOf(const RankEvents& r, const std::vector<Call>& calls,
                                         std::vector<std::string>* order = nullptr) {
  std::map<std::string, Samples> byLayer;
  for (const Call& c : calls) {
    if (!insideAny(r.steps, c.at)) continue;  // the warm-up's, an evaluation's
    auto [it, fresh] = byLayer.try_emplace(c.layer);
    if (fresh && order != nullptr) order->push_back(c.layer);
    const double inside = timeInside(r.communication, c.at);
    it->second.compute.push_back((c.at.end - c.at.begin - inside) * 1e-6);
    it->second.communication.push_back(inside * 1e-6);
  }
  return byLayer;
}

}  // namespace

std::vector<MeasuredLayer> readLayerTrace(const std::string& path, int rank) {
  return layersOfTrace(readRankTraces(path), rank, path);
}

std::vector<MeasuredLayer> layersOfTrace(const RankTraces& traces, int rank, const std::string& path) {
  std::map<int, RankEvents> ranks;
  for (const auto& [pid, trace] : traces) ranks[pid] = layersOf(trace);
  // The ranks to read a layer from: `rank` first, then the others in order.
  std::vector<const std::pair<const int, RankEvents>*> order;
  if (ranks.contains(rank)) order.push_back(&*ranks.find(rank));
  for (const auto& r : ranks) {
    if (r.first != rank) order.push_back(&r);
  }
  std::vector<MeasuredLayer> layers;
  std::set<std::string> seen;
  for (const auto* r : order) {
    std::vector<std::string> names;
    const std::map<std::string, Samples> forward = samplesOf(r->second, r->second.forward, &names);
    const std::map<std::string, Samples> backward = samplesOf(r->second, r->second.backward);
    for (const std::string& name : names) {
      if (!seen.insert(name).second) continue;
      const Samples& f = forward.at(name);
      const auto b = backward.find(name);
      const Samples none;
      const Samples& bw = b != backward.end() ? b->second : none;
      layers.push_back({name, r->first, f.medianCompute(), bw.medianCompute(),
                        f.medianCommunication() + bw.medianCommunication(), f.calls(), bw.calls()});
    }
  }
  if (layers.empty()) throw ConfigError(fmt::format("{}: no 'layer' event inside a measured step", path));
  return layers;
}

}  // namespace paraxis::calib
