#include "calib/trace_events.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "calib/json_file.hpp"
#include "core/error.hpp"

namespace paraxis::calib {
namespace {

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

bool namesMainThread(const nlohmann::json& e) {
  return e.is_object() && text(e, "ph") == "M" && text(e, "name") == "thread_name" && e.contains("args") &&
         e.at("args").is_object() && text(e.at("args"), "name") == "main";
}

}  // namespace

RankTraces readRankTraces(const std::string& path) {
  const nlohmann::json events = parseTrace(path);
  RankTraces ranks;
  for (const nlohmann::json& e : events) {  // the main threads first: the metadata names them
    if (namesMainThread(e)) ranks[e.value("pid", 0)].mainThread = e.value("tid", 0);
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& e = events[i];
    if (!e.is_object() || text(e, "ph") != "X") continue;
    if (!e.contains("ts") || !e.at("ts").is_number() || !e.contains("dur") || !e.at("dur").is_number()) {
      throw ConfigError(fmt::format(
          "{}: event {}: expected the numbers 'ts' and 'dur' of a complete ('X') event", path, i));
    }
    const double ts = e.at("ts").get<double>();
    RankTrace& r = ranks[e.value("pid", 0)];
    r.events.push_back({text(e, "cat"), text(e, "name"), e.value("tid", 0), {ts, ts + e.at("dur").get<double>()}});
    const TraceEvent& added = r.events.back();
    if (added.category == "step" && r.onMain(added) && added.name.find("(warm-up)") == std::string::npos)
      r.steps.push_back(added.at);
  }
  for (auto& [pid, r] : ranks) {  // in order, each its own (consecutive steps may touch)
    std::sort(r.steps.begin(), r.steps.end(),
              [](const TraceInterval& a, const TraceInterval& b) { return a.begin < b.begin; });
  }
  if (std::all_of(ranks.begin(), ranks.end(), [](const auto& r) { return r.second.steps.empty(); })) {
    throw ConfigError(
        fmt::format("{}: no measured step (a 'step' event outside the warm-up) on any rank: is it a "
                    "'paraxis train --trace' file?",
                    path));
  }
  return ranks;
}

std::vector<TraceInterval> mergedIntervals(std::vector<TraceInterval> v) {
  std::sort(v.begin(), v.end(), [](const TraceInterval& a, const TraceInterval& b) { return a.begin < b.begin; });
  std::vector<TraceInterval> out;
  for (const TraceInterval& x : v) {
    if (!out.empty() && x.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, x.end);
    } else {
      out.push_back(x);
    }
  }
  return out;
}

std::ptrdiff_t intervalHolding(const std::vector<TraceInterval>& intervals, const TraceInterval& x) {
  auto it = std::upper_bound(intervals.begin(), intervals.end(), x.begin,
                             [](double t, const TraceInterval& s) { return t < s.begin; });
  if (it == intervals.begin() || x.end > std::prev(it)->end) return -1;
  return std::prev(it) - intervals.begin();
}

double timeInside(const std::vector<TraceInterval>& intervals, const TraceInterval& x) {
  auto it = std::lower_bound(intervals.begin(), intervals.end(), x.begin,
                             [](const TraceInterval& i, double t) { return i.end < t; });
  double sum = 0;
  for (; it != intervals.end() && it->begin < x.end; ++it)
    sum += std::min(it->end, x.end) - std::max(it->begin, x.begin);
  return sum;
}

}  // namespace paraxis::calib
