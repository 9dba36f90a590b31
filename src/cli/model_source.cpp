#include "cli/model_source.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <filesystem>

#include "cli/ranges.hpp"
#include "core/counts.hpp"
#include "core/error.hpp"
#include "graph/yaml_loader.hpp"
#include "graph/zoo/zoo.hpp"

namespace paraxis::cli {
namespace {

std::vector<std::int64_t> parseExtents(const std::string& text) {
  std::vector<std::int64_t> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('x', start), text.size());
    std::int64_t value = 0;
    const auto [ptr, error] = std::from_chars(text.data() + start, text.data() + end, value);
    if (error != std::errc{} || ptr != text.data() + end || value < 1 || value >= kInputLimit) {
      throw ConfigError(fmt::format(
          "--input: expected spatial extents below 2^31 such as 224, 224x224 or 128x128x128, found '{}'", text));
    }
    out.push_back(value);
    start = end + 1;
  }
  return out;
}

bool isModelFile(const std::string& name) {
  return name.ends_with(".yaml") || name.ends_with(".yml") || name.find('/') != std::string::npos ||
         std::filesystem::is_regular_file(name);
}

}  // namespace

void addModelShapeOptions(CLI::App& c, ModelSource& s) {
  c.add_option("--input", s.input, "spatial input extents of a zoo model: 224, 224x224 or 128x128x128");
  c.add_option("--channels", s.channels, "input channels of a zoo model (default: the model's)")
      ->check(within(1, 1LL << 20));
  c.add_option("--classes", s.classes, "output classes or targets of a zoo model (default: the model's)")
      ->check(within(1, 1LL << 30));
}

CLI::Option* addModelOptions(CLI::App& c, ModelSource& s, const std::string& modelHelp) {
  CLI::Option* model = c.add_option("--model", s.model, "zoo name or model .yaml file (" + modelHelp + ")");
  addModelShapeOptions(c, s);
  return model;
}

graph::Model loadModel(const ModelSource& o) {
  if (isModelFile(o.model)) {
    if (!o.input.empty() || o.channels > 0 || o.classes > 0) {
      throw ConfigError(fmt::format("{}: --input, --channels and --classes apply to zoo models; "
                                    "a model file sets its own input and outputs", o.model));
    }
    return graph::loadModelFile(o.model);
  }
  graph::ZooOptions zoo;
  if (!o.input.empty()) zoo.spatial = parseExtents(o.input);
  zoo.channels = o.channels;
  zoo.classes = o.classes;
  return graph::buildZooModel(o.model, zoo);
}

void requireWritableDirectory(const std::string& path, const char* option) {
  if (path.empty()) return;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder)) {
    throw ConfigError(fmt::format("{} {}: the folder '{}' does not exist", option, path, folder.string()));
  }
}

}  // namespace paraxis::cli
