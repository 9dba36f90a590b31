#include "calib/saved_timings.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "calib/json_file.hpp"
#include "core/error.hpp"

namespace paraxis::calib {
namespace {

constexpr int kVersion = 1;

nlohmann::json passJson(const cost::PassWork& w) {
  return {{"flops", w.flops},
          {"bytes", w.bytes},
          {"rows", w.rows},
          {"samples", w.samples},
          {"serial_bytes", w.serialBytes},
          {"native", w.native},
          {"depth", w.depth},
          {"weight_gradient", w.weightGradient},
          {"resident", w.resident},
          {"curve_flops", w.curveFlops}};
}

nlohmann::json callJson(const TimedCall& c) {
  return {{"layer", c.layer},
          {"flops", c.flops},
          {"bytes", c.bytes},
          {"matrix", c.matrix},
          {"seconds", c.seconds},
          {"kernel", c.kernel},
          {"memory_kind", c.memoryKind},
          {"rows", c.rows},
          {"depth", c.depth},
          {"samples", c.samples},
          {"native", c.native},
          {"backward_data", passJson(c.backwardData)},
          {"backward_weight", passJson(c.backwardWeight)},
          {"backward_seconds", c.backwardSeconds},
          {"accumulated_weights", c.accumulatedWeights},
          {"column_bytes", c.columnBytes},
          {"working_set", c.workingSet}};
}

// Reading one file: each value checked, a miss named with the file and the key's path.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  const nlohmann::json& at(const nlohmann::json& j, const std::string& key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key)) throw fail(where + key, "is missing");
    return j.at(key);
  }
  double number(const nlohmann::json& j, const std::string& key, const std::string& where,
                double low = 0) const {
    const nlohmann::json& v = at(j, key, where);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < low) {
      throw fail(where + key, fmt::format("expected a finite number >= {:g}", low));
    }
    return v.get<double>();
  }
  bool flag(const nlohmann::json& j, const std::string& key, const std::string& where) const {
    const nlohmann::json& v = at(j, key, where);
    if (!v.is_boolean()) throw fail(where + key, "expected true or false");
    return v.get<bool>();
  }
  int index(const nlohmann::json& j, const std::string& key, const std::string& where, int count) const {
    const double v = number(j, key, where, -1);
    if (v != std::floor(v) || v >= count)
      throw fail(where + key, fmt::format("expected an index in [-1, {}]", count - 1));
    return static_cast<int>(v);
  }
  const nlohmann::json& array(const nlohmann::json& j, const std::string& key,
                              const std::string& where) const {
    const nlohmann::json& v = at(j, key, where);
    if (!v.is_array()) throw fail(where + key, "expected an array");
    return v;
  }
  ConfigError fail(const std::string& key, const std::string& what) const {
    return ConfigError(fmt::format("{}: '{}' {} (a file written by 'paraxis bench compute --save-calls')",
                                   path_, key, what));
  }

 private:
  std::string path_;
};

cost::PassWork passFrom(const Reader& r, const nlohmann::json& j, const std::string& where) {
  cost::PassWork w;
  w.flops = r.number(j, "flops", where);
  w.bytes = r.number(j, "bytes", where);
  w.rows = r.number(j, "rows", where);
  w.samples = r.number(j, "samples", where);
  w.serialBytes = r.number(j, "serial_bytes", where);
  w.native = r.flag(j, "native", where);
  w.depth = r.number(j, "depth", where);
  w.weightGradient = r.flag(j, "weight_gradient", where);
  w.resident = r.number(j, "resident", where);
  w.curveFlops = r.number(j, "curve_flops", where);
  return w;
}

