// paraxis report: one self-contained HTML file of charts (inline SVG: no script, no fetches)
// from the --json documents of plan, validate, bench comm and train, any mix (docs/report.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "cli/chart.hpp"
#include "cli/context.hpp"
#include "cli/model_source.hpp"
#include "cli/ranges.hpp"
#include "cli/report_charts.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace paraxis::cli {
namespace {

using Json = nlohmann::json;

struct Options {
  std::vector<std::string> files;
  std::string out = "paraxis-report.html";
  int gpus = 0;  // plan charts at this GPU count; 0: chosen
};

struct Section {
  std::string kind;
  std::string file;
  std::string heading;
  std::string summary;
  std::vector<std::string> charts;  // SVG
};

Json readDocument(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw NotFoundError(fmt::format("{}: cannot read it", path));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return Json::parse(text.str());
  } catch (const Json::parse_error& e) {
    throw ConfigError(fmt::format("{}: not a JSON document ({})", path, e.what()));
  }
}

Section planSection(const Json& doc, int requestedGpus) {
  const int gpus = planChartGpus(doc, requestedGpus);
  std::size_t feasibleCount = 0;
  for (const Json& e : doc.at("estimates")) feasibleCount += e.at("feasible").get<bool>() && e.at("fits").get<bool>();
  Section s{.kind = "plan", .file = "",
            .heading = fmt::format("plan: {} on {}", doc.at("model").get<std::string>(), doc.at("cluster").get<std::string>()),
            .summary = fmt::format("{} estimates, {} feasible; the bars at {} GPUs (report --gpus N for another count).",
                                   doc.at("estimates").size(), feasibleCount, gpus),
            .charts = {}};
  s.charts = {renderChart(planThroughputChart(doc)), renderChart(planTimeToTrainChart(doc)),
              renderChart(planBreakdownChart(doc, gpus)), renderChart(planMemoryChart(doc, gpus))};
  return s;
}

std::string modelsOf(const Json& models) {
  if (models.is_string()) return models.get<std::string>();
  std::vector<std::string> names;
  for (const Json& m : models) names.push_back(m.is_string() ? m.get<std::string>() : m.dump());
  return fmt::format("{}", fmt::join(names, ", "));
}

Section validateSection(const Json& doc) {
  return {.kind = "validate", .file = "",
          .heading = fmt::format("validate: {} on {}", modelsOf(doc.at("models")), doc.at("cluster").get<std::string>()),
          .summary = fmt::format("{} runs; mean absolute error of the predicted totals {:.1f} %.", doc.at("runs").size(),
                                 doc.at("mean_absolute_error").get<double>() * 100),
          .charts = {renderChart(validateScatterChart(doc)), renderChart(validateComponentsChart(doc))}};
}

Section benchSection(const Json& doc) {
  Section s{.kind = "bench comm", .file = "",
            .heading = fmt::format("bench comm: {} ranks on {} host(s)", doc.at("ranks").get<int>(), doc.at("hosts").get<int>()),
            .summary = "Out-of-place bus bandwidth of each algorithm; 'mpi' is MPI's own collective.", .charts = {}};
  if (doc.contains("avg_busbw_bytes_per_s")) {
    s.summary += fmt::format(" Average bus bandwidth {:.3f} GB/s.", doc.at("avg_busbw_bytes_per_s").get<double>() / 1e9);
  }
  for (const LineChart& c : busBandwidthCharts(doc)) s.charts.push_back(renderChart(c));
  return s;
}

Section trainSection(const Json& doc, const std::string& file) {
  const std::string label = fmt::format("{} x{}", doc.at("strategy").at("name").get<std::string>(), doc.at("ranks").get<int>());
  Section s{.kind = "train", .file = "",
            .heading = fmt::format("train: {} on {} rank(s)", doc.at("model").get<std::string>(), doc.at("ranks").get<int>()),
            .summary = fmt::format("{:.1f} samples/s over {} measured iterations; {} in {}.",
                                   doc.at("samples_per_second").get<double>(), doc.at("measured_iterations").get<int>(),
                                   label, file),
            .charts = {renderChart(trainBreakdownChart(doc, label))}};
  for (const LineChart& c : trainAccuracyCharts(doc, label)) s.charts.push_back(renderChart(c));
  return s;
}

