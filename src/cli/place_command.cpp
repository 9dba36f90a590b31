// paraxis place: one replica's operations placed on K devices (DLPlacer, Pal et al.): the
// makespan of a training step, the speedup over one device, what runs where, the transfers
// and the memory per device.
//   paraxis place --model inception-v3 --devices 2 --cluster dgx1-v100
//   paraxis place --model branches.yaml --devices 4 --method ilp --time-limit 60 --json
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <ostream>

#include "cli/context.hpp"
#include "cli/json_output.hpp"
#include "cli/model_source.hpp"
#include "cli/ranges.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "hw/presets.hpp"
#include "plan/milp.hpp"
#include "plan/placement.hpp"

namespace paraxis::cli {
namespace {

struct Options : ModelSource {
  std::string cluster = "dgx1-v100";
  int devices = 2;
  double samples = 32;
  std::string memory;  // per device; empty: the cluster's device memory
  std::string method = "auto";
  double timeLimit = 10;
  bool operations = false;
  bool json = false;
};

double memoryLimit(const Options& o, const hw::Cluster& cluster) {
  if (o.memory.empty()) return cluster.device.memoryBytes;
  const std::optional<double> bytes = units::parse(o.memory, units::Quantity::kBytes);
  if (!bytes || !(*bytes > 0)) {
    throw ConfigError(fmt::format("--memory-per-device: expected a size such as 16GiB, found '{}'", o.memory));
  }
  return *bytes;
}

struct DeviceSummary {
  std::vector<std::string> units;
  int operations = 0;
  double busy = 0, memory = 0;
};

struct Transfers {
  int count = 0;
  double bytes = 0, seconds = 0;
};

std::vector<DeviceSummary> summarise(const plan::OpGraph& g, const plan::OpPlacement& p, int devices, Transfers& t) {
  std::vector<DeviceSummary> out(devices);
  for (int u = 0; u < g.units(); ++u) {
    out[p.device[u]].units.push_back(g.unitNames[u]);
    out[p.device[u]].memory += g.unitBytes[u];
  }
  for (const plan::OpNode& op : g.ops) {
    ++out[p.device[op.unit]].operations;
    out[p.device[op.unit]].busy += op.seconds;
  }
  for (const plan::OpEdge& e : g.edges) {
    if (p.device[g.ops[e.from].unit] == p.device[g.ops[e.to].unit]) continue;
    ++t.count;
    t.bytes += e.bytes;
    t.seconds += e.seconds;
  }
  return out;
}

nlohmann::json placementJson(const graph::Model& model, const hw::Cluster& cluster, const Options& o,
                             const plan::OpGraph& g, const plan::OpPlacement& p) {
  Transfers t;
  const std::vector<DeviceSummary> devices = summarise(g, p, o.devices, t);
  nlohmann::json perDevice = nlohmann::json::array(), operations = nlohmann::json::array();
  for (int d = 0; d < o.devices; ++d) {
    const DeviceSummary& s = devices[d];
    perDevice.push_back({{"device", d}, {"units", s.units}, {"operations", s.operations}, {"busy_s", s.busy},
                         {"memory_bytes", s.memory}});
  }
  for (int i = 0; i < g.size(); ++i) {
    operations.push_back({{"name", g.ops[i].name}, {"device", p.device[g.ops[i].unit]}, {"start_s", p.start[i]},
                          {"seconds", g.ops[i].seconds}});
  }
  return {{"model", model.name()}, {"cluster", cluster.name}, {"devices", o.devices}, {"samples", o.samples},
          {"units", g.units()}, {"method", p.method}, {"optimal", p.optimal}, {"makespan_s", p.makespan},
          {"one_device_s", g.totalSeconds()}, {"speedup", g.totalSeconds() / p.makespan},
          {"lower_bound_s", p.lowerBound}, {"gap", p.optimal ? 0.0 : p.gap()},
          {"per_device", perDevice},
          {"transfers", {{"count", t.count}, {"bytes", t.bytes}, {"seconds", t.seconds}}},
          {"operations", operations}};
}

void printPlacement(std::ostream& out, const graph::Model& model, const hw::Cluster& cluster, const Options& o,
                    const plan::OpGraph& g, const plan::OpPlacement& p) {
  out << fmt::format("{} ({} samples) on {} devices of {} ({}): {} units from {} layers, {} operations\n", model.name(),
                     o.samples, o.devices, cluster.name, cluster.device.name, g.units(), model.size(), g.size());
  out << fmt::format("method: {}\n", p.method);
  const std::string bound = p.optimal ? std::string("optimal")
                                      : fmt::format("lower bound {:.2f} ms, gap {:.1f} %", p.lowerBound * 1e3, p.gap() * 100);
  out << fmt::format("makespan {:.2f} ms; one device {:.2f} ms: speedup {:.2f}x; {}\n\n", p.makespan * 1e3,
                     g.totalSeconds() * 1e3, g.totalSeconds() / p.makespan, bound);
  Transfers t;
  const std::vector<DeviceSummary> devices = summarise(g, p, o.devices, t);
  out << fmt::format("{:<7} {:>6} {:>11} {:>11} {:>11} {:>12}\n", "device", "units", "operations", "busy", "idle", "memory");
  for (int d = 0; d < o.devices; ++d) {
    const DeviceSummary& s = devices[d];
    out << fmt::format("{:<7} {:>6} {:>11} {:>8.2f} ms {:>8.2f} ms {:>12}\n", d, s.units.size(), s.operations,
                       s.busy * 1e3, (p.makespan - s.busy) * 1e3, units::formatBytes(s.memory));
  }
  out << fmt::format("transfers between devices: {} ({}), {:.2f} ms in all\n", t.count, units::formatBytes(t.bytes), t.seconds * 1e3);
  if (!o.operations) return;
  out << fmt::format("\n{:<40} {:>6} {:>11} {:>11}\n", "operation", "device", "start", "end");
  for (int i = 0; i < g.size(); ++i) {
    out << fmt::format("{:<40} {:>6} {:>8.3f} ms {:>8.3f} ms\n", g.ops[i].name, p.device[g.ops[i].unit],
                       p.start[i] * 1e3, (p.start[i] + g.ops[i].seconds) * 1e3);
  }
}

void run(const Options& o, Context& context) {
  if (!plan::isPlacementMethod(o.method)) {
    throw ConfigError(fmt::format("--method: expected auto, ilp, list or exhaustive, found '{}'", o.method));
  }
  const graph::Model model = loadModel(o);
  const hw::Cluster cluster = hw::loadCluster(o.cluster);
  if (o.devices > cluster.devicesPerNode) {
    throw ConfigError(fmt::format("--devices {}: a replica is placed within one node, and a node of '{}' has {} devices",
                                  o.devices, cluster.name, cluster.devicesPerNode));
  }
  const plan::OpGraph g = plan::trainingGraph(model, cluster, o.samples, o.devices, o.devices);
  const plan::PlacementLimits limits{o.devices, memoryLimit(o, cluster)};
  const plan::OpPlacement p = plan::placeBy(o.method, g, limits, o.timeLimit);
  if (const std::vector<std::string> problems = plan::placementViolations(g, limits, p, 1e-7); !problems.empty()) {
    throw InternalError(fmt::format("the placement ({}) breaks a constraint: {}", p.method, problems.front()));
  }
  if (o.json) return printJson(placementJson(model, cluster, o, g, p), context);
  printPlacement(context.out, model, cluster, o, g, p);
}

}  // namespace

void addPlaceCommand(CLI::App& app, Context& context) {
  auto o = std::make_shared<Options>();
  o->model = "inception-v3";
  CLI::App* c = app.add_subcommand("place", "Place one replica's operations on devices (DLPlacer): makespan, speedup, "
                                            "what runs where");
  addModelOptions(*c, *o, "default inception-v3");
  c->add_option("--devices", o->devices, "devices of one node to place on (default 2)")->check(within(1, 64));
  c->add_option("--cluster", o->cluster, "a preset or cluster file (default dgx1-v100)");
  c->add_option("--batch", o->samples, "samples per step of the replica (default 32)")->check(within(1, 1 << 20));
  c->add_option("--memory-per-device", o->memory, "memory a device offers its units (default: the device's)");
  c->add_option("--method", o->method,
                "auto (list scheduling, then the ILP from it within --time-limit), ilp, list, or exhaustive (12 "
                "operations at most)");
  c->add_option("--time-limit", o->timeLimit, "seconds the ILP may search (default 10)")->check(aboveUpTo(0, 86400));
  c->add_flag("--operations", o->operations, "list every operation with its device and times");
  c->add_flag("--json", o->json, "print JSON (docs/json-output.md, 'place')");
  c->callback([o, &context] { run(*o, context); });
}

}  // namespace paraxis::cli
