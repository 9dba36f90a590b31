// Inception-v3 as torchvision 0.14 defines it, including the auxiliary classifier
// (AuxLogits) that torchvision builds by default. Each BasicConv2d is conv (no bias),
// batch-norm (eps 0.001) and ReLU, named <block>.conv / .bn / .relu.
#include <string>
#include <vector>

#include "graph/zoo/builders.hpp"

namespace paraxis::graph::zoo {
namespace {

struct Inception {
  ModelBuilder& b;

  int basic(const std::string& name, int x, std::int64_t filters, Dims kernel, Dims stride = {1},
            Dims padding = {0}) {
    x = b.conv(name + ".conv", x,
               {.filters = filters, .kernel = kernel, .stride = stride, .padding = padding,
                .bias = false});
    x = b.batchNorm(name + ".bn", x, 0.001);
    return b.relu(name + ".relu", x);
  }

  int avgPool3(const std::string& name, int x) {
    return b.avgPool(name, x, {.kernel = {3}, .stride = {1}, .padding = {1}});
  }

  int blockA(const std::string& p, int x, std::int64_t poolFeatures) {
    const int b1 = basic(p + ".branch1x1", x, 64, {1});
    int b5 = basic(p + ".branch5x5_1", x, 48, {1});
    b5 = basic(p + ".branch5x5_2", b5, 64, {5}, {1}, {2});
    int b3 = basic(p + ".branch3x3dbl_1", x, 64, {1});
    b3 = basic(p + ".branch3x3dbl_2", b3, 96, {3}, {1}, {1});
    b3 = basic(p + ".branch3x3dbl_3", b3, 96, {3}, {1}, {1});
    int bp = avgPool3(p + ".avg_pool", x);
    bp = basic(p + ".branch_pool", bp, poolFeatures, {1});
    return b.concat(p + ".concat", {b1, b5, b3, bp});
  }

  int blockB(const std::string& p, int x) {
    const int b3 = basic(p + ".branch3x3", x, 384, {3}, {2});
    int bd = basic(p + ".branch3x3dbl_1", x, 64, {1});
    bd = basic(p + ".branch3x3dbl_2", bd, 96, {3}, {1}, {1});
    bd = basic(p + ".branch3x3dbl_3", bd, 96, {3}, {2});
    const int bp = b.maxPool(p + ".max_pool", x, {.kernel = {3}, .stride = {2}});
    return b.concat(p + ".concat", {b3, bd, bp});
  }

  int blockC(const std::string& p, int x, std::int64_t c7) {
    const int b1 = basic(p + ".branch1x1", x, 192, {1});
    int b7 = basic(p + ".branch7x7_1", x, c7, {1});
    b7 = basic(p + ".branch7x7_2", b7, c7, {1, 7}, {1}, {0, 3});
    b7 = basic(p + ".branch7x7_3", b7, 192, {7, 1}, {1}, {3, 0});
    int bd = basic(p + ".branch7x7dbl_1", x, c7, {1});
    bd = basic(p + ".branch7x7dbl_2", bd, c7, {7, 1}, {1}, {3, 0});
    bd = basic(p + ".branch7x7dbl_3", bd, c7, {1, 7}, {1}, {0, 3});
    bd = basic(p + ".branch7x7dbl_4", bd, c7, {7, 1}, {1}, {3, 0});
    bd = basic(p + ".branch7x7dbl_5", bd, 192, {1, 7}, {1}, {0, 3});
    int bp = avgPool3(p + ".avg_pool", x);
    bp = basic(p + ".branch_pool", bp, 192, {1});
    return b.concat(p + ".concat", {b1, b7, bd, bp});
  }

