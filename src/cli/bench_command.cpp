// paraxis bench comm: the communication benchmark, run under mpirun (see comm/bench.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/context.hpp"
#include "cli/json_output.hpp"
#include "cli/ranges.hpp"
#include "cli/run_configuration.hpp"
#include "comm/bench.hpp"
#include "comm/hierarchy.hpp"
#include "comm/world.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "hw/presets.hpp"

namespace paraxis::cli {
namespace {

struct Options {
  std::vector<std::string> operations{"allreduce"};
  std::vector<std::string> algorithms;
  std::string minBytes = "4";
  std::string maxBytes = "256 MiB";
  std::string segment = "256 KiB";
  int iterations = 0;
  int trials = 3;
  int ranksPerHost = 0;
  std::string cluster = "local";
  double deadline = 0;  // 0: the comm_deadline knob
  bool json = false;
};

std::size_t parseBytes(const std::string& text, const char* option) {
  const auto value = units::parse(text, units::Quantity::kBytes);
  if (!value || *value < 1) {
    throw ConfigError(fmt::format("{}: expected a size such as 4, 64KiB or 256MiB, found '{}'", option, text));
  }
  return static_cast<std::size_t>(*value);
}

alphabeta::LinkParams linkOf(const hw::Cluster& c, int level) {
  const hw::NetworkLevel& l = c.levels.at(level);
  // A reduction streams two operands in and one result out of memory.
  return {l.alpha, l.beta, 3.0 / c.device.memoryBandwidth};
}

void printRow(const comm::BenchRow& r, std::ostream& out) {
  out << fmt::format("{:<15} {:<19} {:>10} {:>10} {:>10} {:>9.3f} {:>9.3f} {:>10} {:>6.2f} {:>6}\n", r.operation,
                     r.algorithm, units::formatBytes(static_cast<double>(r.bytes)), r.count,
                     units::formatSeconds(r.seconds), r.algorithmBandwidth / 1e9, r.busBandwidth / 1e9,
                     units::formatSeconds(r.modelSeconds), r.modelSeconds / r.seconds, r.wrong);
  out.flush();
}

void run(const Options& o, const CLI::App& command, Context& context) {
  const double deadline = o.deadline > 0 ? o.deadline : context.knobs.getDouble("comm_deadline");
  comm::World world = comm::openWorld(context.argc, context.argv,
                                      {.deadlineSeconds = deadline, .verify = context.knobs.getBool("comm_verify")});
  const comm::Communicator& comm = world.comm;
  agreeAcrossRanks(comm, runConfiguration(command, context.knobs));
  const hw::Cluster cluster = hw::loadCluster(o.cluster);
  comm::BenchOptions bench{.operations = o.operations, .algorithms = o.algorithms,
                           .minBytes = parseBytes(o.minBytes, "--min-bytes"),
                           .maxBytes = parseBytes(o.maxBytes, "--max-bytes"), .iterations = o.iterations,
                           .trials = o.trials, .segmentBytes = parseBytes(o.segment, "--segment"),
                           .intra = linkOf(cluster, 0), .inter = std::nullopt};
  const comm::Hierarchy hierarchy = o.ranksPerHost > 0 ? comm::Hierarchy::fromGroups(comm, o.ranksPerHost)
                                                       : comm::Hierarchy::fromHosts(comm);
  if (hierarchy.groups() > 1) {
    bench.inter = linkOf(cluster, cluster.levelBetween(0, static_cast<std::int64_t>(cluster.devicesPerNode)));
  }
  if (hierarchy.uniform()) bench.hierarchy = &hierarchy;
  const bool lead = comm.rank() == 0;
  if (lead && !o.json) {
    context.out << fmt::format("# paraxis bench comm: {} ranks on {} host(s) x {} rank(s); model from cluster '{}'\n",
                               comm.size(), hierarchy.groups(), hierarchy.localSize(), cluster.name);
    context.out << fmt::format("# time: slowest rank, median of {} trials; model/meas > 1 means faster than modelled\n",
                               o.trials);
    context.out << fmt::format("{:<15} {:<19} {:>10} {:>10} {:>10} {:>9} {:>9} {:>10} {:>6} {:>6}\n", "operation",
                               "algorithm", "size", "count", "time", "algbw", "busbw", "model", "m/meas", "#wrong");
    context.out << fmt::format("{:<15} {:<19} {:>10} {:>10} {:>10} {:>9} {:>9} {:>10} {:>6} {:>6}\n", "", "", "",
                               "(f32)", "", "(GB/s)", "(GB/s)", "", "", "");
  }
  auto progress = [&](const comm::BenchRow& row) {
    if (lead && !o.json) printRow(row, context.out);
  };
  const std::vector<comm::BenchRow> rows = comm::runCommBench(comm, bench, progress);
  std::size_t wrong = 0;
  for (const auto& r : rows) wrong += r.wrong;
  if (lead && o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) {
      out.push_back({{"operation", r.operation}, {"algorithm", r.algorithm}, {"bytes", r.bytes}, {"count", r.count},
                     {"seconds", r.seconds}, {"algbw_bytes_per_s", r.algorithmBandwidth},
                     {"busbw_bytes_per_s", r.busBandwidth}, {"model_seconds", r.modelSeconds}, {"wrong", r.wrong}});
    }
    printJson({{"ranks", comm.size()}, {"hosts", hierarchy.groups()}, {"rows", out}}, context);
  }
  if (wrong > 0) throw CommError(fmt::format("bench comm: {} wrong elements (see the #wrong column)", wrong));
}

}  // namespace

void addBenchCommand(CLI::App& app, Context& context) {
  CLI::App* bench = app.add_subcommand("bench", "Micro-benchmarks: compute here, communication under mpirun");
  bench->require_subcommand(1);
  addBenchComputeCommand(*bench, context);
  addBenchConvertCommand(*bench, context);
  auto o = std::make_shared<Options>();
  CLI::App* c = bench->add_subcommand("comm", "Collectives: time, algbw, busbw, model and #wrong, against MPI's own");
  c->add_option("--op", o->operations, "operations: allreduce, allgather, reduce_scatter, broadcast, alltoall")
      ->delimiter(',');
  c->add_option("--algorithms", o->algorithms, "algorithms (default: all of each operation, and mpi)")->delimiter(',');
  c->add_option("--min-bytes", o->minBytes, "smallest message (default 4)");
  c->add_option("--max-bytes", o->maxBytes, "largest message (default 256MiB)");
  c->add_option("--segment", o->segment, "allreduce ring segment size (default 256KiB)");
  c->add_option("--iterations", o->iterations, "calls per trial (default: by size)")->check(within(0, 1e9));
  c->add_option("--trials", o->trials, "trials per size; the median is reported")->check(within(1, 1e6));
  c->add_option("--ranks-per-host", o->ranksPerHost, "group ranks into hosts explicitly (default: by host name)")
      ->check(nonNegative());
  c->add_option("--cluster", o->cluster, "cluster whose alpha/beta feed the model column (default local)");
  c->add_option("--deadline", o->deadline, "seconds any rank waits before failing (default: knob comm_deadline)")
      ->check(positive());
  c->add_flag("--json", o->json, "print JSON");
  c->callback([o, c, &context] { run(*o, *c, context); });
}

}  // namespace paraxis::cli
