#pragma once
// The gradient-communication options, registered once for every command that takes them
// (plan, train, validate's runs): the same names, accepted values and defaults everywhere,
// all of them GradientComm's. An option not given leaves the base setting (a strategy file's,
// or GradientComm's default) as it is.
#include <optional>
#include <string>

#include "core/gradient_comm.hpp"
#include "core/knobs.hpp"

namespace CLI {
class App;
}

namespace paraxis::cli {

struct GradientCommFlags {
  bool noOverlap = false;
  std::optional<std::string> grouping;
  std::optional<int> groups;
  std::optional<std::string> fusion;
  std::optional<std::string> firstBucket;
  std::optional<std::string> order;
  std::optional<std::string> negotiation;
  std::optional<double> cycle;
  std::optional<std::string> wire;
  bool fp16 = false;
  std::optional<double> density;
  std::optional<std::string> allreduce;

  // `base` with the options given applied; throws ConfigError naming the option.
  GradientComm apply(GradientComm base) const;
};

void addGradientCommOptions(CLI::App& command, GradientCommFlags& flags);

// GradientComm's defaults with the gradient knobs (PARAXIS_FUSION_BYTES, _CYCLE, _GROUPING,
// _REDUCE_ORDER, _WIRE, ...) applied: the base a strategy file and the options override.
GradientComm knobDefaults(const Knobs& knobs);

}  // namespace paraxis::cli
