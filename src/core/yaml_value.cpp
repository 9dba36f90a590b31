#include "core/yaml_value.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "core/counts.hpp"
#include "core/error.hpp"

namespace paraxis {
namespace {

std::string joinPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

YamlValue parse(const std::string& text, const std::string& name) {
  auto file = std::make_shared<const std::string>(name);
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) {
      throw ConfigError(fmt::format("{}: expected a YAML mapping (key: value lines) at the top", name));
    }
    return YamlValue(root, file, "");
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("{}:{}:{}: malformed YAML: {}", name, e.mark.line + 1,
                                  e.mark.column + 1, e.msg));
  }
}

}  // namespace

YamlValue::YamlValue(YAML::Node node, std::shared_ptr<const std::string> file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

void YamlValue::fail(const std::string& text) const {
  // One line whatever the file holds: a quoted multi-line scalar is shown escaped and cut.
  std::string message;
  for (char c : text.substr(0, 400)) message += c == '\n' ? std::string("\\n") : std::string(1, c);
  if (text.size() > 400) message += "...";
  const YAML::Mark mark = node_.Mark();
  const std::string where = path_.empty() ? "" : path_ + ": ";
  if (mark.is_null()) throw ConfigError(fmt::format("{}: {}{}", *file_, where, message));
  throw ConfigError(fmt::format("{}:{}:{}: {}{}", *file_, mark.line + 1, mark.column + 1, where, message));
}

bool YamlValue::has(const std::string& key) const { return node_.IsMap() && node_[key]; }

std::optional<YamlValue> YamlValue::find(const std::string& key) const {
  if (!node_.IsMap()) fail("expected a mapping");
  const YAML::Node child = node_[key];
  if (!child) return std::nullopt;
  return YamlValue(child, file_, joinPath(path_, key));
}

YamlValue YamlValue::at(const std::string& key) const {
  if (auto child = find(key)) return *child;
  fail(fmt::format("missing required key '{}'", key));
}

std::vector<YamlValue> YamlValue::items() const {
  if (!node_.IsSequence()) fail("expected a list");
  std::vector<YamlValue> out;
  for (std::size_t i = 0; i < node_.size(); ++i) {
    out.emplace_back(node_[i], file_, fmt::format("{}[{}]", path_, i));
  }
  return out;
}

void YamlValue::requireKeys(std::initializer_list<const char*> allowed) const {
  requireKeys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void YamlValue::requireKeys(const std::vector<std::string>& allowed) const {
  if (!node_.IsMap()) fail("expected a mapping");
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) YamlValue(entry.first, file_, path_).fail("expected a key name, found a list or mapping");
    const std::string key = entry.first.Scalar();
    const bool known = std::any_of(allowed.begin(), allowed.end(),
                                   [&](const std::string& a) { return key == a; });
    if (!known) {
      YamlValue(entry.first, file_, path_)
          .fail(fmt::format("unknown key '{}' (expected one of: {})", key, fmt::join(allowed, ", ")));
    }
  }
}

std::string YamlValue::scalarOrFail(const char* expected) const {
  if (!node_.IsScalar()) fail(fmt::format("expected {}, found a {}", expected, node_.IsMap() ? "mapping" : node_.IsSequence() ? "list" : "null"));
  return node_.Scalar();
}

std::string YamlValue::text() const { return scalarOrFail("a string"); }

double YamlValue::number() const {
  const std::string s = scalarOrFail("a number");
  const auto value = units::parse(s, units::Quantity::kCount);
  if (!value) fail(fmt::format("expected a number, found '{}'", s));
  return *value;
}

std::int64_t YamlValue::integer(std::int64_t minimum) const {
  const std::string s = scalarOrFail("an integer");
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc{} || end != s.data() + s.size()) {
    fail(fmt::format("expected an integer, found '{}'", s));
  }
  if (value < minimum) fail(fmt::format("expected an integer of at least {}, found {}", minimum, value));
  if (value >= kInputLimit) fail(fmt::format("expected an integer below 2^31, found {}", value));
  return value;
}

bool YamlValue::boolean() const {
  const std::string s = scalarOrFail("true or false");
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(fmt::format("expected true or false, found '{}'", s));
}

double YamlValue::quantity(units::Quantity quantity) const {
  const std::string s = scalarOrFail("a quantity");
  const auto value = units::parse(s, quantity);
  if (!value) {
    fail(fmt::format("expected a number with an optional unit ({}), found '{}'",
                     units::acceptedUnits(quantity), s));
  }
  return *value;
}

std::vector<std::int64_t> YamlValue::integers(std::int64_t minimum) const {
  if (node_.IsScalar()) return {integer(minimum)};
  std::vector<std::int64_t> out;
  for (const YamlValue& item : items()) out.push_back(item.integer(minimum));
  if (out.empty()) fail("expected an integer or a non-empty list of integers");
  return out;
}

std::string YamlValue::text(const std::string& key, const std::string& fallback) const {
  const auto child = find(key);
  return child ? child->text() : fallback;
}

double YamlValue::number(const std::string& key, double fallback) const {
  const auto child = find(key);
  return child ? child->number() : fallback;
}

std::int64_t YamlValue::integer(const std::string& key, std::int64_t fallback,
                                std::int64_t minimum) const {
  const auto child = find(key);
  return child ? child->integer(minimum) : fallback;
}

bool YamlValue::boolean(const std::string& key, bool fallback) const {
  const auto child = find(key);
  return child ? child->boolean() : fallback;
}

YamlValue loadYamlFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot open the file", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

YamlValue loadYamlText(const std::string& text, const std::string& name) { return parse(text, name); }

void failOnYamlError(const YAML::Exception& e, const std::string& name) {
  if (e.mark.is_null()) throw ConfigError(fmt::format("{}: {}", name, e.msg));
  throw ConfigError(fmt::format("{}:{}:{}: {}", name, e.mark.line + 1, e.mark.column + 1, e.msg));
}

}  // namespace paraxis
