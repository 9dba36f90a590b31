#include "core/knobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

#include "core/check.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

extern char** environ;  // NOLINT: POSIX

namespace paraxis {
namespace {

constexpr std::string_view kPrefix = "PARAXIS_";

std::optional<bool> parseBool(const std::string& text) {
  if (text == "1" || text == "true" || text == "yes" || text == "on") return true;
  if (text == "0" || text == "false" || text == "no" || text == "off") return false;
  return std::nullopt;
}

std::optional<long long> parseInt(const std::string& text) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string validateType(const std::string& text, KnobType type);

// The numeric value of a valid `text` of a numeric type, in base units.
std::optional<double> numericValue(const std::string& text, KnobType type) {
  switch (type) {
    case KnobType::kInt: {
      const auto v = parseInt(text);
      return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
    }
    case KnobType::kDouble: return units::parse(text, units::Quantity::kCount);
    case KnobType::kBytes: return units::parse(text, units::Quantity::kBytes);
    case KnobType::kSeconds: return units::parse(text, units::Quantity::kSeconds);
    default: return std::nullopt;
  }
}

// Returns an error description, or empty when `text` is a valid value of the knob: its type,
// then its range.
std::string validate(const std::string& text, const KnobSpec& spec) {
  if (std::string problem = validateType(text, spec.type); !problem.empty()) return problem;
  if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end()) {
    return fmt::format("expected one of {}", fmt::join(spec.choices, ", "));
  }
  const std::optional<double> value = numericValue(text, spec.type);
  if (value && (!std::isfinite(*value) || *value < spec.minimum || *value > spec.maximum)) {
    return fmt::format("expected a value in [{:g}, {:g}]{}", spec.minimum, spec.maximum,
                       spec.type == KnobType::kSeconds ? " seconds" : spec.type == KnobType::kBytes ? " bytes" : "");
  }
  return "";
}

std::string validateType(const std::string& text, KnobType type) {
  switch (type) {
    case KnobType::kBool:
      return parseBool(text) ? "" : "expected true/false (or 1/0, yes/no, on/off)";
    case KnobType::kInt: return parseInt(text) ? "" : "expected an integer";
    case KnobType::kDouble:
      return units::parse(text, units::Quantity::kCount) ? "" : "expected a number";
    case KnobType::kBytes:
      return units::parse(text, units::Quantity::kBytes)
                 ? ""
                 : "expected a size in bytes (units: " + units::acceptedUnits(units::Quantity::kBytes) + ")";
    case KnobType::kSeconds:
      return units::parse(text, units::Quantity::kSeconds)
                 ? ""
                 : "expected a duration (units: " + units::acceptedUnits(units::Quantity::kSeconds) + ")";
    case KnobType::kString: return "";
  }
  return "unknown knob type";
}

}  // namespace

std::string knobVariable(const std::string& name) {
  std::string out(kPrefix);
  for (char c : name) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string knobTypeName(KnobType type) {
  switch (type) {
    case KnobType::kBool: return "bool";
    case KnobType::kInt: return "int";
    case KnobType::kDouble: return "number";
    case KnobType::kString: return "string";
    case KnobType::kBytes: return "bytes";
    case KnobType::kSeconds: return "seconds";
  }
  return "?";
}

std::map<std::string, std::string> processEnvironment() {
  std::map<std::string, std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos || !text.starts_with(kPrefix)) continue;
    out.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return out;
}

Knobs Knobs::load(const std::vector<KnobSpec>& specs,
                  const std::map<std::string, std::string>& environment) {
  Knobs knobs;
  for (const KnobSpec& spec : specs) {
    checkEq(validate(spec.defaultValue, spec), std::string{},
            "default value of knob " + spec.name);
    Entry entry{spec, spec.defaultValue, "default"};
    const std::string variable = knobVariable(spec.name);
    if (const auto it = environment.find(variable); it != environment.end()) {
      if (const std::string problem = validate(it->second, spec); !problem.empty()) {
        throw ConfigError(fmt::format("environment variable {}: {}, found '{}'", variable,
                                      problem, it->second));
      }
      entry.value = it->second;
      entry.source = variable;
    }
    knobs.entries_.push_back(std::move(entry));
  }
  for (const auto& [variable, value] : environment) {
    if (!variable.starts_with(kPrefix)) continue;
    const bool known = std::any_of(specs.begin(), specs.end(), [&](const KnobSpec& spec) {
      return knobVariable(spec.name) == variable;
    });
    if (!known) {
      throw ConfigError(fmt::format(
          "environment variable {}: no such knob (run 'paraxis config' to list them)", variable));
    }
  }
  return knobs;
}

const Knobs::Entry& Knobs::find(const std::string& name, KnobType expected) const {
  for (const Entry& entry : entries_) {
    if (entry.spec.name != name) continue;
    const bool numeric = expected == KnobType::kDouble &&
                         (entry.spec.type == KnobType::kBytes || entry.spec.type == KnobType::kSeconds);
    check(entry.spec.type == expected || numeric, "knob " + name + " read with the wrong type");
    return entry;
  }
  throw InternalError("knob '" + name + "' is read but not registered");
}

bool Knobs::getBool(const std::string& name) const {
  return *parseBool(find(name, KnobType::kBool).value);
}

long long Knobs::getInt(const std::string& name) const {
  return *parseInt(find(name, KnobType::kInt).value);
}

double Knobs::getDouble(const std::string& name) const {
  const Entry& entry = find(name, KnobType::kDouble);
  switch (entry.spec.type) {
    case KnobType::kBytes: return *units::parse(entry.value, units::Quantity::kBytes);
    case KnobType::kSeconds: return *units::parse(entry.value, units::Quantity::kSeconds);
    default: return *units::parse(entry.value, units::Quantity::kCount);
  }
}

const std::string& Knobs::getString(const std::string& name) const {
  return find(name, KnobType::kString).value;
}

}  // namespace paraxis
