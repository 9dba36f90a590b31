#include "plan/strategy_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace paraxis::plan {

nlohmann::json gradientCommJson(const GradientComm& c) {
  return {{"overlap", c.overlap},
          {"grouping", groupingName(c.grouping)},
          {"fusion_bytes", c.fusionBytes},
          {"first_bucket_bytes", c.firstBucketBytes},
          {"groups", c.groups},
          {"order", orderName(c.order)},
          {"chunk_bytes", c.chunkBytes},
          {"negotiation", negotiationName(c.negotiation)},
          {"cycle_seconds", c.cycleSeconds},
          {"wire", wireName(c.wire)},
          {"density", c.density},
          {"sparse_chunk_elements", c.sparseChunkElements},
          {"allreduce", gradientAlgorithmName(c.algorithm)}};
}

// Absent keys keep GradientComm's defaults. Files written before the wire format was a choice
// of its own say `fp16: true` or a density below 1.
GradientComm gradientCommFromJson(const nlohmann::json& c, const std::string& source) {
  GradientComm g;
  const std::string where = source + ": comm.";
  g.overlap = c.value("overlap", g.overlap);
  g.grouping = groupingFromName(c.value("grouping", groupingName(g.grouping)), where + "grouping");
  g.fusionBytes = c.value("fusion_bytes", g.fusionBytes);
  g.firstBucketBytes = c.value("first_bucket_bytes", g.firstBucketBytes);
  g.groups = c.value("groups", g.groups);
  g.order = orderFromName(c.value("order", orderName(g.order)), where + "order");
  g.chunkBytes = c.value("chunk_bytes", g.chunkBytes);
  g.negotiation = negotiationFromName(c.value("negotiation", negotiationName(g.negotiation)), where + "negotiation");
  g.cycleSeconds = c.value("cycle_seconds", g.cycleSeconds);
  g.density = c.value("density", g.density);
  if (c.value("fp16", false)) g.wire = WireFormat::kF16;
  if (g.density < 1) g.wire = WireFormat::kChunkSparse;
  if (c.contains("wire")) g.wire = wireFromName(c.at("wire").get<std::string>(), where + "wire");
  g.sparseChunkElements = c.value("sparse_chunk_elements", g.sparseChunkElements);
  g.algorithm = gradientAlgorithmFromName(c.value("allreduce", gradientAlgorithmName(g.algorithm)), where + "allreduce");
  g.validate(source);
  return g;
}

namespace {

nlohmann::json layersJson(const std::vector<LayerDistribution>& layers) {
  nlohmann::json out = nlohmann::json::array();
  for (const LayerDistribution& l : layers) {
    const Distribution& d = l.distribution;
    out.push_back({{"layer", l.layer}, {"sample", d.sample}, {"depth", d.depth}, {"height", d.height},
                   {"width", d.width}, {"replicas", d.replicas}});
  }
  return out;
}

// Per-layer distributions, each over the strategy's ranks.
std::vector<LayerDistribution> layersFromJson(const nlohmann::json& array, int ranks, const std::string& source) {
  std::vector<LayerDistribution> out;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const nlohmann::json& l = array.at(i);
    LayerDistribution ld{l.at("layer").get<std::string>(),
                         {l.at("sample").get<int>(), l.at("depth").get<int>(), l.at("height").get<int>(),
                          l.at("width").get<int>(), l.at("replicas").get<int>()}};
    const Distribution& d = ld.distribution;
    if (std::min({d.sample, d.depth, d.height, d.width, d.replicas}) < 1 || d.ranks() != ranks) {
      throw ConfigError(fmt::format("{}: layers[{}] ('{}'): {} is not a split of the strategy's {} ranks", source, i,
                                    ld.layer, d.str(), ranks));
    }
    out.push_back(std::move(ld));
  }
  return out;
}

}  // namespace

nlohmann::json strategyJson(const Strategy& s) {
  const Grid& g = s.grid;
  nlohmann::json out = {{"version", 1},
          {"name", s.name},
          {"grid",
           {{"data", g.data}, {"pipeline", g.pipeline}, {"place", g.place}, {"channel", g.channel}, {"filter", g.filter},
            {"spatial_d", g.depth}, {"spatial_h", g.height}, {"spatial_w", g.width},
            {"head", g.filterHead ? "filter" : "samples"}}},
          {"global_batch", s.globalBatch},
          {"micro_batches", s.microBatches},
          {"schedule", scheduleName(s.schedule)},
          {"comm", gradientCommJson(s.comm)}};
  if (!s.layers.empty()) out["layers"] = layersJson(s.layers);
  return out;
}

