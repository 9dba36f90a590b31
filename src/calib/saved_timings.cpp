#include "calib/saved_timings.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "calib/json_file.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace paraxis::calib {
namespace {

// 2: each call says whether it is strided (version 1's calls read as unstrided); 3: and its
// steps' wall time over their CPU time (earlier calls read as timed on the wall clock, 0); 4:
// and their CPU seconds, its own seconds its CPU time (version 3's, its CPU time times that
// ratio, read as in version 4: cpuTimesOfVersion3).
constexpr int kVersion = 4;

// Each saved figure's key and member, one table for writing and reading, and the version that
// first wrote it (an earlier file's calls keep the member's default).
template <typename T, typename V>
struct Field {
  const char* key;
  V T::*member;
  int since = 1;
};
constexpr Field<cost::PassWork, double> kPassNumbers[] = {{"flops", &cost::PassWork::flops},
                                                          {"bytes", &cost::PassWork::bytes},
                                                          {"rows", &cost::PassWork::rows},
                                                          {"samples", &cost::PassWork::samples},
                                                          {"serial_bytes", &cost::PassWork::serialBytes},
                                                          {"depth", &cost::PassWork::depth},
                                                          {"resident", &cost::PassWork::resident},
                                                          {"curve_flops", &cost::PassWork::curveFlops}};
constexpr Field<cost::PassWork, bool> kPassFlags[] = {{"native", &cost::PassWork::native},
                                                      {"weight_gradient", &cost::PassWork::weightGradient}};
constexpr Field<TimedCall, double> kCallNumbers[] = {{"flops", &TimedCall::flops},
                                                     {"bytes", &TimedCall::bytes},
                                                     {"seconds", &TimedCall::seconds},
                                                     {"rows", &TimedCall::rows},
                                                     {"depth", &TimedCall::depth},
                                                     {"samples", &TimedCall::samples},
                                                     {"backward_seconds", &TimedCall::backwardSeconds},
                                                     {"accumulated_weights", &TimedCall::accumulatedWeights},
                                                     {"column_bytes", &TimedCall::columnBytes},
                                                     {"working_set", &TimedCall::workingSet},
                                                     {"wall_per_cpu", &TimedCall::wallPerCpu, 3},
                                                     {"step_cpu", &TimedCall::stepCpuSeconds, 4}};
constexpr Field<TimedCall, bool> kCallFlags[] = {
    {"matrix", &TimedCall::matrix}, {"native", &TimedCall::native}, {"strided", &TimedCall::strided, 2}};
constexpr Field<TimedCall, cost::PassWork> kCallPasses[] = {{"backward_data", &TimedCall::backwardData},
                                                            {"backward_weight", &TimedCall::backwardWeight}};

template <typename T, typename Table>
void writeFields(const T& from, const Table& table, nlohmann::json& to) {
  for (const auto& f : table) to[f.key] = from.*f.member;
}

nlohmann::json passJson(const cost::PassWork& w) {
  nlohmann::json j;
  writeFields(w, kPassNumbers, j);
  writeFields(w, kPassFlags, j);
  return j;
}

nlohmann::json callJson(const TimedCall& c) {
  nlohmann::json j{{"layer", c.layer}, {"kernel", c.kernel}, {"memory_kind", c.memoryKind}};
  writeFields(c, kCallNumbers, j);
  writeFields(c, kCallFlags, j);
  for (const auto& f : kCallPasses) j[f.key] = passJson(c.*f.member);
  return j;
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
  for (const auto& f : kPassNumbers) w.*f.member = r.number(j, f.key, where);
  for (const auto& f : kPassFlags) w.*f.member = r.flag(j, f.key, where);
  return w;
}

TimedCall callFrom(const Reader& r, const nlohmann::json& j, const std::string& where, int version) {
  TimedCall c;
  const nlohmann::json& layer = r.at(j, "layer", where);
  if (!layer.is_string()) throw r.fail(where + "layer", "expected a name");
  c.layer = layer.get<std::string>();
  c.kernel = r.index(j, "kernel", where, hw::kKernels);
  c.memoryKind = r.index(j, "memory_kind", where, hw::kMemoryKinds);
  for (const auto& f : kCallNumbers) {
    if (version >= f.since) c.*f.member = r.number(j, f.key, where);
  }
  if (c.wallPerCpu > 0 && c.wallPerCpu < 1) {
    throw r.fail(where + "wall_per_cpu", "expected 0 (timed on the wall clock) or a ratio >= 1");
  }
  for (const auto& f : kCallFlags) {
    if (version >= f.since) c.*f.member = r.flag(j, f.key, where);
  }
  for (const auto& f : kCallPasses) {
    c.*f.member = passFrom(r, r.at(j, f.key, where), where + f.key + ".");
    (c.*f.member).strided = c.strided;  // one flag a call, its passes' too
  }
  return c;
}

// Version 3 priced a call timed on the CPU clock at its CPU time times its steps' wall over CPU
// time and kept no step's CPU time: its seconds back to CPU time, and the step's taken as the
// sum of its calls' (the passes' layers; a few per cent short of the step's, which held the
// update too).
void cpuTimesOfVersion3(std::vector<TimedCall>& calls) {
  double step = 0;
  for (TimedCall& c : calls) {
    if (c.wallPerCpu <= 0) continue;
    c.seconds /= c.wallPerCpu;
    c.backwardSeconds /= c.wallPerCpu;
    step += c.seconds + c.backwardSeconds;
  }
  for (TimedCall& c : calls) {
    if (c.wallPerCpu > 0) c.stepCpuSeconds = step;
  }
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

void writeSavedTimings(const std::string& path, const SavedTimings& timings, const std::string& option) {
  writeFileAtomically(path, savedTimingsJson(timings).dump(1) + "\n", option);
}

SavedTimings readSavedTimings(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw NotFoundError(fmt::format("{}: cannot read the saved timings", path));
  const nlohmann::json d = parseJsonFile(file, path);
  const Reader r(path);
  const double version = r.number(d, "version", "");
  if (version != std::floor(version) || version < 1 || version > kVersion) {
    throw r.fail("version", fmt::format("expected 1 to {}", kVersion));
  }
  SavedTimings t;
  const nlohmann::json& models = r.array(d, "models", "");
  for (std::size_t m = 0; m < models.size(); ++m) {
    const std::string where = fmt::format("models[{}].", m);
    const nlohmann::json& name = r.at(models[m], "model", where);
    if (!name.is_string()) throw r.fail(where + "model", "expected a name");
    std::vector<TimedCall> calls;
    const nlohmann::json& list = r.array(models[m], "calls", where);
    for (std::size_t c = 0; c < list.size(); ++c)
      calls.push_back(callFrom(r, list[c], fmt::format("{}calls[{}].", where, c), static_cast<int>(version)));
    if (version == 3) cpuTimesOfVersion3(calls);
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
