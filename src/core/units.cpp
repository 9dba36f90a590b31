#include "core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <span>
#include <utility>

#include "core/error.hpp"

namespace paraxis::units {
namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};

constexpr double kKi = 1024.0;
constexpr std::array kByteUnits{
    Unit{"B", 1.0},         Unit{"KB", 1e3},      Unit{"MB", 1e6},
    Unit{"GB", 1e9},        Unit{"TB", 1e12},     Unit{"KiB", kKi},
    Unit{"MiB", kKi * kKi}, Unit{"GiB", kKi * kKi * kKi}, Unit{"TiB", kKi * kKi * kKi * kKi}};
constexpr std::array kSecondUnits{Unit{"s", 1.0}, Unit{"ms", 1e-3}, Unit{"us", 1e-6},
                                  Unit{"µs", 1e-6}, Unit{"ns", 1e-9}};
constexpr std::array kRateUnits{
    Unit{"B/s", 1.0},        Unit{"KB/s", 1e3},      Unit{"MB/s", 1e6},
    Unit{"GB/s", 1e9},       Unit{"TB/s", 1e12},     Unit{"Kbit/s", 1e3 / 8},
    Unit{"Mbit/s", 1e6 / 8}, Unit{"Gbit/s", 1e9 / 8}, Unit{"Tbit/s", 1e12 / 8}};
constexpr std::array kFlopRateUnits{Unit{"FLOP/s", 1.0}, Unit{"GFLOP/s", 1e9},
                                    Unit{"TFLOP/s", 1e12}, Unit{"PFLOP/s", 1e15}};
constexpr std::array kCountUnits{Unit{"k", 1e3}, Unit{"M", 1e6}, Unit{"G", 1e9}};

std::span<const Unit> unitsOf(Quantity quantity) {
  switch (quantity) {
    case Quantity::kBytes: return kByteUnits;
    case Quantity::kSeconds: return kSecondUnits;
    case Quantity::kBytesPerSecond: return kRateUnits;
    case Quantity::kFlopsPerSecond: return kFlopRateUnits;
    case Quantity::kCount: return kCountUnits;
  }
  return {};
}

// Every number paraxis prints is finite: a nan or inf reaching the output is a bug upstream
// (an input outside its domain that was not refused), reported as such rather than printed.
double printable(double value) {
  if (!std::isfinite(value)) throw InternalError(fmt::format("a non-finite value ({}) reached the output", value));
  return value;
}

// Scales a value into [1, step) by the prefixes given, e.g. bytes into KiB/MiB/GiB.
std::string scaled(double value, double step, std::span<const std::string_view> names) {
  printable(value);
  double magnitude = std::fabs(value);
  std::size_t i = 0;
  while (i + 1 < names.size() && magnitude >= step) {
    magnitude /= step;
    value /= step;
    ++i;
  }
  if (i == 0 && value == std::floor(value)) return fmt::format("{:.0f} {}", value, names[i]);
  return fmt::format("{:.3g} {}", value, names[i]);
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

}  // namespace

std::string formatBytes(double bytes) {
  static constexpr std::array<std::string_view, 6> kNames{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  return scaled(bytes, 1024.0, kNames);
}

std::string formatFlops(double flops) {
  static constexpr std::array<std::string_view, 6> kNames{"FLOP",  "kFLOP", "MFLOP",
                                                          "GFLOP", "TFLOP", "PFLOP"};
  return scaled(flops, 1000.0, kNames);
}

std::string formatRate(double bytesPerSecond) {
  static constexpr std::array<std::string_view, 5> kNames{"B/s", "KB/s", "MB/s", "GB/s", "TB/s"};
  return scaled(bytesPerSecond, 1000.0, kNames);
}

std::string formatFlopRate(double flopsPerSecond) {
  static constexpr std::array<std::string_view, 6> kNames{"FLOP/s",  "kFLOP/s", "MFLOP/s",
                                                          "GFLOP/s", "TFLOP/s", "PFLOP/s"};
  return scaled(flopsPerSecond, 1000.0, kNames);
}

std::string formatSeconds(double seconds) {
  const double magnitude = std::fabs(printable(seconds));
  if (magnitude == 0.0) return "0 s";
  if (magnitude < 1e-6) return fmt::format("{:.3g} ns", seconds * 1e9);
  if (magnitude < 1e-3) return fmt::format("{:.3g} us", seconds * 1e6);
  if (magnitude < 1.0) return fmt::format("{:.3g} ms", seconds * 1e3);
  if (magnitude < 600.0) return fmt::format("{:.3g} s", seconds);
  if (magnitude < 36000.0) return fmt::format("{:.3g} min", seconds / 60.0);
  return fmt::format("{:.3g} h", seconds / 3600.0);
}

std::string formatCount(double count) {
  if (std::fabs(printable(count)) >= 9.2e18) return fmt::format("{:.3g}", count);  // beyond long long
  const auto whole = static_cast<long long>(std::llround(count));
  std::string digits = std::to_string(whole < 0 ? -whole : whole);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return whole < 0 ? "-" + out : out;
}

std::optional<double> parse(std::string_view text, Quantity quantity) {
  text = trim(text);
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || !std::isfinite(value)) return std::nullopt;
  const std::string_view suffix = trim(std::string_view(end, text.data() + text.size() - end));
  if (suffix.empty()) return value;
  for (const Unit& unit : unitsOf(quantity)) {
    if (unit.suffix == suffix) {
      const double scaledValue = value * unit.factor;
      return std::isfinite(scaledValue) ? std::optional<double>(scaledValue) : std::nullopt;
    }
  }
  return std::nullopt;
}

std::string acceptedUnits(Quantity quantity) {
  std::string out;
  for (const Unit& unit : unitsOf(quantity)) {
    if (!out.empty()) out += ", ";
    out += unit.suffix;
  }
  return out;
}

}  // namespace paraxis::units
