#include "cli/chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace paraxis::cli {
namespace {

constexpr double kWidth = 760;
constexpr double kLeft = 78;
constexpr double kRight = 200;  // the legend
constexpr double kTop = 36;
constexpr const char* kFont = "font-family=\"DejaVu Sans, Arial, sans-serif\"";
// Okabe and Ito's palette: told apart by colour-blind readers too.
constexpr const char* kColours[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                                    "#56B4E9", "#F0E442", "#000000", "#999999", "#8C564B"};

const char* colour(std::size_t i) { return kColours[i % std::size(kColours)]; }

std::string exact(double v) { return fmt::format("{:.17g}", v); }

// Tick labels: three significant digits with k, M, G for large numbers.
std::string tickLabel(double v) {
  const double a = std::fabs(v);
  if (a >= 1e9) return fmt::format("{:.3g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.3g}k", v / 1e3);
  if (a >= 1e3) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

// Maps values of one axis onto pixels.
struct Scale {
  double lo = 0, hi = 1;
  bool log = false;
  double from = 0, to = 1;  // pixels of lo and hi
  double operator()(double v) const {
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return from + t * (to - from);
  }
};

bool plottable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

// A range holding every value: decades on a log axis, from 0 (or below) on a linear one.
Scale scaleFor(std::vector<double> values, bool log, double from, double to) {
  std::erase_if(values, [log](double v) { return !plottable(v, log); });
  Scale s{.lo = log ? 1.0 : 0.0, .hi = log ? 10.0 : 1.0, .log = log, .from = from, .to = to};
  if (values.empty()) return s;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (log) {
    s.lo = *lo / 1.25;
    s.hi = *hi * 1.25;
  } else {
    s.lo = std::min(0.0, *lo);
    s.hi = *hi > s.lo ? *hi * 1.08 : s.lo + 1;
  }
  return s;
}

std::vector<double> ticks(const Scale& s) {
  std::vector<double> out;
  if (s.log) {
    const double decades = std::log10(s.hi / s.lo);
    for (double d = std::pow(10, std::floor(std::log10(s.lo))); d <= s.hi; d *= 10) {
      for (double m : {1.0, 2.0, 5.0}) {
        if ((m == 1.0 || decades <= 2) && d * m >= s.lo && d * m <= s.hi) out.push_back(d * m);
      }
    }
    return out;
  }
  const double rough = (s.hi - s.lo) / 5;
  const double magnitude = std::pow(10, std::floor(std::log10(rough)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (magnitude * m >= rough) {
      step = magnitude * m;
      break;
    }
  }
  for (double v = std::ceil(s.lo / step) * step; v <= s.hi + step * 1e-9; v += step) out.push_back(v);
  return out;
}

std::string header(const std::string& title, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "data-title=\"{2}\">\n<title>{2}</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n"
      "<text x=\"{3}\" y=\"22\" {4} font-size=\"15\" font-weight=\"bold\">{2}</text>\n",
      kWidth, height, xmlEscape(title), kLeft, kFont);
}

std::string yGrid(const Scale& y, double x0, double x1, const std::string& label) {
  std::string out;
  for (double t : ticks(y)) {
    const double py = y(t);
    out += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#dddddd\"/>\n", x0, x1, py, py);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" {} font-size=\"11\" text-anchor=\"end\">{}</text>\n", x0 - 6,
                       py + 4, kFont, tickLabel(t));
  }
  const double mid = (y.from + y.to) / 2;
  out += fmt::format("<text x=\"16\" y=\"{0:.1f}\" {1} font-size=\"12\" text-anchor=\"middle\" "
                     "transform=\"rotate(-90 16 {0:.1f})\">{2}</text>\n", mid, kFont, xmlEscape(label));
  return out;
}

std::string legend(const std::vector<std::string>& names, bool lines) {
  std::string out;
  const double x = kWidth - kRight + 16;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const double y = kTop + 14 + 18 * static_cast<double>(i);
    out += lines ? fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2.5\"/>\n",
                               x, x + 18, y - 4, y - 4, colour(i))
                 : fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n", x, y - 9, colour(i));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" {} font-size=\"11\">{}</text>\n", x + 24, y, kFont,
                       xmlEscape(names[i]));
  }
  return out;
}

std::string polyline(const ChartSeries& s, const Scale& x, const Scale& y, const char* stroke) {
  std::vector<std::pair<double, double>> points;
  for (const auto& p : s.points) {
    if (plottable(p.first, x.log) && plottable(p.second, y.log)) points.push_back(p);
  }
  std::sort(points.begin(), points.end());
  std::string path;
  for (const auto& [px, py] : points) path += fmt::format("{:.1f},{:.1f} ", x(px), y(py));
  return fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", path, stroke);
}

std::string markers(const ChartSeries& s, const Scale& x, const Scale& y, const char* fill) {
  std::string out;
  for (const auto& [px, py] : s.points) {
    if (!plottable(px, x.log) || !plottable(py, y.log)) continue;
    out += fmt::format("<circle class=\"mark\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\" data-series=\"{}\" "
                       "data-x=\"{}\" data-y=\"{}\"/>\n", x(px), y(py), fill, xmlEscape(s.name), exact(px), exact(py));
  }
  return out;
}

