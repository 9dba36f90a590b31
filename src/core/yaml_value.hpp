#pragma once
// A YAML node that knows where it came from, so every error names the file, line, column and
// key path: "model.yaml:12:5: layers[3].kernel: expected an integer, found 'three'".
// Shared by the model loader (graph) and the cluster loader (hw).
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace paraxis {

class YamlValue {
 public:
  YamlValue(YAML::Node node, std::shared_ptr<const std::string> file, std::string path);

  // Throws ConfigError "<file>:<line>:<col>: <path>: <message>".
  [[noreturn]] void fail(const std::string& message) const;

  bool isMap() const { return node_.IsMap(); }
  bool isSequence() const { return node_.IsSequence(); }
  bool isScalar() const { return node_.IsScalar(); }
  const std::string& path() const { return path_; }
  int line() const { return node_.Mark().line + 1; }

  bool has(const std::string& key) const;
  YamlValue at(const std::string& key) const;  // required key
  std::optional<YamlValue> find(const std::string& key) const;
  std::vector<YamlValue> items() const;  // a sequence
  // Rejects keys outside `allowed`, naming the first unknown one and listing the allowed.
  void requireKeys(std::initializer_list<const char*> allowed) const;
  void requireKeys(const std::vector<std::string>& allowed) const;

  std::string text() const;
  double number() const;
  std::int64_t integer(std::int64_t minimum) const;
  bool boolean() const;
  double quantity(units::Quantity quantity) const;  // "12.5 GB/s", "500 ns", or a number
  // An integer or a list of integers ("3" or "[1, 7]").
  std::vector<std::int64_t> integers(std::int64_t minimum) const;

  // Typed reads of optional keys with defaults.
  std::string text(const std::string& key, const std::string& fallback) const;
  double number(const std::string& key, double fallback) const;
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t minimum) const;
  bool boolean(const std::string& key, bool fallback) const;

 private:
  std::string scalarOrFail(const char* expected) const;
  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string path_;
};

// A yaml-cpp exception past the checks above (a conversion it refuses) as a ConfigError naming
// the file, line and column; the loaders' last line of defence.
[[noreturn]] void failOnYamlError(const YAML::Exception& e, const std::string& name);

// Parses a document; a syntax error names the file, line and column.
YamlValue loadYamlFile(const std::string& path);
YamlValue loadYamlText(const std::string& text, const std::string& name);

}  // namespace paraxis
