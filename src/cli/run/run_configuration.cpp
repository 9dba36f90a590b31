#include "cli/run/run_configuration.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "comm/agreement.hpp"
#include "core/checksum.hpp"
#include "core/error.hpp"
#include "core/option_lines.hpp"

namespace paraxis::cli {
namespace {

constexpr std::string_view kKnobPrefix = "knob ";

// A value naming a readable regular file (a model, a strategy, a cluster) stands for its
// contents: the same path may hold another file on another host or after an edit.
std::string describeValue(const std::string& value) {
  std::error_code error;
  if (value.empty() || !std::filesystem::is_regular_file(value, error)) return value;
  std::ifstream in(value, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return fmt::format("{} (contents {})", value, checksumHex(checksum64(bytes.str())));
}

std::string keyOf(const std::string& line) { return line.substr(0, line.find('=')); }

}  // namespace

std::string RunConfiguration::text(const std::set<std::string>& except) const {
  std::string out;
  for (const std::string& line : lines) {
    const std::string key = keyOf(line);
    if (except.count(key) == 0 && key.rfind(kKnobPrefix, 0) != 0) out += line + "\n";
  }
  return out;
}

RunConfiguration runConfiguration(const CLI::App& command, const Knobs& knobs) {
  RunConfiguration c;
  for (const CLI::Option* option : command.get_options()) {
    if (option->count() == 0 || option->get_name() == "--help") continue;
    std::string value;
    for (const std::string& result : option->results()) value += (value.empty() ? "" : ",") + describeValue(result);
    c.lines.push_back(fmt::format("{}={}", option->get_name(), value));
  }
  for (const Knobs::Entry& entry : knobs.entries()) {
    c.lines.push_back(fmt::format("{}{}={}", kKnobPrefix, entry.spec.name, entry.value));
  }
  return c;
}

void agreeAcrossRanks(const comm::Communicator& comm, const RunConfiguration& configuration) {
  if (comm.size() == 1) return;
  std::string all;
  for (const std::string& line : configuration.lines) all += line + "\n";
  const std::string lead = comm::broadcastText(comm, all, 0);
  std::string mine;
  if (const auto d = firstDifference(all, lead)) {
    mine = fmt::format("{} is {} here but {} on rank 0", d->key, d->first, d->second);
  } else if (lead != all) {
    mine = "the options differ from rank 0's in their order";
  }
  if (const auto first = comm::firstFailure(comm, mine)) {
    throw ConfigError(fmt::format("ranks disagree on the run's configuration: {} (every rank must be started with the "
                                  "same options and PARAXIS_* variables)", comm::describe(comm, *first)));
  }
}

}  // namespace paraxis::cli
