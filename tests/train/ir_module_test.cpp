// The torch modules built from the IR: parameter counts equal the IR's for every zoo model,
// and every layer's output shape equals the shape the IR inferred.
#include "train/ir_module.hpp"

#include <gtest/gtest.h>

#include "graph/zoo/zoo.hpp"

namespace paraxis::train {
namespace {

TEST(IrModule, ParameterCountEqualsTheIrForEveryZooModel) {
  torch::NoGradGuard noGrad;
  for (const graph::ZooEntry& entry : graph::zooEntries()) {
    const graph::Model model = entry.build(entry.defaultInput, entry.defaultClasses);
    IrNet net(model);
    EXPECT_EQ(net->parameterCount(), model.totals().params) << entry.name;
  }
}

void expectShapes(const std::string& name, const graph::ZooOptions& options) {
  torch::NoGradGuard noGrad;
  const graph::Model model = graph::buildZooModel(name, options);
  IrNet net(model);
  net->eval();
  std::vector<std::int64_t> sizes{2, model.inputShape().channels};
  for (auto e : model.inputShape().spatial) sizes.push_back(e);
  const std::vector<torch::Tensor> out = net->run(torch::randn(sizes));
  for (int i = 0; i < model.size(); ++i) {
    const graph::Layer& layer = model.layer(i);
    if (!out[i].defined()) continue;  // loss layers
    std::vector<std::int64_t> want{2, layer.output.channels};
    for (auto e : layer.output.spatial) want.push_back(e);
    ASSERT_EQ(out[i].sizes().vec(), want) << name << " layer " << layer.name;
  }
}

TEST(IrModule, EveryLayerProducesTheShapeTheIrInferred) {
  expectShapes("lenet", {});
  expectShapes("small-cnn", {});
  expectShapes("cifar-resnet20", {});
  expectShapes("resnet18", {.spatial = {64}});
  expectShapes("resnet50", {.spatial = {64}});
  expectShapes("vgg16", {.spatial = {32}});
  expectShapes("alexnet", {.spatial = {96}});
  expectShapes("inception-v3", {.spatial = {299}});
  expectShapes("tiramisu", {.spatial = {64}});
  expectShapes("mesh-fcn", {.spatial = {64}});
  expectShapes("cosmoflow", {.spatial = {32}});
}

// In-place ReLU and Add must not change what autograd computes: the same weights, the same
// batch, gradients equal to the net that allocates every output.
TEST(IrModule, InPlaceLayersGiveTheSameGradients) {
  for (const char* name : {"small-cnn", "resnet18", "tiramisu"}) {
    const graph::Model model = graph::buildZooModel(name, {.spatial = {32}, .classes = 4});
    torch::manual_seed(3);
    IrNet reference(model, IrNetOptions{.inPlace = false, .channelsLast = false});
    torch::manual_seed(3);
    IrNet inPlace(model, IrNetOptions{.inPlace = true, .channelsLast = false});
    std::vector<std::int64_t> sizes{2, model.inputShape().channels};
    for (auto e : model.inputShape().spatial) sizes.push_back(e);
    const torch::Tensor x = torch::randn(sizes);
    const graph::TensorShape& logits = model.layer(model.layer(model.size() - 1).inputs.front()).output;
    torch::Tensor y = torch::randint(logits.channels, {2}, torch::kInt64);
    if (model.layer(model.size() - 1).kind == graph::LayerKind::kMseLoss) {  // regression: targets like the output
      std::vector<std::int64_t> shape{2, logits.channels};
      for (auto e : logits.spatial) shape.push_back(e);
      y = torch::randn(shape);
    }
    for (IrNet* net : {&reference, &inPlace}) {
      torch::manual_seed(5);  // the same dropout masks
      (*net)->train();
      (*net)->loss((*net)->run(x), y).backward();
    }
    const auto a = reference->parameters();
    const auto b = inPlace->parameters();
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(torch::allclose(a[i].grad(), b[i].grad(), 1e-5, 1e-6)) << name << " parameter " << i;
    }
  }
}

// Channels-last changes the kernels' memory layout, not the math: the same loss and gradients
// as NCHW up to the summation order of the convolution algorithms.
TEST(IrModule, ChannelsLastGivesTheSameGradients) {
  for (const char* name : {"small-cnn", "resnet18"}) {
    // 8 samples at 64x64: batch norm over a 2x2 last stage stays well conditioned.
    const graph::Model model = graph::buildZooModel(name, {.spatial = {64}, .classes = 4});
    torch::manual_seed(3);
    IrNet nchw(model, IrNetOptions{.channelsLast = false});
    torch::manual_seed(3);
    IrNet nhwc(model, IrNetOptions{.channelsLast = true});
    const torch::Tensor x = torch::randn({8, 3, 64, 64});
    const torch::Tensor y = torch::randint(4, {8}, torch::kInt64);
    double losses[2];
    int k = 0;
    for (IrNet* net : {&nchw, &nhwc}) {
      (*net)->train();
      const torch::Tensor loss = (*net)->loss((*net)->run(x), y);
      loss.backward();
      losses[k++] = loss.item<double>();
    }
    EXPECT_NEAR(losses[0], losses[1], 1e-5 * std::fabs(losses[0])) << name;
    const auto a = nchw->parameters();
    const auto b = nhwc->parameters();
    bool anyChannelsLast = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      anyChannelsLast = anyChannelsLast || (b[i].is_contiguous(torch::MemoryFormat::ChannelsLast) && b[i].dim() == 4 &&
                                                !b[i].is_contiguous());
      // Relative to the gradient's largest element: entries near zero carry no scale of their
      // own. A weight gradient sums 32K products that mostly cancel, so another summation
      // order moves it by up to ~1e-3 of its scale (measured); a layout error moves it by O(1).
      const double scale = a[i].grad().abs().max().item<double>();
      EXPECT_LT((a[i].grad() - b[i].grad()).abs().max().item<double>(), 5e-3 * scale) << name << " parameter " << i;
    }
    EXPECT_TRUE(anyChannelsLast) << name;
  }
}

