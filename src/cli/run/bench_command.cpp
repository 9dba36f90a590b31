// paraxis bench comm: the communication benchmark, run under mpirun (see comm/bench.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/context.hpp"
#include "cli/run/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/runtime.hpp"
#include "cli/ranges.hpp"
#include "cli/run/run_configuration.hpp"
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
  int stepFactor = 4;
  std::string redop = "sum";
  int root = 0;
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

comm::ReduceOp reduceOpNamed(const std::string& name) {
  if (name == "max") return comm::ReduceOp::kMax;
  if (name == "min") return comm::ReduceOp::kMin;
  return comm::ReduceOp::kSum;  // the option's check admits sum, max and min only
}

alphabeta::LinkParams linkOf(const hw::Cluster& c, int level) {
  const hw::NetworkLevel& l = c.levels.at(level);
  // A reduction streams two operands in and one result out of memory.
  return {l.alpha, l.beta, 3.0 / c.device.memoryBandwidth};
}

std::string timingCells(const std::optional<comm::BenchTiming>& t) {
  if (!t) return fmt::format("{:>10} {:>8} {:>8} {:>6}", "n/a", "", "", "");
  return fmt::format("{:>10} {:>8.3f} {:>8.3f} {:>6}", units::formatSeconds(t->seconds), t->algorithmBandwidth / 1e9,
                     t->busBandwidth / 1e9, t->wrong);
}

void printRow(const comm::BenchRow& r, std::ostream& out) {
  out << fmt::format("{:<15} {:<19} {:>10} {:>10} {:>5} {:>5} {:>4}  {}  {}  {:>10} {:>6.2f}\n", r.operation, r.algorithm,
                     units::formatBytes(static_cast<double>(r.bytes)), r.count, r.type, r.redop, r.root,
                     timingCells(r.outOfPlace), timingCells(r.inPlace), units::formatSeconds(r.modelSeconds),
                     r.modelSeconds / r.outOfPlace.seconds);
  out.flush();
}

void printHeader(const comm::Communicator& comm, const comm::Hierarchy& hierarchy, const hw::Cluster& cluster,
                 int trials, std::ostream& out) {
  out << fmt::format("# paraxis bench comm: {} ranks on {} host(s) x {} rank(s); model from cluster '{}'\n",
                     comm.size(), hierarchy.groups(), hierarchy.localSize(), cluster.name);
  out << fmt::format("# time: slowest rank, median of {} trials; m/meas: the model's time over the measured "
                     "out-of-place time (> 1: faster than modelled)\n", trials);
  const std::string timing = fmt::format("{:>10} {:>8} {:>8} {:>6}", "time", "algbw", "busbw", "#wrong");
  const std::string units = fmt::format("{:>10} {:>8} {:>8} {:>6}", "", "(GB/s)", "(GB/s)", "");
  out << fmt::format("{:<77}{:^35}  {:^35}\n", "#", "out-of-place", "in-place");
  out << fmt::format("{:<15} {:<19} {:>10} {:>10} {:>5} {:>5} {:>4}  {}  {}  {:>10} {:>6}\n", "# operation", "algorithm",
                     "size", "count", "type", "redop", "root", timing, timing, "model", "m/meas");
  out << fmt::format("{:<15} {:<19} {:>10} {:>10} {:>5} {:>5} {:>4}  {}  {}  {:>10} {:>6}\n", "#", "", "", "(elements)",
                     "", "", "", units, units, "", "");
}

nlohmann::json timingJson(const comm::BenchTiming& t) {
  return {{"seconds", t.seconds}, {"algbw_bytes_per_s", t.algorithmBandwidth}, {"busbw_bytes_per_s", t.busBandwidth},
          {"wrong", t.wrong}};
}

