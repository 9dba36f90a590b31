#include "plan/statistical.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/units.hpp"

namespace paraxis::plan {

double StatisticalModel::epochs(double batch) const {
  if (!table.empty()) {
    if (batch <= table.front().first) return table.front().second;
    if (batch >= table.back().first) {
      // Beyond the table, steps stop falling: epochs grow in proportion to the batch.
      return table.back().second * batch / table.back().first;
    }
    for (std::size_t i = 1; i < table.size(); ++i) {
      if (batch > table[i].first) continue;
      const auto& [b0, e0] = table[i - 1];
      const auto& [b1, e1] = table[i];
      const double t = std::log(batch / b0) / std::log(b1 / b0);
      return e0 + t * (e1 - e0);
    }
  }
  if (batch <= criticalBatch) return baseEpochs;
  return baseEpochs * std::pow(batch / criticalBatch, exponent);
}

std::string StatisticalModel::describe() const {
  const auto count = [](double v) { return units::formatCount(std::round(v)); };
  if (!table.empty()) {
    return fmt::format("epochs from a table of {} points ({:.4g} at a global batch of {} .. {:.4g} at {}), in "
                       "proportion to the batch beyond it",
                       table.size(), table.front().second, count(table.front().first), table.back().second,
                       count(table.back().first));
  }
  return fmt::format("{:.4g} epochs up to a global batch of {}, then x (B / {})^{:g}", baseEpochs,
                     count(criticalBatch), count(criticalBatch), exponent);
}

void StatisticalModel::anchor(double batch, double wanted) {
  const double factor = wanted / epochs(batch);
  baseEpochs *= factor;
  for (auto& [b, e] : table) e *= factor;
}

Recipe defaultRecipe(const std::string& name) {
  // ImageNet-1k: 1,281,167 images. Goyal et al. 2017: 90 epochs unchanged up to batch 8k; MLPerf
  // v1.0: 35 epochs at 3,264 and 45 at 13,056 with LARS — growth of about B^0.18 there; the
  // default keeps SGD's 90 epochs and a steeper B^0.5 beyond 8k (diminishing returns).
  if (name.rfind("cosmoflow", 0) == 0) return {"CosmoFlow (MLPerf HPC)", 524288, {30, 512, 0.5, {}}};
  if (name == "mesh-fcn") return {"mesh tangling", 10000, {50, 256, 0.5, {}}};
  if (name == "tiramisu") return {"4D-STEM", 100000, {30, 1024, 0.5, {}}};
  if (name == "lenet") return {"Fashion-MNIST", 60000, {3, 4096, 0.5, {}}};
  if (name == "cifar-resnet20" || name == "small-cnn") return {"CIFAR-10", 50000, {160, 4096, 0.5, {}}};
  return {"ImageNet-1k", 1281167, {90, 8192, 0.5, {}}};
}

Recipe recipeFor(const graph::Model& model) {
  Recipe recipe = defaultRecipe(model.name());
  const graph::DatasetSpec& d = model.dataset();
  if (d.samples <= 0) return recipe;
  recipe.dataset = d.name;
  recipe.samples = d.samples;
  if (d.epochs <= 0) return recipe;
  // Without a batch, the epochs hold on the flat part of the curve, where batch 1 lies.
  recipe.statistics.anchor(d.atBatch > 0 ? d.atBatch : 1.0, d.epochs);
  return recipe;
}

std::pair<double, double> parseEpochsAt(const std::string& text) {
  const auto eq = text.find('=');
  try {
    if (eq == std::string::npos) throw std::invalid_argument("no =");
    const double batch = std::stod(text.substr(0, eq));
    const double epochs = std::stod(text.substr(eq + 1));
    if (batch <= 0 || epochs <= 0) throw std::invalid_argument("not positive");
    return {batch, epochs};
  } catch (const std::exception&) {
    throw ConfigError(fmt::format("--epochs-at: expected BATCH=EPOCHS such as 8192=90, found '{}'", text));
  }
}

std::vector<std::pair<double, double>> loadEpochsTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot open the file", path));
  std::vector<std::pair<double, double>> table;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#' || line.rfind("batch", 0) == 0) continue;
    std::istringstream fields(line);
    double batch = 0;
    double epochs = 0;
    char comma = 0;
    if (!(fields >> batch >> comma >> epochs) || comma != ',' || batch <= 0 || epochs <= 0) {
      throw ConfigError(fmt::format("{}:{}: expected 'batch,epochs' with positive numbers, found '{}'", path, number, line));
    }
    if (!table.empty() && batch <= table.back().first) {
      throw ConfigError(fmt::format("{}:{}: batches must increase", path, number));
    }
    table.emplace_back(batch, epochs);
  }
  if (table.empty()) throw ConfigError(fmt::format("{}: no 'batch,epochs' rows", path));
  return table;
}

}  // namespace paraxis::plan
