#include "plan/strategy.hpp"

#include <fmt/format.h>

#include <vector>

#include "plan/estimate.hpp"

namespace paraxis::plan {

std::string Grid::str() const {
  std::vector<std::string> parts;
  auto add = [&](const char* name, int n) {
    if (n > 1) parts.push_back(fmt::format("{}={}", name, n));
  };
  add("data", data);
  add("pipeline", pipeline);
  add("channel", channel);
  add("filter", filter);
  add("d", depth);
  add("h", height);
  add("w", width);
  return parts.empty() ? "1" : fmt::format("{}", fmt::join(parts, "x"));
}

std::string scheduleName(PipelineSchedule s) { return s == PipelineSchedule::kGPipe ? "gpipe" : "1f1b"; }

std::string negotiationName(Negotiation n) {
  switch (n) {
    case Negotiation::kNone: return "none";
    case Negotiation::kCentralized: return "centralized";
    case Negotiation::kDecentralized: return "decentralized";
  }
  return "?";
}

std::string MemoryBreakdown::largest() const {
  const std::pair<double, const char*> parts[] = {
      {weights, "weights"},   {gradients, "gradients"}, {optimizer, "optimizer state"},
      {activations, "activations"}, {halo, "halo buffers"}, {fusion, "fusion buffer"},
      {pipelineInFlight, "in-flight micro-batches"}, {workspace, "workspace"}};
  const auto* best = &parts[0];
  for (const auto& p : parts) {
    if (p.first > best->first) best = &p;
  }
  return best->second;
}

}  // namespace paraxis::plan
