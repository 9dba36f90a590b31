#pragma once
// Charts as self-contained SVG (no script, no fonts or files fetched), for `paraxis report` and
// `plan --plot`. Every plotted mark carries its numbers as data-* attributes (data-series,
// data-x, data-y; bars data-category and data-value), written exactly (17 significant digits),
// so that a test can hold the picture against the JSON it was drawn from.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace paraxis::cli {

struct ChartAxis {
  std::string label;
  bool log = false;
};

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite or, on a log axis, non-positive ones are skipped
};

// Lines through each series' points (sorted by x), or markers only (a scatter).
struct LineChart {
  std::string title;
  ChartAxis x;
  ChartAxis y;
  std::vector<ChartSeries> series;
  bool markersOnly = false;
  bool diagonal = false;  // the y = x line (predicted against measured)
};

struct BarSeries {
  std::string name;
  std::vector<double> values;  // one per category
};

// Bars per category: each series stacked on the last, or side by side.
struct BarChart {
  std::string title;
  std::string yLabel;
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
  bool stacked = true;
  std::optional<double> limit;  // a dashed horizontal line (memory capacity)
  std::string limitLabel;
};

std::string renderChart(const LineChart& chart);
std::string renderChart(const BarChart& chart);

// Text made safe inside XML and HTML (elements and quoted attributes).
std::string xmlEscape(const std::string& text);

// A standalone SVG file's text (the XML declaration before the chart).
std::string svgDocument(const std::string& chart);

}  // namespace paraxis::cli
