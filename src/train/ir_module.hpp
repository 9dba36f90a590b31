#pragma once
// A LibTorch module built from the model IR: one torch layer per IR layer with weights or
// state (convolutions, batch-norm, fully connected, pooling, dropout), functional ops for
// the rest, executed over the DAG in topological order. Torch TUs only.
#include <torch/torch.h>

#include <chrono>

#include <functional>
#include <vector>

#include "graph/model.hpp"

namespace paraxis::train {

struct IrNetOptions {
  bool inPlace = true;       // ReLU and Add overwrite an input nothing else reads
  bool channelsLast = true;  // 2-D convolutions' weights and activations in NHWC (oneDNN's native layout)
  // Samples per layer call (a pipeline's micro-batch), 0: unknown, a batch. At one sample NHWC
  // stays faster on tiny maps too (ir_module.cpp).
  std::int64_t samplesPerCall = 0;
};

class IrNetImpl : public torch::nn::Module {
 public:
  explicit IrNetImpl(graph::Model model, IrNetOptions options = {});

  // Every layer's output for a batch (index = IR layer index; loss layers are left empty).
  std::vector<torch::Tensor> run(const torch::Tensor& input);
  // The sum of the model's losses: the last loss layer with weight 1, auxiliary heads 0.4
  // (Inception's convention). `target` holds class indices (softmax loss) or values (MSE).
  torch::Tensor loss(const std::vector<torch::Tensor>& outputs, const torch::Tensor& target) const;
  // The input of the main (last) loss layer: logits for classification.
  const torch::Tensor& prediction(const std::vector<torch::Tensor>& outputs) const;

  const graph::Model& model() const { return model_; }
  std::int64_t parameterCount() const;
  // The parameters of layer `index` (empty for layers without weights).
  std::vector<torch::Tensor> layerParameters(int index) const;
  // Runs before each layer of run(), with its index: lets a caller finish what the layer's
  // weights still wait for (the previous step's gradient reduction and update).
  void setBeforeLayer(std::function<void(int)> hook) { beforeLayer_ = std::move(hook); }
  // For executors that run the layers themselves: call before layer `index` runs.
  void beforeLayer(int index) {
    if (beforeLayer_) beforeLayer_(index);
  }
  // After layer `index` produced `output`, begun at `start` (run() and executors that run the
  // layers themselves): with tracing on, its forward in the trace and, in training, the hook that
  // times its backward (traceLayerBackward).
  void layerDone(int index, const torch::Tensor& output, std::chrono::steady_clock::time_point start);
  // The input as the layers take it: NHWC for 2-D samples with channelsLast (every executor
  // lays its input out so; a layer fed NCHW converts on every call, and torch's pooling and
  // batch norm run 2-10x slower on NCHW than on NHWC on one thread here).
  // A layer's output too: a convolution over one input channel (LeNet's first) returns NCHW
  // whatever the layout (the two coincide for its input).
  torch::Tensor laidOut(const torch::Tensor& input) const {
    return layoutOf(input.dim()) == torch::MemoryFormat::ChannelsLast ? input.contiguous(torch::MemoryFormat::ChannelsLast)
                                                                      : input;
  }
  // The layout of a tensor of `dims` dimensions as the layers take it (laidOut's): a buffer
  // that crosses ranks (a pipeline's activations and their gradients) is sent and received so.
  torch::MemoryFormat layoutOf(std::int64_t dims) const {
    return channelsLast_ && dims == 4 ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous;
  }
  // A convolution's input as layer `index` takes it: NCHW where the layer runs so (a tiny map
  // under channelsLast, ir_module.cpp), else as laid out. For executors that run convolutions
  // their own way too.
  torch::Tensor convInput(int index, const torch::Tensor& x) const { return nchw_[index] != 0 ? x.contiguous() : x; }
  // One layer's output from its inputs' (for executors that run some layers their own way).
  torch::Tensor applyLayer(int index, const std::vector<torch::Tensor>& outputs) { return apply(index, outputs); }
  // Layer `index` overwrites its first input (an in-place ReLU or Add).
  bool overwritesInput(int index) const { return inPlace_.at(index) != 0; }
  // With tracing on (core/trace.hpp), each layer's backward of the last run() as an interval on
  // the row "backward by layer": from its output's gradient being complete to its first input's
  // (the backward's end for the data). Where an input feeds several layers the interval ends
  // when all of them are done, so intervals of parallel branches overlap.
  void traceLayerBackward(std::chrono::steady_clock::time_point end);
  // The torch module of layer `index` (null for functional layers).
  std::shared_ptr<torch::nn::Module> layerModule(int index) const {
    return layers_.at(index).is_empty() ? nullptr : layers_[index].ptr();
  }

 private:
  torch::Tensor apply(int index, const std::vector<torch::Tensor>& outputs);
  graph::Model model_;
  std::vector<torch::nn::AnyModule> layers_;  // empty where the layer is functional
  std::vector<int> losses_;
  std::vector<std::uint8_t> inPlace_;  // per layer: overwrites its first input
  bool channelsLast_ = false;
  std::vector<std::uint8_t> nchw_;  // per layer: a convolution run in NCHW under channelsLast
  std::function<void(int)> beforeLayer_;
  std::vector<std::chrono::steady_clock::time_point> gradReady_;  // per layer, while tracing: its output's gradient
};

TORCH_MODULE(IrNet);

}  // namespace paraxis::train
