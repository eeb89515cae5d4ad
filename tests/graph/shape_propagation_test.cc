#include "server/graph/shape_propagation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "tests/testing/onnx_builder.h"

#ifndef NPU_TEST_DATA_DIR
#error "NPU_TEST_DATA_DIR is set by tests/graph/CMakeLists.txt"
#endif

namespace npu::graph {
namespace {

using ::npu::testing::IntAttr;
using ::npu::testing::IntsAttr;
using ::npu::testing::kFloat16;
using ::npu::testing::kInt64;
using ::npu::testing::OnnxBuilder;
using ::testing::ElementsAre;
using ::testing::Optional;

std::vector<int64_t> DimsOf(const std::unordered_map<std::string, TensorFacts>& facts,
                            const std::string& name) {
  auto it = facts.find(name);
  if (it == facts.end() || !it->second.dims.has_value()) return {-1};
  return *it->second.dims;
}

TEST(PropagateShapesTest, ReshapeTakesZeroAndMinusOneAsOnnxDefines) {
  OnnxBuilder model;
  model.Input("x", kFloat16, {"b", 6, 8});
  model.Initializer("target", kInt64, {3}, {0, -1, 4});
  model.Node("Reshape", {"x", "target"}, {"y"}).Output("y", kFloat16, 3);
  const auto facts = PropagateShapes(model.model().graph(), 17, {{"b", 5}});
  EXPECT_THAT(DimsOf(facts, "x"), ElementsAre(5, 6, 8));
  EXPECT_THAT(DimsOf(facts, "y"), ElementsAre(5, 12, 4));
}

TEST(PropagateShapesTest, ValuesFlowThroughShapeArithmetic) {
  OnnxBuilder model;
  model.Input("x", kFloat16, {"b", 7, 9});
  model.Initializer("two", kInt64, {}, {2});
  model.Node("Shape", {"x"}, {"s"});
  model.Node("Slice", {"s", "minus_one", "big", "zero", "minus_one"}, {"reversed"});
  model.Initializer("big", kInt64, {1}, {-100}).Initializer("zero", kInt64, {1}, {0});
  model.Initializer("minus_one", kInt64, {1}, {-1});
  model.Node("Mod", {"s", "minus_four"}, {"m"});
  model.Initializer("minus_four", kInt64, {1}, {-4});
  model.Output("reversed", kInt64, 1).Output("m", kInt64, 1);
  const auto facts = PropagateShapes(model.model().graph(), 17, {{"b", 5}});
  EXPECT_THAT(facts.at("s").values, Optional(ElementsAre(5, 7, 9)));
  EXPECT_THAT(facts.at("reversed").values, Optional(ElementsAre(9, 7, 5)));
  // Python's % (the divisor's sign), as ONNX's integer Mod with fmod=0.
  EXPECT_THAT(facts.at("m").values, Optional(ElementsAre(-3, -1, -3)));
}

TEST(PropagateShapesTest, TransposeMovesValuesAndConvFollowsItsAttributes) {
  OnnxBuilder model;
  model.Initializer("pairs", kInt64, {2, 3}, {1, 2, 3, 4, 5, 6});
  model.Node("Transpose", {"pairs"}, {"t"}, {IntsAttr("perm", {1, 0})});
  model.Input("image", kFloat16, {"b", 3, 224, 224}).Input("w", kFloat16, {64, 3, 7, 7});
  model.Node("Conv", {"image", "w"}, {"c"},
             {IntsAttr("strides", {2, 2}), IntsAttr("pads", {3, 3, 3, 3})});
  model.Node("MaxPool", {"c"}, {"p"},
             {IntsAttr("kernel_shape", {3, 3}), IntsAttr("strides", {2, 2}),
              IntsAttr("pads", {1, 1, 1, 1})});
  model.Output("t", kInt64, 2).Output("p", kFloat16, 4);
  const auto facts = PropagateShapes(model.model().graph(), 17, {{"b", 2}});
  EXPECT_THAT(facts.at("t").values, Optional(ElementsAre(1, 4, 2, 5, 3, 6)));
  EXPECT_THAT(DimsOf(facts, "c"), ElementsAre(2, 64, 112, 112));
  EXPECT_THAT(DimsOf(facts, "p"), ElementsAre(2, 64, 56, 56));
}

TEST(PropagateShapesTest, BadAttributesAndHugeDimsLeaveShapesUnknown) {
  OnnxBuilder model;
  model.Input("x", kFloat16, {4, 4, 4}).Input("huge", kFloat16, {int64_t{1} << 50, 2});
  model.Node("Transpose", {"x"}, {"t"}, {IntsAttr("perm", {1, 0, 8})});
  model.Node("Relu", {"huge"}, {"r"});
  model.Initializer("target", kInt64, {2}, {int64_t{1} << 62, int64_t{1} << 62});
  model.Node("Reshape", {"x", "target"}, {"y"});
  model.Output("t", kFloat16, 3).Output("r", kFloat16, 2).Output("y", kFloat16, 2);
  const auto facts = PropagateShapes(model.model().graph(), 17, {});
  EXPECT_THAT(DimsOf(facts, "t"), ElementsAre(-1));
  EXPECT_THAT(DimsOf(facts, "r"), ElementsAre(-1));
  EXPECT_THAT(DimsOf(facts, "y"), ElementsAre(-1));
}

// On trusted models, every tensor whose shape ONNX's InferShapes knows gets
// the same dims from the propagation.
class AgreesWithOnnxTest : public ::testing::TestWithParam<const char*> {};

TEST_P(AgreesWithOnnxTest, EveryShapeOnnxKnowsIsTheSame) {
  const std::string path = std::string(NPU_TEST_DATA_DIR) + "/onnx/" + GetParam() + ".onnx";
  std::ifstream file(path, std::ios::binary);
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromIstream(&file)) << path;
  const Gear gear = {{"batch", 2}, {"seq", 77}};
  const auto facts = PropagateShapes(model.graph(), 17, gear);
  for (onnx::ValueInfoProto& input : *model.mutable_graph()->mutable_input()) {
    for (auto& dim : *input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (dim.dim_param() == "batch") dim.set_dim_value(2);
      if (dim.dim_param() == "seq") dim.set_dim_value(77);
    }
  }
  onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                     onnx::ShapeInferenceOptions(false, 0, true));
  int compared = 0;
  for (const onnx::ValueInfoProto& value : model.graph().value_info()) {
    std::vector<int64_t> onnx_dims;
    bool known = value.type().tensor_type().has_shape();
    for (const auto& dim : value.type().tensor_type().shape().dim()) {
      known = known && dim.has_dim_value();
      onnx_dims.push_back(dim.dim_value());
    }
    if (!known) continue;
    EXPECT_EQ(DimsOf(facts, value.name()), onnx_dims) << value.name();
    ++compared;
  }
  EXPECT_GT(compared, 10);
}