// Every 2-D layer's output is NHWC under channelsLast, LeNet's too: its first convolution (one
// input channel, for which NCHW and NHWC coincide) returns NCHW from torch, and a max pool on
// NCHW runs 10x slower than on NHWC on one thread here.
TEST(IrModule, ChannelsLastHoldsAfterAOneChannelConvolution) {
  torch::NoGradGuard noGrad;
  const graph::Model model = graph::buildZooModel("lenet", {});
  const auto outputs = IrNet(model, IrNetOptions{.channelsLast = true})->run(torch::randn({4, 1, 28, 28}));
  int checked = 0;
  for (int i = 1; i < model.size(); ++i) {
    if (!outputs[i].defined() || outputs[i].dim() != 4) continue;
    EXPECT_TRUE(outputs[i].is_contiguous(torch::MemoryFormat::ChannelsLast)) << model.layer(i).name << ": strides "
                                                                             << outputs[i].strides();
    ++checked;
  }
  EXPECT_GE(checked, 4);  // conv1, relu1, pool1, conv2, ...
}

// LeNet flattens its last pool's NHWC map into the classifier: the gradient reaching the pool
// is NHWC again (an NCHW one sent the pool's backward down LibTorch's mixed-layout path, 310 us
// against 46 a training step at batch 16), and the same as flattening in NCHW gives.
TEST(IrModule, FlattenLaysItsGradientOutAsItsInput) {
  const graph::Model model = graph::buildZooModel("lenet", {});
  const int flatten = [&] {
    for (int i = 1; i < model.size(); ++i) {
      if (model.layer(i).kind == graph::LayerKind::kFlatten) return i;
    }
    return -1;
  }();
  ASSERT_GT(flatten, 0);
  const int pool = model.layer(flatten).inputs.front();
  const torch::Tensor x = torch::randn({4, 1, 28, 28});
  const torch::Tensor y = torch::randint(10, {4}, torch::kInt64);
  torch::Tensor grads[2];
  int k = 0;
  for (const bool channelsLast : {false, true}) {
    torch::manual_seed(5);
    IrNet net(model, IrNetOptions{.channelsLast = channelsLast});
    net->eval();  // no dropout: the two nets must compute the same
    std::vector<torch::Tensor> outputs = net->run(x);
    ASSERT_EQ(outputs[pool].dim(), 4);
    ASSERT_GT(outputs[pool].size(2) * outputs[pool].size(3), 1);
    // A hook sees the gradient as it arrives (retain_grad would store a contiguous copy).
    outputs[pool].register_hook([&grads, k](const torch::Tensor& g) { grads[k] = g; });
    net->loss(outputs, y).backward();
    ++k;
  }
  EXPECT_TRUE(grads[1].is_contiguous(torch::MemoryFormat::ChannelsLast)) << grads[1].strides();
  EXPECT_TRUE(torch::allclose(grads[0], grads[1], 1e-5, 1e-6));
}