std::string xTicks(const Scale& x, double yBottom, const std::string& label) {
  std::string out;
  for (double t : ticks(x)) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" {} font-size=\"11\" text-anchor=\"middle\">{}</text>\n", x(t),
                       yBottom + 16, kFont, tickLabel(t));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" {} font-size=\"12\" text-anchor=\"middle\">{}</text>\n",
                     (x.from + x.to) / 2, yBottom + 38, kFont, xmlEscape(label));
  return out;
}

}  // namespace

std::string renderChart(const LineChart& c) {
  constexpr double kHeight = 400;
  const double bottom = kHeight - 56;
  std::vector<double> xs;
  std::vector<double> ys;
  for (const auto& s : c.series) {
    for (const auto& [px, py] : s.points) {
      xs.push_back(px);
      ys.push_back(py);
    }
  }
  if (c.diagonal) {  // one scale for both, so that y = x is the diagonal
    xs.insert(xs.end(), ys.begin(), ys.end());
    ys = xs;
  }
  const Scale x = scaleFor(xs, c.x.log, kLeft, kWidth - kRight);
  const Scale y = scaleFor(ys, c.y.log, bottom, kTop);
  std::string out = header(c.title, kHeight) + yGrid(y, kLeft, kWidth - kRight, c.y.label) + xTicks(x, bottom, c.x.label);
  out += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#444444\"/>\n", kLeft, kWidth - kRight, bottom);
  if (c.diagonal) {
    const double lo = std::max(x.lo, y.lo);
    const double hi = std::min(x.hi, y.hi);
    out += fmt::format("<line class=\"diagonal\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#888888\" "
                       "stroke-dasharray=\"5,4\"/>\n", x(lo), y(lo), x(hi), y(hi));
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const ChartSeries& s = c.series[i];
    names.push_back(s.name);
    out += fmt::format("<g data-series=\"{}\">\n", xmlEscape(s.name));
    if (!c.markersOnly) out += polyline(s, x, y, colour(i));
    out += markers(s, x, y, colour(i)) + "</g>\n";
  }
  return out + legend(names, !c.markersOnly) + "</svg>\n";
}

std::string renderChart(const BarChart& c) {
  constexpr double kHeight = 430;
  const double bottom = kHeight - 96;  // room for slanted category names
  std::vector<double> tops;
  for (std::size_t k = 0; k < c.categories.size(); ++k) {
    double sum = 0;
    for (const auto& s : c.series) {
      const double v = k < s.values.size() && std::isfinite(s.values[k]) ? s.values[k] : 0;
      sum = c.stacked ? sum + v : std::max(sum, v);
    }
    tops.push_back(sum);
  }
  if (c.limit) tops.push_back(*c.limit);
  const Scale y = scaleFor(tops, false, bottom, kTop);
  std::string out = header(c.title, kHeight) + yGrid(y, kLeft, kWidth - kRight, c.yLabel);
  const double band = (kWidth - kRight - kLeft) / static_cast<double>(std::max<std::size_t>(1, c.categories.size()));
  const double groupWidth = band * 0.7;
  const double barWidth = c.stacked ? groupWidth : groupWidth / static_cast<double>(std::max<std::size_t>(1, c.series.size()));
  for (std::size_t k = 0; k < c.categories.size(); ++k) {
    const double left = kLeft + band * static_cast<double>(k) + (band - groupWidth) / 2;
    double base = 0;
    for (std::size_t i = 0; i < c.series.size(); ++i) {
      const double v = k < c.series[i].values.size() ? c.series[i].values[k] : 0;
      if (!std::isfinite(v) || v <= 0) continue;
      const double from = c.stacked ? base : 0;
      const double bx = c.stacked ? left : left + barWidth * static_cast<double>(i);
      out += fmt::format("<rect class=\"mark\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
                         "data-series=\"{}\" data-category=\"{}\" data-value=\"{}\"/>\n", bx, y(from + v), barWidth,
                         std::max(0.5, y(from) - y(from + v)), colour(i), xmlEscape(c.series[i].name),
                         xmlEscape(c.categories[k]), exact(v));
      if (c.stacked) base += v;
    }
    const double cx = kLeft + band * (static_cast<double>(k) + 0.5);
    out += fmt::format("<text x=\"{0:.1f}\" y=\"{1:.1f}\" {2} font-size=\"11\" text-anchor=\"end\" "
                       "transform=\"rotate(-30 {0:.1f} {1:.1f})\">{3}</text>\n", cx, bottom + 14, kFont,
                       xmlEscape(c.categories[k]));
  }
  out += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#444444\"/>\n", kLeft, kWidth - kRight, bottom);
  if (c.limit) {
    out += fmt::format("<line class=\"limit\" x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#C00000\" "
                       "stroke-dasharray=\"6,4\" data-value=\"{3}\"/>\n<text x=\"{1}\" y=\"{4:.1f}\" {5} font-size=\"11\" "
                       "text-anchor=\"end\" fill=\"#C00000\">{6}</text>\n", kLeft, kWidth - kRight, y(*c.limit),
                       exact(*c.limit), y(*c.limit) - 4, kFont, xmlEscape(c.limitLabel));
  }
  std::vector<std::string> names;
  for (const auto& s : c.series) names.push_back(s.name);
  return out + legend(names, false) + "</svg>\n";
}

std::string xmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string svgDocument(const std::string& chart) { return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + chart; }

}  // namespace paraxis::cli
