#include "calib/layer_trace.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include "calib/json_file.hpp"
#include "core/error.hpp"
#include "core/median.hpp"

namespace paraxis::calib {
namespace {

struct Interval {
  double begin = 0, end = 0;  // microseconds, as the trace writes them
};

struct Call {
  std::string layer;
  Interval at;
};

// One rank's events: its measured steps, its main thread's communication (merged into disjoint
// intervals, in order) and its layers' calls.
struct RankEvents {
  int mainThread = 0;
  std::vector<Interval> steps, communication;
  std::vector<Call> forward, backward;
};

// The breakdown's own communication intervals (docs/trace.md), which a layer's interval holds.
bool isCommunication(const std::string& category) {
  return category == "halo" || category == "shuffle" || category == "layer_collectives";
}

std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> out;
  for (const Interval& x : v) {
    if (!out.empty() && x.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, x.end);
    } else {
      out.push_back(x);
    }
  }
  return out;
}

// The time of the disjoint, ordered `intervals` within `x`.
double overlap(const std::vector<Interval>& intervals, const Interval& x) {
  auto it = std::lower_bound(intervals.begin(), intervals.end(), x.begin,
                             [](const Interval& i, double t) { return i.end < t; });
  double sum = 0;
  for (; it != intervals.end() && it->begin < x.end; ++it)
    sum += std::min(it->end, x.end) - std::max(it->begin, x.begin);
  return sum;
}

// Whether `x` lies inside one of the ordered, disjoint `steps`.
bool insideAny(const std::vector<Interval>& steps, const Interval& x) {
  auto it = std::upper_bound(steps.begin(), steps.end(), x.begin,
                             [](double t, const Interval& s) { return t < s.begin; });
  return it != steps.begin() && x.end <= std::prev(it)->end;
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

nlohmann::json parseTrace(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw NotFoundError(fmt::format("{}: cannot read the trace", path));
  const nlohmann::json d = parseJsonFile(file, path);
  if (d.is_object() && d.contains("traceEvents") && d.at("traceEvents").is_array())
    return d.at("traceEvents");
  if (d.is_array()) return d;
  throw ConfigError(fmt::format(
      "{}: expected a Chrome trace (an object with 'traceEvents') from 'paraxis train --trace'", path));
}

std::string text(const nlohmann::json& e, const char* key) {
  return e.contains(key) && e.at(key).is_string() ? e.at(key).get<std::string>() : std::string();
}

// Every rank's events, by the rank (the trace's pid).
std::map<int, RankEvents> ranksOf(const nlohmann::json& events, const std::string& path) {
  std::map<int, RankEvents> ranks;
  for (const nlohmann::json& e : events) {  // the main threads first: they name them in metadata
    if (e.is_object() && text(e, "ph") == "M" && text(e, "name") == "thread_name" && e.contains("args") &&
        e.at("args").is_object() && text(e.at("args"), "name") == "main") {
      ranks[e.value("pid", 0)].mainThread = e.value("tid", 0);
    }
  }
  std::map<int, std::vector<Interval>> communication;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& e = events[i];
    if (!e.is_object() || text(e, "ph") != "X") continue;
    if (!e.contains("ts") || !e.at("ts").is_number() || !e.contains("dur") || !e.at("dur").is_number()) {
      throw ConfigError(fmt::format(
          "{}: event {}: expected the numbers 'ts' and 'dur' of a complete ('X') event", path, i));
    }
    const double ts = e.at("ts").get<double>();
    const Interval at{ts, ts + e.at("dur").get<double>()};
    const int pid = e.value("pid", 0);
    RankEvents& r = ranks[pid];
    const bool main = e.value("tid", 0) == r.mainThread;
    const std::string category = text(e, "cat");
    if (category == "step" && main && text(e, "name").find("(warm-up)") == std::string::npos)
      r.steps.push_back(at);
    if (category == "layer" && main) r.forward.push_back({text(e, "name"), at});
    if (category == "layer_backward") r.backward.push_back({text(e, "name"), at});
    if (isCommunication(category) && main) communication[pid].push_back(at);
  }
  for (auto& [pid, intervals] : communication) ranks[pid].communication = merged(std::move(intervals));
  for (auto& [pid, r] : ranks) {
    r.steps = merged(std::move(r.steps));
    r.backward = ownBackwards(std::move(r.backward));
  }
  return ranks;
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
    const double inside = overlap(r.communication, c.at);
    it->second.compute.push_back((c.at.end - c.at.begin - inside) * 1e-6);
    it->second.communication.push_back(inside * 1e-6);
  }
  return byLayer;
}

}  // namespace

std::vector<MeasuredLayer> readLayerTrace(const std::string& path, int rank) {
  const std::map<int, RankEvents> ranks = ranksOf(parseTrace(path), path);
  if (std::all_of(ranks.begin(), ranks.end(), [](const auto& r) { return r.second.steps.empty(); })) {
    throw ConfigError(
        fmt::format("{}: no measured step (a 'step' event outside the warm-up) on any rank: is it a "
                    "'paraxis train --trace' file?",
                    path));
  }
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