// Under channelsLast a convolution over 4 output positions or fewer runs in NCHW (its weights
// kept so; oneDNN's NHWC backward is 2-4x slower there), the rest in NHWC, and all of them at
// one sample a call (where NHWC is the faster); every layer's output stays NHWC for the layers
// after it.
TEST(IrModule, ConvolutionsOnTinyMapsRunInNchw) {
  const graph::Model model = graph::buildZooModel("resnet18", {.spatial = {64}});
  IrNet net(model, IrNetOptions{.channelsLast = true});
  int nchw = 0, nhwc = 0;
  for (int i = 1; i < model.size(); ++i) {
    const graph::Layer& l = model.layer(i);
    if (l.kind != graph::LayerKind::kConv) continue;
    const torch::Tensor w = net->layerModule(i)->named_parameters()["weight"];
    if (w.size(2) * w.size(3) == 1) continue;  // a 1x1 kernel's layouts coincide
    const bool tiny = l.output.spatial[0] * l.output.spatial[1] <= 4;
    EXPECT_EQ(w.is_contiguous(), tiny) << l.name;
    EXPECT_EQ(w.is_contiguous(torch::MemoryFormat::ChannelsLast), !tiny) << l.name;
    ++(tiny ? nchw : nhwc);
  }
  EXPECT_EQ(nchw, 4);  // layer4's 3x3: 2x2 positions at 64x64
  EXPECT_GT(nhwc, 10);
  IrNet oneSample(model, IrNetOptions{.channelsLast = true, .samplesPerCall = 1});
  for (int i = 1; i < model.size(); ++i) {
    if (model.layer(i).kind != graph::LayerKind::kConv) continue;
    const torch::Tensor w = oneSample->layerModule(i)->named_parameters()["weight"];
    EXPECT_TRUE(w.is_contiguous(torch::MemoryFormat::ChannelsLast)) << model.layer(i).name;
  }
  torch::NoGradGuard noGrad;
  const auto outputs = net->run(torch::randn({2, 3, 64, 64}));
  for (int i = 1; i < model.size(); ++i) {
    if (outputs[i].defined() && outputs[i].dim() == 4 && outputs[i].size(2) * outputs[i].size(3) > 1) {
      EXPECT_TRUE(outputs[i].is_contiguous(torch::MemoryFormat::ChannelsLast)) << model.layer(i).name;
    }
  }
}

TEST(IrModule, ReluAfterBatchNormRunsInPlace) {
  torch::NoGradGuard noGrad;
  const graph::Model model = graph::buildZooModel("small-cnn", {.spatial = {32}});
  int relu = 1;
  while (model.layer(relu).kind != graph::LayerKind::kActivation) ++relu;
  const int bn = model.layer(relu).inputs.front();
  ASSERT_EQ(model.layer(bn).kind, graph::LayerKind::kBatchNorm);
  const torch::Tensor x = torch::randn({2, 3, 32, 32});
  const auto shared = IrNet(model, IrNetOptions{.inPlace = true})->run(x);
  EXPECT_EQ(shared[relu].data_ptr(), shared[bn].data_ptr());
  const auto separate = IrNet(model, IrNetOptions{.inPlace = false})->run(x);
  EXPECT_NE(separate[relu].data_ptr(), separate[bn].data_ptr());
}

TEST(IrModule, LossesBackpropagateIntoEveryParameter) {
  const graph::Model model = graph::buildZooModel("inception-v3", {.spatial = {299}, .classes = 5});
  IrNet net(model);
  net->train();
  const std::vector<torch::Tensor> out = net->run(torch::randn({2, 3, 299, 299}));
  const torch::Tensor loss = net->loss(out, torch::tensor({1, 3}));
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
  EXPECT_EQ(net->prediction(out).sizes().vec(), (std::vector<std::int64_t>{2, 5}));
  loss.backward();
  for (const auto& p : net->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();  // the auxiliary head too
  }
}

}  // namespace
}  // namespace paraxis::train
