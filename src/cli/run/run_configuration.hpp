#pragma once
// What a command runs with, as "option=value" lines read back from the parsed command line
// (every option given, in the command's order, values naming a file followed by a checksum of
// its contents) and the PARAXIS_* knobs: one description, derived, never listed by hand.
// Ranks must agree on it (a rank started with another --batch-per-rank would compute a
// different step and deadlock or corrupt the gradients), and a checkpoint records the part a
// resume must match.
#include <set>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/knobs.hpp"

namespace CLI {
class App;
}

namespace paraxis::cli {

struct RunConfiguration {
  std::vector<std::string> lines;  // "--batch-per-rank=16", "knob comm_deadline=5 s"

  // The lines, newline-terminated, leaving out the options in `except` (and the knobs).
  std::string text(const std::set<std::string>& except) const;
};

RunConfiguration runConfiguration(const CLI::App& command, const Knobs& knobs);

// Collective: ConfigError on every rank naming the first line some rank holds differently
// from rank 0 (or "ranks disagree" with both values).
void agreeAcrossRanks(const comm::Communicator& comm, const RunConfiguration& configuration);

}  // namespace paraxis::cli