  int blockD(const std::string& p, int x) {
    int b3 = basic(p + ".branch3x3_1", x, 192, {1});
    b3 = basic(p + ".branch3x3_2", b3, 320, {3}, {2});
    int b7 = basic(p + ".branch7x7x3_1", x, 192, {1});
    b7 = basic(p + ".branch7x7x3_2", b7, 192, {1, 7}, {1}, {0, 3});
    b7 = basic(p + ".branch7x7x3_3", b7, 192, {7, 1}, {1}, {3, 0});
    b7 = basic(p + ".branch7x7x3_4", b7, 192, {3}, {2});
    const int bp = b.maxPool(p + ".max_pool", x, {.kernel = {3}, .stride = {2}});
    return b.concat(p + ".concat", {b3, b7, bp});
  }

  int blockE(const std::string& p, int x) {
    const int b1 = basic(p + ".branch1x1", x, 320, {1});
    const int b3 = basic(p + ".branch3x3_1", x, 384, {1});
    const int b3a = basic(p + ".branch3x3_2a", b3, 384, {1, 3}, {1}, {0, 1});
    const int b3b = basic(p + ".branch3x3_2b", b3, 384, {3, 1}, {1}, {1, 0});
    int bd = basic(p + ".branch3x3dbl_1", x, 448, {1});
    bd = basic(p + ".branch3x3dbl_2", bd, 384, {3}, {1}, {1});
    const int bda = basic(p + ".branch3x3dbl_3a", bd, 384, {1, 3}, {1}, {0, 1});
    const int bdb = basic(p + ".branch3x3dbl_3b", bd, 384, {3, 1}, {1}, {1, 0});
    int bp = avgPool3(p + ".avg_pool", x);
    bp = basic(p + ".branch_pool", bp, 192, {1});
    return b.concat(p + ".concat", {b1, b3a, b3b, bda, bdb, bp});
  }

  void aux(int x, std::int64_t classes) {
    x = b.avgPool("AuxLogits.avg_pool", x, {.kernel = {5}, .stride = {3}});
    x = basic("AuxLogits.conv0", x, 128, {1});
    x = basic("AuxLogits.conv1", x, 768, {5});
    x = b.adaptiveAvgPool("AuxLogits.adaptive_pool", x, {1, 1});
    x = b.flatten("AuxLogits.flatten", x);
    x = b.fc("AuxLogits.fc", x, classes);
    b.softmaxLoss("AuxLogits.loss", x);
  }
};

}  // namespace

Model inceptionV3(const TensorShape& input, std::int64_t classes, bool auxLogits) {
  ModelBuilder builder(auxLogits ? "inception-v3" : "inception-v3-noaux", input);
  Inception n{builder};
  int x = n.basic("Conv2d_1a_3x3", builder.input(), 32, {3}, {2});
  x = n.basic("Conv2d_2a_3x3", x, 32, {3});
  x = n.basic("Conv2d_2b_3x3", x, 64, {3}, {1}, {1});
  x = builder.maxPool("maxpool1", x, {.kernel = {3}, .stride = {2}});
  x = n.basic("Conv2d_3b_1x1", x, 80, {1});
  x = n.basic("Conv2d_4a_3x3", x, 192, {3});
  x = builder.maxPool("maxpool2", x, {.kernel = {3}, .stride = {2}});
  x = n.blockA("Mixed_5b", x, 32);
  x = n.blockA("Mixed_5c", x, 64);
  x = n.blockA("Mixed_5d", x, 64);
  x = n.blockB("Mixed_6a", x);
  x = n.blockC("Mixed_6b", x, 128);
  x = n.blockC("Mixed_6c", x, 160);
  x = n.blockC("Mixed_6d", x, 160);
  x = n.blockC("Mixed_6e", x, 192);
  if (auxLogits) n.aux(x, classes);
  x = n.blockD("Mixed_7a", x);
  x = n.blockE("Mixed_7b", x);
  x = n.blockE("Mixed_7c", x);
  x = builder.adaptiveAvgPool("avgpool", x, {1, 1});
  x = builder.dropout("dropout", x);
  x = builder.flatten("flatten", x);
  x = builder.fc("fc", x, classes);
  builder.softmaxLoss("loss", x);
  return std::move(builder).build();
}

}  // namespace paraxis::graph::zoo