TimedCall callFrom(const Reader& r, const nlohmann::json& j, const std::string& where) {
  TimedCall c;
  const nlohmann::json& layer = r.at(j, "layer", where);
  if (!layer.is_string()) throw r.fail(where + "layer", "expected a name");
  c.layer = layer.get<std::string>();
  c.flops = r.number(j, "flops", where);
  c.bytes = r.number(j, "bytes", where);
  c.matrix = r.flag(j, "matrix", where);
  c.seconds = r.number(j, "seconds", where);
  c.kernel = r.index(j, "kernel", where, hw::kKernels);
  c.memoryKind = r.index(j, "memory_kind", where, hw::kMemoryKinds);
  c.rows = r.number(j, "rows", where);
  c.depth = r.number(j, "depth", where);
  c.samples = r.number(j, "samples", where);
  c.native = r.flag(j, "native", where);
  c.backwardData = passFrom(r, r.at(j, "backward_data", where), where + "backward_data.");
  c.backwardWeight = passFrom(r, r.at(j, "backward_weight", where), where + "backward_weight.");
  c.backwardSeconds = r.number(j, "backward_seconds", where);
  c.accumulatedWeights = r.number(j, "accumulated_weights", where);
  c.columnBytes = r.number(j, "column_bytes", where);
  c.workingSet = r.number(j, "working_set", where);
  return c;
}

}  // namespace

nlohmann::json savedTimingsJson(const SavedTimings& t) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& [name, calls] : t.timed) {
    nlohmann::json list = nlohmann::json::array();
    for (const TimedCall& c : calls) list.push_back(callJson(c));
    models.push_back({{"model", name}, {"calls", list}});
  }
  nlohmann::json stream = nlohmann::json::array();
  for (const StreamPoint& p : t.stream) stream.push_back({{"bytes", p.bytes}, {"bytes_per_s", p.rate}});
  return {{"version", kVersion},
          {"models", models},
          {"stream", stream},
          {"probe_before_s", t.probeBefore},
          {"probe_after_s", t.probeAfter},
          {"probe_at_once_s", t.probeAtOnce},
          {"probe_alone_s", t.probeAlone},
          {"ranks_per_node", t.ranksPerNode},
          {"gpu", t.gpu}};
}

SavedTimings readSavedTimings(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw NotFoundError(fmt::format("{}: cannot read the saved timings", path));
  const nlohmann::json d = parseJsonFile(file, path);
  const Reader r(path);
  if (r.number(d, "version", "") != kVersion) throw r.fail("version", fmt::format("expected {}", kVersion));
  SavedTimings t;
  const nlohmann::json& models = r.array(d, "models", "");
  for (std::size_t m = 0; m < models.size(); ++m) {
    const std::string where = fmt::format("models[{}].", m);
    const nlohmann::json& name = r.at(models[m], "model", where);
    if (!name.is_string()) throw r.fail(where + "model", "expected a name");
    std::vector<TimedCall> calls;
    const nlohmann::json& list = r.array(models[m], "calls", where);
    for (std::size_t c = 0; c < list.size(); ++c)
      calls.push_back(callFrom(r, list[c], fmt::format("{}calls[{}].", where, c)));
    t.timed.emplace_back(name.get<std::string>(), std::move(calls));
  }
  if (t.timed.empty()) throw r.fail("models", "holds no model");
  const nlohmann::json& stream = r.array(d, "stream", "");
  for (std::size_t i = 0; i < stream.size(); ++i) {
    const std::string where = fmt::format("stream[{}].", i);
    t.stream.push_back({r.number(stream[i], "bytes", where), r.number(stream[i], "bytes_per_s", where)});
  }
  t.probeBefore = r.number(d, "probe_before_s", "");
  t.probeAfter = r.number(d, "probe_after_s", "");
  t.probeAtOnce = r.number(d, "probe_at_once_s", "");
  t.probeAlone = r.number(d, "probe_alone_s", "");
  t.ranksPerNode = static_cast<std::int64_t>(r.number(d, "ranks_per_node", "", 1));
  t.gpu = r.flag(d, "gpu", "");
  return t;
}

}  // namespace paraxis::calib
