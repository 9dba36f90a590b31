// paraxis bench convert: the fp16/bf16 wire conversions against this machine's memory
// bandwidth, every path the CPU runs (comm/convert_bench.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <ostream>

#include "cli/context.hpp"
#include "cli/run/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/ranges.hpp"
#include "comm/convert_bench.hpp"
#include "core/error.hpp"
#include "core/table.hpp"
#include "core/units.hpp"

namespace paraxis::cli {
namespace {

struct Options {
  double mib = 64;
  int trials = 5;
  bool json = false;
};

double memcpyRate(const std::vector<comm::ConversionRow>& rows) {
  for (const comm::ConversionRow& r : rows) {
    if (r.kernel == comm::ConversionKernel::kCopy) return r.bytesPerSecond;
  }
  throw InternalError("bench convert: no memcpy row");
}

bool isConversion(const comm::ConversionRow& r) {
  return r.kernel != comm::ConversionKernel::kCopy && r.kernel != comm::ConversionKernel::kAdd;
}

void printTable(const std::vector<comm::ConversionRow>& rows, std::ostream& out) {
  const double memory = memcpyRate(rows);
  Table t;
  t.addColumn("wire");
  t.addColumn("path");
  t.addColumn("kernel");
  t.addColumn("time", Table::Align::kRight);
  t.addColumn("bytes/s", Table::Align::kRight);
  t.addColumn("f32 bytes/s", Table::Align::kRight);
  t.addColumn("of memcpy", Table::Align::kRight);
  for (const comm::ConversionRow& r : rows) {
    const bool conversion = isConversion(r);
    t.addRow({conversion ? std::string(comm::typeName(r.wire)) : "-",
              conversion ? std::string(comm::convertPathName(r.path)) : "-", comm::kernelName(r.kernel),
              units::formatSeconds(r.seconds), units::formatRate(r.bytesPerSecond), units::formatRate(r.f32BytesPerSecond),
              fmt::format("{:.0f} %", 100 * r.bytesPerSecond / memory)});
  }
  t.print(out);
}

nlohmann::json toJson(const std::vector<comm::ConversionRow>& rows, const Options& o) {
  nlohmann::json list = nlohmann::json::array();
  for (const comm::ConversionRow& r : rows) {
    list.push_back({{"wire", isConversion(r) ? nlohmann::json(comm::typeName(r.wire)) : nlohmann::json(nullptr)},
                    {"path", isConversion(r) ? nlohmann::json(comm::convertPathName(r.path)) : nlohmann::json(nullptr)},
                    {"kernel", comm::kernelName(r.kernel)},
                    {"seconds", r.seconds},
                    {"bytes_per_s", r.bytesPerSecond},
                    {"f32_bytes_per_s", r.f32BytesPerSecond},
                    {"of_memcpy", r.bytesPerSecond / memcpyRate(rows)}});
  }
  const comm::ConvertPath best = comm::activeConvertPath();
  return {{"buffer_bytes", o.mib * 1024 * 1024},
          {"trials", o.trials},
          {"wire_path", comm::convertPathName(best)},
          {"memory_bandwidth_bytes_per_s", memcpyRate(rows)},
          {"allreduce_conversion_bytes_per_s",
           {{"f16", comm::allreduceConversionRate(rows, comm::DataType::kF16, best)},
            {"bf16", comm::allreduceConversionRate(rows, comm::DataType::kBF16, best)}}},
          {"rows", list}};
}

void run(const Options& o, Context& context) {
  const auto elements = static_cast<std::size_t>(o.mib * 1024 * 1024 / 4);
  const std::vector<comm::ConversionRow> rows = comm::runConversionBench({.elements = elements, .trials = o.trials, .paths = {}});
  for (const comm::ConversionRow& r : rows) {
    if (!std::isfinite(r.bytesPerSecond) || r.seconds <= 0) {
      throw ConfigError(fmt::format("bench convert: {} took no measurable time; use a larger --mib", comm::kernelName(r.kernel)));
    }
  }
  if (o.json) {
    printJson(toJson(rows, o), context);
    return;
  }
  const comm::ConvertPath best = comm::activeConvertPath();
  context.out << fmt::format("# paraxis bench convert: {} of f32 per buffer, median of {}; paths here: ",
                             units::formatBytes(static_cast<double>(elements) * 4), o.trials);
  for (comm::ConvertPath p : comm::supportedConvertPaths()) context.out << comm::convertPathName(p) << ' ';
  context.out << "\n";
  printTable(rows, context.out);
  context.out << fmt::format("memory bandwidth (memcpy, bytes read + written): {}\n", units::formatRate(memcpyRate(rows)));
  context.out << fmt::format(
      "an allreduce's conversions on the {} path (fused decode+add+encode, then decode): f16 {}, bf16 {} of f32 gradient\n",
      comm::convertPathName(best), units::formatRate(comm::allreduceConversionRate(rows, comm::DataType::kF16, best)),
      units::formatRate(comm::allreduceConversionRate(rows, comm::DataType::kBF16, best)));
}

}  // namespace

void addBenchConvertCommand(CLI::App& bench, Context& context) {
  auto o = std::make_shared<Options>();
  CLI::App* c = bench.add_subcommand("convert", "fp16/bf16 wire conversions per CPU path, against memcpy's bandwidth");
  c->add_option("--mib", o->mib, "MiB of f32 per buffer (default 64: beyond the caches)")->check(within(0.0625, 4096));
  c->add_option("--trials", o->trials, "timed passes per kernel; the median is reported (default 5)")
      ->check(within(1, 1000));
  c->add_flag("--json", o->json, "print JSON");
  c->callback([o, &context] { run(*o, context); });
}

}  // namespace paraxis::cli
