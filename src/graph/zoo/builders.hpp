#pragma once
// The zoo's model builders; zoo.cpp registers them.
#include <cstdint>

#include "graph/model.hpp"

namespace paraxis::graph::zoo {

Model alexnet(const TensorShape& input, std::int64_t classes);
Model vgg11(const TensorShape& input, std::int64_t classes);
Model vgg16(const TensorShape& input, std::int64_t classes);
Model resnet(int depth, const TensorShape& input, std::int64_t classes);  // 18, 34, 50, 101, 152
Model inceptionV3(const TensorShape& input, std::int64_t classes, bool auxLogits);
Model cosmoflow(const TensorShape& input, std::int64_t targets);
Model meshFcn(const TensorShape& input, std::int64_t classes);
Model tiramisu(const TensorShape& input, std::int64_t targets);
Model lenet(const TensorShape& input, std::int64_t classes);
Model cifarResnet(int depth, const TensorShape& input, std::int64_t classes);
Model smallCnn(const TensorShape& input, std::int64_t classes);

}  // namespace paraxis::graph::zoo