Section sectionOf(const Json& doc, const std::string& path, int gpus) {
  if (!doc.is_object()) throw ConfigError(fmt::format("{}: expected a JSON object", path));
  try {
    Section s;
    if (doc.contains("estimates")) s = planSection(doc, gpus);
    else if (doc.contains("mean_absolute_error") && doc.contains("runs")) s = validateSection(doc);
    else if (doc.contains("rows") && doc.contains("ranks")) s = benchSection(doc);
    else if (doc.contains("time") && doc.contains("epochs")) s = trainSection(doc, path);
    else {
      throw ConfigError(fmt::format("{}: not the --json output of plan, validate, bench comm or train (expected the key "
                                    "'estimates', 'runs', 'rows' or 'time')", path));
    }
    s.file = path;
    return s;
  } catch (const Json::exception& e) {
    throw ConfigError(fmt::format("{}: {} (a {} document as paraxis writes it was expected)", path, e.what(),
                                  doc.contains("estimates") ? "plan" : "--json"));
  }
}

std::string html(const std::vector<Section>& sections) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>paraxis report</title>\n<style>\n"
      "body { font-family: 'DejaVu Sans', Arial, sans-serif; margin: 24px; color: #222; }\n"
      "h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 36px; border-bottom: 1px solid #ccc; }\n"
      ".charts { display: flex; flex-wrap: wrap; gap: 16px; } .note { color: #555; }\n</style>\n</head>\n<body>\n"
      "<h1>paraxis report</h1>\n";
  out += fmt::format("<p class=\"note\">{} input(s). Written by paraxis 0.1.0 as one file: the charts are inline SVG, "
                     "nothing is fetched. Each mark carries its value (data-x, data-y, data-value).</p>\n",
                     sections.size());
  for (const Section& s : sections) {
    out += fmt::format("<section class=\"input\" data-kind=\"{}\" data-file=\"{}\">\n<h2>{}</h2>\n<p>{} <span class=\"note\">"
                       "({})</span></p>\n<div class=\"charts\">\n", xmlEscape(s.kind), xmlEscape(s.file), xmlEscape(s.heading),
                       xmlEscape(s.summary), xmlEscape(s.file));
    for (const std::string& chart : s.charts) out += chart;
    out += "</div>\n</section>\n";
  }
  return out + "</body>\n</html>\n";
}

void run(const Options& o, Context& context) {
  requireWritableDirectory(o.out, "--out");
  std::vector<Section> sections;
  std::size_t charts = 0;
  for (const std::string& path : o.files) {
    sections.push_back(sectionOf(readDocument(path), path, o.gpus));
    charts += sections.back().charts.size();
  }
  writeFileAtomically(o.out, html(sections), "--out");
  context.out << fmt::format("wrote {}: {} input(s), {} chart(s)\n", o.out, sections.size(), charts);
}

}  // namespace

void addReportCommand(CLI::App& app, Context& context) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("report", "One self-contained HTML file of charts from the --json output of plan, "
                                             "validate, bench comm and train (no MPI, no torch)");
  c->add_option("files", o->files, "JSON documents: paraxis plan/validate/bench comm/train --json (or train --report)")
      ->required();
  c->add_option("--out,-o", o->out, "the HTML file to write (default paraxis-report.html)");
  c->add_option("--gpus", o->gpus, "draw the plan's bars at this GPU count (default: where most strategies fit)")
      ->check(nonNegative());
  c->callback([o, &context] { run(*o, context); });
}

}  // namespace paraxis::cli