Strategy strategyFromJson(const nlohmann::json& d, const std::string& source) {
  auto fail = [&](const std::string& key, const std::string& what) -> void {
    throw ConfigError(fmt::format("{}: {}: {}", source, key, what));
  };
  try {
    Strategy s;
    if (d.value("version", 0) != 1) fail("version", "expected 1");
    s.name = d.at("name").get<std::string>();
    const auto& g = d.at("grid");
    s.grid.data = g.at("data").get<int>();
    s.grid.pipeline = g.at("pipeline").get<int>();
    s.grid.place = g.value("place", 1);  // files written before placement have no such axis
    s.grid.channel = g.at("channel").get<int>();
    s.grid.filter = g.at("filter").get<int>();
    s.grid.depth = g.at("spatial_d").get<int>();
    s.grid.height = g.at("spatial_h").get<int>();
    s.grid.width = g.at("spatial_w").get<int>();
    for (int v : {s.grid.data, s.grid.pipeline, s.grid.place, s.grid.channel, s.grid.filter, s.grid.depth, s.grid.height,
                  s.grid.width}) {
      if (v < 1) fail("grid", "every axis must be at least 1");
    }
    const std::string head = g.value("head", "samples");
    if (head != "samples" && head != "filter") fail("grid.head", "expected samples or filter, found '" + head + "'");
    s.grid.filterHead = head == "filter";
    if (std::string problem = headProblem(s.grid); !problem.empty()) fail("grid.head", problem);
    s.globalBatch = d.at("global_batch").get<std::int64_t>();
    if (s.globalBatch < 1) fail("global_batch", "expected at least 1");
    s.microBatches = d.value("micro_batches", 1);
    const std::string schedule = d.value("schedule", "1f1b");
    if (schedule != "1f1b" && schedule != "gpipe") fail("schedule", "expected 1f1b or gpipe, found '" + schedule + "'");
    s.schedule = schedule == "gpipe" ? PipelineSchedule::kGPipe : PipelineSchedule::kOneFOneB;
    if (d.contains("comm")) s.comm = gradientCommFromJson(d.at("comm"), source);
    if (d.contains("layers")) s.layers = layersFromJson(d.at("layers"), s.grid.total(), source);
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(fmt::format("{}: malformed strategy: {}", source, e.what()));
  }
}

nlohmann::json timeBreakdownJson(const TimeBreakdown& t) {
  nlohmann::json j = nlohmann::json::object();
  for (const TimeTerm& k : kTimeTerms) j[k.key] = t.*(k.field);
  j["compute"] = t.compute();
  j["communication"] = t.communication();
  j["iteration"] = t.iteration();
  return j;
}

TimeBreakdown timeBreakdownFromJson(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw ConfigError(fmt::format("{}: expected an object of times in seconds", source));
  TimeBreakdown t;
  for (const TimeTerm& k : kTimeTerms) {
    if (!j.contains(k.key)) continue;
    const nlohmann::json& v = j.at(k.key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      throw ConfigError(fmt::format("{}.{}: expected a finite number of seconds >= 0", source, k.key));
    }
    t.*(k.field) = v.get<double>();
  }
  return t;
}

nlohmann::json estimateJson(const Estimate& e) {
  const TimeBreakdown& t = e.time;
  const MemoryBreakdown& m = e.memory;
  return {{"strategy", strategyJson(e.strategy)},
          {"grid", e.strategy.grid.str()},
          {"gpus", e.strategy.grid.total()},
          {"feasible", e.feasible},
          {"infeasible_reason", e.infeasibleReason},
          {"fits", e.fits},
          {"time", timeBreakdownJson(t)},
          {"iteration_optimistic", e.iterationOptimistic},
          {"iteration_congested", e.iterationCongested},
          {"memory",
           {{"weights", m.weights}, {"gradients", m.gradients}, {"optimizer", m.optimizer},
            {"activations", m.activations}, {"halo", m.halo}, {"fusion", m.fusion},
            {"pipeline_in_flight", m.pipelineInFlight}, {"workspace", m.workspace}, {"total", m.total()},
            {"capacity", e.memoryCapacity}}},
          {"allreduce_algorithm", e.allreduceAlgorithm},
          {"samples_per_second", e.samplesPerSecond},
          {"iterations_per_epoch", e.iterationsPerEpoch},
          {"epoch_seconds", e.epochSeconds},
          {"epochs", e.epochs},
          {"time_to_train_seconds", e.timeToTrain},
          {"device_hours", e.deviceHours},
          {"scaling_efficiency", e.scalingEfficiency},
          {"statistical_efficiency", e.statisticalEfficiency},
          {"model_parallel_speedup", e.modelParallelSpeedup},
          {"bottleneck", e.bottleneck}};
}

}  // namespace paraxis::plan