nlohmann::json rowJson(const comm::BenchRow& r) {
  nlohmann::json row = timingJson(r.outOfPlace);
  row.update({{"operation", r.operation}, {"algorithm", r.algorithm}, {"bytes", r.bytes}, {"count", r.count},
              {"type", r.type}, {"redop", r.redop}, {"root", r.root}, {"model_seconds", r.modelSeconds},
              {"in_place", r.inPlace ? timingJson(*r.inPlace) : nlohmann::json(nullptr)}});
  return row;
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
                           .maxBytes = parseBytes(o.maxBytes, "--max-bytes"),
                           .stepFactor = static_cast<std::size_t>(o.stepFactor), .op = reduceOpNamed(o.redop),
                           .root = o.root, .iterations = o.iterations, .trials = o.trials,
                           .segmentBytes = parseBytes(o.segment, "--segment"), .intra = linkOf(cluster, 0),
                           .inter = std::nullopt, .hierarchy = nullptr};
  const comm::Hierarchy hierarchy = o.ranksPerHost > 0 ? comm::Hierarchy::fromGroups(comm, o.ranksPerHost)
                                                       : comm::Hierarchy::fromHosts(comm);
  if (hierarchy.groups() > 1) {
    bench.inter = linkOf(cluster, cluster.levelBetween(0, static_cast<std::int64_t>(cluster.devicesPerNode)));
  }
  if (hierarchy.uniform()) bench.hierarchy = &hierarchy;
  if (o.root >= comm.size()) {
    throw ConfigError(fmt::format("bench comm: --root {} is not a rank of this {}-rank job", o.root, comm.size()));
  }
  const bool lead = comm.rank() == 0;
  if (lead && !o.json) printHeader(comm, hierarchy, cluster, o.trials, context.out);
  auto progress = [&](const comm::BenchRow& row) {
    if (lead && !o.json) printRow(row, context.out);
  };
  const std::vector<comm::BenchRow> rows = comm::runCommBench(comm, bench, progress);
  std::size_t wrong = 0;
  for (const auto& r : rows) wrong += r.outOfPlace.wrong + (r.inPlace ? r.inPlace->wrong : 0);
  const double average = comm::averageBusBandwidth(rows);
  if (lead && o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) out.push_back(rowJson(r));
    printJson({{"ranks", comm.size()}, {"hosts", hierarchy.groups()}, {"rows", out},
               {"avg_busbw_bytes_per_s", average}, {"wrong", wrong}}, context);
  } else if (lead) {
    context.out << fmt::format("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
    context.out << fmt::format("# Avg bus bandwidth    : {:.4f} GB/s (the mean of every row's busbw, out of place "
                               "and in place)\n", average / 1e9);
  }
  if (wrong > 0) throw CommError(fmt::format("bench comm: {} wrong elements (see the #wrong column)", wrong));
}

}  // namespace

void addBenchCommand(CLI::App& app, Context& context) {
  CLI::App* bench = app.add_subcommand("bench", runtimeCommandDescription("bench"));
  bench->require_subcommand(1);
  addBenchComputeCommand(*bench, context);
  addBenchConvertCommand(*bench, context);
  auto o = std::make_shared<Options>();
  CLI::App* c = bench->add_subcommand("comm", "Collectives in nccl-tests' shape, out of place and in place, against MPI's own and the model");
  c->add_option("--op", o->operations, "operations: allreduce, allgather, reduce_scatter, broadcast, alltoall")
      ->delimiter(',');
  c->add_option("--algorithms", o->algorithms, "algorithms (default: all of each operation, and mpi)")->delimiter(',');
  c->add_option("--min-bytes", o->minBytes, "smallest message (default 4)");
  c->add_option("--max-bytes", o->maxBytes, "largest message (default 256MiB)");
  c->add_option("--step-factor,-f", o->stepFactor, "each size this many times the last (default 4; 1: one size)")
      ->check(within(1, 1024));
  c->add_option("--redop,-o", o->redop, "the reduction of allreduce and reduce_scatter: sum (default), max or min")
      ->check(CLI::IsMember({"sum", "max", "min"}));
  c->add_option("--root,-r", o->root, "broadcast's root rank (default 0)")->check(nonNegative());
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
