#pragma once
// The model IR: a DAG of named layers in topological order. Layer 0 is the input.
// Models are built through ModelBuilder, which infers shapes and counts as each layer is
// added, so a Model is always consistent.
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/layer.hpp"

namespace paraxis::graph {

struct ModelTotals {
  std::int64_t params = 0;
  double forwardFlops = 0;  // per sample
  double backwardDataFlops = 0;
  double backwardWeightFlops = 0;
  std::int64_t activationBytes = 0;  // per sample, every layer's output including the input
};

// The data set a model file names (its `dataset:` key): what `plan` prices an epoch and a
// training run with, instead of the zoo family's (ImageNet-1k for a name it does not know).
struct DatasetSpec {
  std::string name;
  double samples = 0;  // per epoch; 0: the file names no data set
  double epochs = 0;   // epochs to the target accuracy; 0: the family's curve
  double atBatch = 0;  // the global batch those epochs hold at; 0: any batch up to the critical one
};

class Model {
 public:
  const std::string& name() const { return name_; }
  const DatasetSpec& dataset() const { return dataset_; }
  const TensorShape& inputShape() const { return layers_.front().output; }
  int bytesPerElement() const { return bytesPerElement_; }
  const std::vector<Layer>& layers() const { return layers_; }
  const Layer& layer(int index) const { return layers_.at(index); }
  int size() const { return static_cast<int>(layers_.size()); }

  // Index of the layer with this name; throws NotFoundError.
  int find(const std::string& layerName) const;
  // Layers whose output no other layer consumes (losses, auxiliary heads).
  std::vector<int> outputs() const;
  const ModelTotals& totals() const { return totals_; }

 private:
  friend class ModelBuilder;
  std::string name_;
  DatasetSpec dataset_;
  int bytesPerElement_ = 4;
  std::vector<Layer> layers_;
  ModelTotals totals_;  // summed once the builder is done: a Model never changes after
};

class ModelBuilder {
 public:
  ModelBuilder(std::string name, TensorShape input, int bytesPerElement = 4);

  int input() const { return 0; }
  const TensorShape& shapeOf(int layer) const { return model_.layers_.at(layer).output; }
  LayerKind kindOf(int layer) const { return model_.layers_.at(layer).kind; }

  // Adds a layer fed by `inputs`, infers its shape and counts; returns its index.
  int add(std::string name, LayerKind kind, LayerAttrs attrs, std::vector<int> inputs);

  int conv(std::string name, int x, ConvAttrs attrs);
  int deconv(std::string name, int x, ConvAttrs attrs);
  int maxPool(std::string name, int x, PoolAttrs attrs);
  int avgPool(std::string name, int x, PoolAttrs attrs);
  int adaptiveAvgPool(std::string name, int x, Dims output);
  int globalAvgPool(std::string name, int x);
  int batchNorm(std::string name, int x, double eps = 1e-5);
  int relu(std::string name, int x);
  int activation(std::string name, int x, ActivationAttrs attrs);
  int sum(std::string name, std::vector<int> inputs);
  int concat(std::string name, std::vector<int> inputs);
  int flatten(std::string name, int x);
  int fc(std::string name, int x, std::int64_t outputs, bool bias = true);
  int dropout(std::string name, int x, double probability = 0.5);
  int softmaxLoss(std::string name, int x);
  int mseLoss(std::string name, int x);

  void setDataset(DatasetSpec dataset) { model_.dataset_ = std::move(dataset); }

  Model build() &&;

 private:
  Model model_;
  std::unordered_set<std::string> names_;  // a name is checked once, not against every earlier layer
  // Per layer, whether its output carries a gradient: it has weights, or an input does. The
  // data carries none, so training takes no data gradient of a layer fed by the data alone.
  std::vector<bool> carriesGradient_{false};
};

}  // namespace paraxis::graph
