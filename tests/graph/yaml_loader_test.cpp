#include "graph/yaml_loader.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "graph/zoo/zoo.hpp"

namespace paraxis::graph {
namespace {

const std::string kData = PARAXIS_TEST_DATA;

std::string errorOf(const std::string& file) {
  try {
    loadModelFile(kData + "/" + file);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(YamlLoader, DocumentedLenetEqualsTheZooModel) {
  const Model fromFile = loadModelFile(kData + "/lenet.yaml");
  const Model fromZoo = buildZooModel("lenet");
  ASSERT_EQ(fromFile.size(), fromZoo.size());
  for (int i = 0; i < fromZoo.size(); ++i) {
    EXPECT_EQ(fromFile.layer(i).name, fromZoo.layer(i).name);
    EXPECT_EQ(fromFile.layer(i).output, fromZoo.layer(i).output) << fromZoo.layer(i).name;
    EXPECT_EQ(fromFile.layer(i).counts.params, fromZoo.layer(i).counts.params);
    EXPECT_DOUBLE_EQ(fromFile.layer(i).counts.forwardFlops, fromZoo.layer(i).counts.forwardFlops);
  }
}

TEST(YamlLoader, BranchesNameTheirInputs) {
  const Model m = loadModelFile(kData + "/residual.yaml");
  const Layer& join = m.layer(m.find("join"));
  EXPECT_EQ(join.inputs, (std::vector<int>{m.find("conv_b"), 0}));
  EXPECT_EQ(m.layer(m.find("conv_b")).as<ConvAttrs>().kernel, (Dims{3, 1, 3}));
  EXPECT_EQ(m.layer(m.find("up")).output, (TensorShape{4, {64, 64, 64}}));
  EXPECT_EQ(kindName(m.layer(m.find("act_a"))), "leaky_relu");
}

TEST(YamlLoader, MalformedYamlNamesFileLineAndColumn) {
  EXPECT_EQ(errorOf("bad_syntax.yaml").rfind(kData + "/bad_syntax.yaml:3:1: malformed YAML:", 0), 0U)
      << errorOf("bad_syntax.yaml");
}

TEST(YamlLoader, UnknownKindListsTheKinds) {
  const std::string e = errorOf("unknown_kind.yaml");
  EXPECT_NE(e.find("unknown_kind.yaml:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("layers[1].kind: unknown layer kind 'rectifier' (expected one of: conv,"), std::string::npos) << e;
}

TEST(YamlLoader, ShapeMismatchNamesLayerLineAndShapes) {
  const std::string e = errorOf("shape_mismatch.yaml");
  EXPECT_NE(e.find("shape_mismatch.yaml:6:"), std::string::npos) << e;
  EXPECT_NE(e.find("layer 'join' (add): input shapes do not fit: 'a' gives 16x32x32, 'b' gives 16x16x16"),
            std::string::npos) << e;
}

TEST(YamlLoader, UnknownKeyIsRejected) {
  const std::string e = errorOf("unknown_key.yaml");
  EXPECT_NE(e.find("unknown key 'strides'"), std::string::npos) << e;
}

TEST(YamlLoader, MissingFileAndBadValues) {
  EXPECT_EQ(errorOf("nope.yaml"), kData + "/nope.yaml: cannot open the file");
  EXPECT_THROW(loadModelText("name: x\ninput: {channels: 1, size: [8, 8]}\nlayers:\n  - {kind: conv, filters: two, kernel: 3}\n", "inline"),
               ConfigError);
  try {
    loadModelText("name: x\ninput: {channels: 1, size: [8, 8]}\nlayers:\n  - {kind: relu, inputs: [ghost]}\n", "inline");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no earlier layer is named 'ghost'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace paraxis::graph
