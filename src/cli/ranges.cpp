#include "cli/ranges.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>

namespace paraxis::cli {
namespace {

CLI::Validator domain(const std::string& words, const std::function<bool(double)>& inside) {
  return CLI::Validator(
      [words, inside](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end == text.c_str() + text.size() && errno == 0 && std::isfinite(value);
        if (number && inside(value)) return "";
        return fmt::format("must be {}, found '{}'", words, text);
      },
      words, "domain");
}

// Whole bounds in full (16777216, not 1.67772e+07); others as %g.
std::string bound(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e13 ? fmt::format("{}", static_cast<long long>(v)) : fmt::format("{:g}", v);
}

}  // namespace

CLI::Validator positive() {
  return domain("> 0", [](double v) { return v > 0; });
}

CLI::Validator nonNegative() {
  return domain(">= 0", [](double v) { return v >= 0; });
}

CLI::Validator within(double low, double high) {
  return domain(fmt::format("in [{}, {}]", bound(low), bound(high)), [=](double v) { return v >= low && v <= high; });
}

CLI::Validator aboveUpTo(double low, double high) {
  return domain(fmt::format("in ({}, {}]", bound(low), bound(high)), [=](double v) { return v > low && v <= high; });
}

CLI::Validator fraction() {
  return domain("in [0, 1)", [](double v) { return v >= 0 && v < 1; });
}

}  // namespace paraxis::cli