INSTANTIATE_TEST_SUITE_P(Models, AgreesWithOnnxTest,
                         ::testing::Values("vit_b_16", "swin_t", "resnet50", "encoder_llama3_8b",
                                           "encoder_qwen2_7b"));

}  // namespace
}  // namespace npu::graph

namespace npu::graph {
namespace {

using ::npu::testing::GraphAttr;
using ::npu::testing::IntAttr;
using ::npu::testing::IntsAttr;
using ::npu::testing::kFloat;
using ::npu::testing::kFloat16;
using ::npu::testing::kInt64;
using ::npu::testing::kInt8;
using ::npu::testing::OnnxBuilder;
using ::npu::testing::StringAttr;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const TensorFacts& FactsOf(const std::unordered_map<std::string, TensorFacts>& facts,
                           const std::string& name) {
  static const TensorFacts kNone;
  auto it = facts.find(name);
  return it == facts.end() ? kNone : it->second;
}

TEST(PropagateShapesQuantTest, QuantizationOpsKeepTheShapeAndSetTheirTypes) {
  OnnxBuilder model;
  model.Input("x", kFloat, {"b", 16, 64}).Input("s", kFloat, {});
  model.Initializer("zp", kInt8, {});
  model.Node("QuantizeLinear", {"x", "s", "zp"}, {"q"});
  model.Node("DequantizeLinear", {"q", "s", "zp"}, {"dq"});
  model.Node("DynamicQuantizeLinear", {"dq"}, {"d", "d_scale", "d_zp"});
  model.Input("w", kInt8, {64, 32});
  model.Node("MatMulInteger", {"d", "w", "d_zp"}, {"y"});
  model.Output("y", onnx::TensorProto_DataType_INT32, 3);
  const auto facts = PropagateShapes(model.model().graph(), 17, {{"b", 2}});
  EXPECT_THAT(*FactsOf(facts, "q").dims, ElementsAre(2, 16, 64));
  EXPECT_EQ(FactsOf(facts, "q").elem_type, kInt8);
  EXPECT_EQ(FactsOf(facts, "dq").elem_type, kFloat);
  EXPECT_EQ(FactsOf(facts, "d").elem_type, onnx::TensorProto_DataType_UINT8);
  EXPECT_THAT(*FactsOf(facts, "d_scale").dims, ElementsAre());
  EXPECT_THAT(*FactsOf(facts, "y").dims, ElementsAre(2, 16, 32));
  EXPECT_EQ(FactsOf(facts, "y").elem_type, onnx::TensorProto_DataType_INT32);
}

TEST(PropagateShapesQuantTest, EinsumOutputFollowsItsLetters) {
  OnnxBuilder model;
  model.Input("q", kFloat16, {"b", "s", 16, 128}).Input("w", kFloat16, {16, 128, 512});
  model.Node("Einsum", {"q", "w"}, {"y"}, {StringAttr("equation", "bshd,hdc->bshc")});
  model.Output("y", kFloat16, 4);
  const auto facts = PropagateShapes(model.model().graph(), 17, {{"b", 2}, {"s", 7}});
  EXPECT_THAT(*FactsOf(facts, "y").dims, ElementsAre(2, 7, 16, 512));
}

// torch's export of squeeze(dim) of a dynamic dim: If(dim == 1, Squeeze,
// Identity).
OnnxBuilder SqueezeIf(const std::string& cond_source) {
  OnnxBuilder then_branch;
  then_branch.Initializer("axes", kInt64, {1}, {1});
  then_branch.Node("Squeeze", {"x", "axes"}, {"squeezed"});
  then_branch.Output("squeezed", kFloat16);
  OnnxBuilder else_branch;
  else_branch.Node("Identity", {"x"}, {"same"});
  else_branch.Output("same", kFloat16);
  OnnxBuilder model;
  model.Input("x", kFloat16, {4, "t", 64});
  model.Initializer("one", kInt64, {}, {1});
  model.Initializer("index", kInt64, {}, {1});
  if (cond_source == "shape") {
    model.Node("Shape", {"x"}, {"shape"});
    model.Node("Gather", {"shape", "index"}, {"dim"}, {IntAttr("axis", 0)});
  } else {
    model.Input("dim", kInt64, {});
  }
  model.Node("Equal", {"dim", "one"}, {"cond"});
  model.Node("If", {"cond"}, {"y"},
             {GraphAttr("then_branch", then_branch.graph()),
              GraphAttr("else_branch", else_branch.graph())},
             "squeeze_if");
  model.Output("y", kFloat16);
  return model;
}

TEST(PropagateShapesQuantTest, IfTakesTheBranchTheGearDecides) {
  const OnnxBuilder model = SqueezeIf("shape");
  const auto squeezed = PropagateShapes(model.model().graph(), 17, {{"t", 1}});
  EXPECT_THAT(*FactsOf(squeezed, "y").dims, ElementsAre(4, 64));
  const auto kept = PropagateShapes(model.model().graph(), 17, {{"t", 9}});
  EXPECT_THAT(*FactsOf(kept, "y").dims, ElementsAre(4, 9, 64));
}

TEST(PropagateShapesQuantTest, AnUndecidedIfIsTheNamedCause) {
  const OnnxBuilder model = SqueezeIf("input");
  const auto facts = PropagateShapes(model.model().graph(), 17, {{"t", 9}});
  EXPECT_FALSE(FactsOf(facts, "y").dims.has_value());
  EXPECT_THAT(FactsOf(facts, "y").unknown_cause, HasSubstr("If 'squeeze_if'"));
  EXPECT_THAT(FactsOf(facts, "y").unknown_cause, HasSubstr("condition 'cond'"));
}

TEST(PropagateShapesQuantTest, AFailedBroadcastIsTheRootCauseDownstream) {
  // A sequence longer than the position table: the Add fails, and every
  // tensor after it names the Add.
  OnnxBuilder model;
  model.Input("x", kFloat16, {1, "seq", 64}).Input("pos", kFloat16, {1, 1024, 64});
  model.Input("w", kFloat16, {64, 64});
  model.Node("Add", {"x", "pos"}, {"h"}, {}, "pos_add");
  model.Node("Relu", {"h"}, {"r"});
  model.Node("MatMul", {"r", "w"}, {"y"}).Output("y", kFloat16, 3);
  const auto facts = PropagateShapes(model.model().graph(), 17, {{"seq", 2048}});
  EXPECT_THAT(FactsOf(facts, "r").unknown_cause, HasSubstr("Add 'pos_add'"));
  EXPECT_THAT(FactsOf(facts, "y").unknown_cause,
              HasSubstr("broadcast of [1, 2048, 64] against [1, 1024, 64] fails"));
}

TEST(PropagateShapesQuantTest, NonZeroIsNamedAsDataDependent) {
  OnnxBuilder model;
  model.Input("router", kFloat16, {64, 8}).Input("x", kFloat16, {64, 256});
  model.Node("NonZero", {"router"}, {"nz"}, {}, "route");
  model.Initializer("zero", kInt64, {}, {0});
  model.Node("Gather", {"nz", "zero"}, {"rows"}, {IntAttr("axis", 0)});
  model.Node("Gather", {"x", "rows"}, {"tokens"}, {IntAttr("axis", 0)});
  model.Initializer("shape", kInt64, {2}, {-1, 256});
  model.Node("Reshape", {"tokens", "shape"}, {"expert_in"});
  model.Output("expert_in", kFloat16, 2);
  const auto facts = PropagateShapes(model.model().graph(), 17, {});
  EXPECT_THAT(FactsOf(facts, "expert_in").unknown_cause, HasSubstr("NonZero 'route'"));
  EXPECT_THAT(FactsOf(facts, "expert_in").unknown_cause, HasSubstr("data-dependent"));
}

// The router of a torch MoE block: logits, top-k, the one-hot mask of the
// chosen experts, and one expert's slice of it.
OnnxBuilder RoutedExpert() {
  OnnxBuilder model;
  model.Input("x", kFloat16, {"tokens", 64}).Input("gate", kFloat16, {64, 8});
  model.Node("MatMul", {"x", "gate"}, {"logits"}, {}, "router");
  model.Initializer("k", kInt64, {1}, {2});
  model.Node("TopK", {"logits", "k"}, {"weights", "chosen"}, {IntAttr("axis", -1)}, "topk");
  model.Initializer("depth", kInt64, {}, {8}).Initializer("on_off", kInt64, {2}, {0, 1});
  model.Node("OneHot", {"chosen", "depth", "on_off"}, {"mask"}, {}, "one_hot");
  model.Node("Transpose", {"mask"}, {"by_expert"}, {IntsAttr("perm", {2, 1, 0})});
  model.Initializer("expert", kInt64, {}, {3});
  model.Node("Gather", {"by_expert", "expert"}, {"mask_e"}, {IntAttr("axis", 0)});
  model.Node("NonZero", {"mask_e"}, {"hits"}, {}, "where_e");
  model.Initializer("one", kInt64, {}, {1});
  model.Node("Gather", {"hits", "one"}, {"token"}, {IntAttr("axis", 0)});
  model.Node("Gather", {"x", "token"}, {"rows"}, {IntAttr("axis", 0)});
  model.Node("ArgMax", {"logits"}, {"top1"}, {IntAttr("axis", 1), IntAttr("keepdims", 0)});
  model.Output("rows", kFloat16, 2).Output("weights", kFloat16, 2).Output("top1", kInt64, 1);
  return model;
}

TEST(PropagateShapesMoeTest, TopKOneHotAndArgMaxFollowTheRouter) {
  const auto facts = PropagateShapes(RoutedExpert().model().graph(), 17, {{"tokens", 32}});
  EXPECT_THAT(DimsOf(facts, "weights"), ElementsAre(32, 2));
  EXPECT_THAT(DimsOf(facts, "chosen"), ElementsAre(32, 2));
  EXPECT_EQ(FactsOf(facts, "chosen").elem_type, kInt64);
  EXPECT_EQ(FactsOf(facts, "weights").elem_type, kFloat16);
  EXPECT_THAT(DimsOf(facts, "mask"), ElementsAre(32, 2, 8));
  EXPECT_THAT(DimsOf(facts, "mask_e"), ElementsAre(2, 32));
  EXPECT_THAT(DimsOf(facts, "top1"), ElementsAre(32));
}

TEST(PropagateShapesMoeTest, AnExpertsRowsNameTheRouterAndTheMoeLoop) {
  const auto facts = PropagateShapes(RoutedExpert().model().graph(), 17, {{"tokens", 32}});
  const TensorFacts& rows = FactsOf(facts, "rows");
  EXPECT_FALSE(rows.dims.has_value());
  EXPECT_TRUE(rows.expert_rows);
  EXPECT_THAT(rows.unknown_cause, HasSubstr("NonZero 'where_e'"));
  EXPECT_THAT(rows.unknown_cause,
              HasSubstr("rows per expert depend on the router's choice at run time (MoE expert "
                        "loop: TopK 'topk' chooses each token's experts)"));
}

TEST(PropagateShapesMoeTest, ANonZeroOfFloatsAfterTheRouterIsNotAnExpertsRows) {
  // The router's float scores are not its choice: a NonZero of them is
  // data-dependent, but not an expert's share of the tokens.
  OnnxBuilder model;
  model.Input("x", kFloat16, {32, 64}).Input("gate", kFloat16, {64, 8});
  model.Node("MatMul", {"x", "gate"}, {"logits"}, {}, "router");
  model.Initializer("k", kInt64, {1}, {2});
  model.Node("TopK", {"logits", "k"}, {"weights", "chosen"}, {}, "topk");
  model.Node("NonZero", {"weights"}, {"hits"}, {}, "where_w").Output("hits", kInt64, 2);
  const auto facts = PropagateShapes(model.model().graph(), 17, {});
  EXPECT_FALSE(FactsOf(facts, "hits").expert_rows);
  EXPECT_THAT(FactsOf(facts, "hits").unknown_cause, HasSubstr("data-dependent"));
}

TEST(PropagateShapesMoeTest, MoeAndQMoeKeepTheInputsShape) {
  for (const char* op : {"MoE", "QMoE"}) {
    OnnxBuilder model;
    model.Input("x", kFloat16, {"batch", "seq", 64}).Input("probs", kFloat16, {"tokens", 8});
    model.Input("fc1", kFloat16, {8, 128, 64}).Input("fc2", kFloat16, {8, 64, 128});
    model.Node(op, {"x", "probs", "fc1", "", "fc2"}, {"y"}, {IntAttr("k", 2)}, "moe")
        .InDomain("com.microsoft");
    model.Output("y", kFloat16, 3);
    const auto facts = PropagateShapes(model.model().graph(), 17, {{"batch", 2}, {"seq", 16}});
    EXPECT_THAT(DimsOf(facts, "y"), ElementsAre(2, 16, 64)) << op;
    EXPECT_EQ(FactsOf(facts, "y").elem_type, kFloat16) << op;
  }
}

}  // namespace
}  // namespace npu::graph
