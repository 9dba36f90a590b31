#pragma once
// Statistical efficiency: epochs to reach the target accuracy as a function of the global
// batch, E(B) (COST-MODELS.md section 6). Flat up to a critical batch, then growing; or a
// user table interpolated in log(batch). Anchored by one known point if given.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/model.hpp"

namespace paraxis::plan {

struct StatisticalModel {
  double baseEpochs = 90;         // E below the critical batch
  double criticalBatch = 8192;    // where epochs start to grow
  double exponent = 0.5;          // E = base (B / critical)^exponent beyond it
  std::vector<std::pair<double, double>> table;  // (batch, epochs), increasing; overrides the curve

  double epochs(double globalBatch) const;
  // What the curve assumes, in words: "90 epochs up to a global batch of 8,192, then x
  // (B / 8,192)^0.5" or "a table of 5 points, 8,192: 90 .. 524,288: 5,760, ...".
  std::string describe() const;
  // Scales the curve so that E(batch) = epochs.
  void anchor(double batch, double epochs);
};

// Defaults per model family: the data set's size and a recipe-level curve.
struct Recipe {
  std::string dataset;
  double samples;
  StatisticalModel statistics;
};

Recipe defaultRecipe(const std::string& modelName);
// The data set the model file names (graph::DatasetSpec), else defaultRecipe(model.name()):
// its samples, and the family's curve with its epochs anchored where the file says.
Recipe recipeFor(const graph::Model& model);

// "8192=90" -> (8192, 90); throws ConfigError naming the option.
std::pair<double, double> parseEpochsAt(const std::string& text);
// A CSV of "batch,epochs" lines; throws ConfigError naming the file and line.
std::vector<std::pair<double, double>> loadEpochsTable(const std::string& path);

}  // namespace paraxis::plan
