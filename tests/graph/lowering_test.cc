#include "server/graph/lowering.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testing/onnx_builder.h"
#include "tests/testing/status_matchers.h"

namespace npu::graph {
namespace {

namespace tl = ::npu::tiling;
using ::npu::testing::FloatAttr;
using ::npu::testing::IntAttr;
using ::npu::testing::IntsAttr;
using ::npu::testing::IsOk;
using ::npu::testing::kBFloat16;
using ::npu::testing::kDouble;
using ::npu::testing::kFloat;
using ::npu::testing::kFloat16;
using ::npu::testing::kInt64;
using ::npu::testing::kInt8;
using ::npu::testing::OnnxBuilder;
using ::npu::testing::StringAttr;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<LoweredNode> Lower(const OnnxBuilder& model, const Gear& gear = {},
                               const LoweringOptions& options = {}) {
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(model.model(), gear, options);
  EXPECT_THAT(nodes, IsOk());
  return nodes.ok() ? *nodes : std::vector<LoweredNode>();
}

TEST(LowerGraphTest, MatMulWithA2DBFoldsABatchIntoM) {
  OnnxBuilder model;
  model.Input("x", kFloat16, {"batch", "seq", 768}).Input("w", kFloat16, {768, 3072});
  model.Node("MatMul", {"x", "w"}, {"y"}, {}, "fc").Output("y", kFloat16);
  const std::vector<LoweredNode> nodes = Lower(model, {{"batch", 2}, {"seq", 197}});
  ASSERT_EQ(nodes.size(), 1u);
  const LoweredNode& node = nodes[0];
  EXPECT_EQ(node.status, NodeStatus::kOk) << node.reason;
  EXPECT_EQ(node.name, "fc");
  EXPECT_EQ(node.problem.op, tl::MatmulOp::kMatMulV3);
  EXPECT_EQ(node.problem.m, 2 * 197);
  EXPECT_EQ(node.problem.k, 768);
  EXPECT_EQ(node.problem.n, 3072);
  EXPECT_EQ(node.problem.dtype_a, tl::DataType::kFloat16);
  EXPECT_EQ(node.problem.dtype_c, tl::DataType::kFloat16);
  EXPECT_TRUE(node.derivation.folded_batch);
  EXPECT_TRUE(node.problem.batch.a.empty());
}

TEST(LowerGraphTest, BatchedBIsBatchMatMulV3WithBothBatches) {
  OnnxBuilder model;
  model.Input("q", kBFloat16, {2, 12, 197, 64}).Input("k", kBFloat16, {1, 12, 64, 197});
  model.Node("MatMul", {"q", "k"}, {"s"}).Output("s", kBFloat16);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  const tl::MatmulProblem& problem = nodes[0].problem;
  EXPECT_EQ(problem.op, tl::MatmulOp::kBatchMatMulV3);
  EXPECT_THAT(problem.batch.a, ElementsAre(2, 12));
  EXPECT_THAT(problem.batch.b, ElementsAre(1, 12));
  EXPECT_EQ(problem.m, 197);
  EXPECT_EQ(problem.k, 64);
  EXPECT_EQ(problem.n, 197);
  EXPECT_EQ(problem.dtype_a, tl::DataType::kBFloat16);
}

TEST(LowerGraphTest, VectorOperandsArePromotedAsNumPyDoes) {
  OnnxBuilder model;
  model.Input("v", kFloat16, {64}).Input("w", kFloat16, {64, 32}).Input("u", kFloat16, {32});
  model.Node("MatMul", {"v", "w"}, {"y"}).Node("MatMul", {"w", "u"}, {"z"});
  model.Output("y", kFloat16).Output("z", kFloat16);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_TRUE(nodes[0].derivation.promoted_a);
  EXPECT_EQ(nodes[0].problem.m, 1);
  EXPECT_EQ(nodes[0].problem.n, 32);
  EXPECT_TRUE(nodes[1].derivation.promoted_b);
  EXPECT_EQ(nodes[1].problem.m, 64);
  EXPECT_EQ(nodes[1].problem.k, 32);
  EXPECT_EQ(nodes[1].problem.n, 1);
}

TEST(LowerGraphTest, TransposeOfTheLastTwoDimsBecomesTheFlag) {
  OnnxBuilder model;
  model.Input("a", kFloat16, {8, 64, 128}).Input("b", kFloat16, {8, 256, 64});
  model.Node("Transpose", {"b"}, {"bt"}, {IntsAttr("perm", {0, 2, 1})}, "t_b");
  model.Node("MatMul", {"a", "bt"}, {"c"}).Output("c", kFloat16);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  // a is [8, 64, 128] x bt [8, 128, 256]? No: a's k is 128 but bt is
  // [8, 64, 256], so k disagrees.
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);

  OnnxBuilder fits;
  fits.Input("a", kFloat16, {8, 64, 128}).Input("b", kFloat16, {8, 256, 128});
  fits.Node("Transpose", {"b"}, {"bt"}, {IntsAttr("perm", {0, 2, 1})}, "t_b");
  fits.Node("MatMul", {"a", "bt"}, {"c"}).Output("c", kFloat16);
  const std::vector<LoweredNode> lowered = Lower(fits);
  ASSERT_EQ(lowered.size(), 1u);
  EXPECT_EQ(lowered[0].status, NodeStatus::kOk) << lowered[0].reason;
  EXPECT_TRUE(lowered[0].problem.trans_b);
  EXPECT_FALSE(lowered[0].problem.trans_a);
  EXPECT_EQ(lowered[0].problem.n, 256);
  EXPECT_EQ(lowered[0].problem.k, 128);
  EXPECT_THAT(lowered[0].derivation.absorbed_transposes, ElementsAre("t_b"));
}

TEST(LowerGraphTest, TransposeWithAnotherReaderOrAnotherPermStays) {
  OnnxBuilder model;
  model.Input("a", kFloat16, {64, 128}).Input("b", kFloat16, {256, 128});
  model.Node("Transpose", {"b"}, {"bt"}, {IntsAttr("perm", {1, 0})});
  model.Node("MatMul", {"a", "bt"}, {"c"}).Node("Relu", {"bt"}, {"r"});
  model.Output("c", kFloat16).Output("r", kFloat16);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_FALSE(nodes[0].problem.trans_b);
  EXPECT_THAT(nodes[0].derivation.absorbed_transposes, IsEmpty());
}

TEST(LowerGraphTest, TransposedBatchedAIsNotFolded) {
  OnnxBuilder model;
  model.Input("a", kFloat16, {4, 128, 64}).Input("w", kFloat16, {128, 32});
  model.Node("Transpose", {"a"}, {"at"}, {IntsAttr("perm", {0, 2, 1})});
  model.Node("MatMul", {"at", "w"}, {"c"}).Output("c", kFloat16);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kBatchMatMulV3);
  EXPECT_TRUE(nodes[0].problem.trans_a);
  EXPECT_THAT(nodes[0].problem.batch.a, ElementsAre(4));
  EXPECT_THAT(nodes[0].problem.batch.b, IsEmpty());
  EXPECT_FALSE(nodes[0].derivation.folded_batch);
}

TEST(LowerGraphTest, SingleReaderAddOfARowIsTheBias) {
  OnnxBuilder model;
  model.Input("x", kFloat, {32, 64}).Input("w", kFloat, {64, 128}).Input("b", kFloat, {128});
  model.Node("MatMul", {"x", "w"}, {"y"}).Node("Add", {"b", "y"}, {"z"}, {}, "bias_add");
  model.Output("z", kFloat);
  LoweringOptions half;
  half.compute_dtype = tl::DataType::kFloat16;
  const std::vector<LoweredNode> nodes = Lower(model, {}, half);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_TRUE(nodes[0].problem.has_bias);
  EXPECT_EQ(nodes[0].problem.dtype_bias, tl::DataType::kFloat16);
  EXPECT_EQ(nodes[0].derivation.fused_bias, "bias_add");
}

TEST(LowerGraphTest, AddOfAMatrixIsNotABias) {
  OnnxBuilder model;
  model.Input("x", kFloat16, {32, 64})
      .Input("w", kFloat16, {64, 128})
      .Input("r", kFloat16, {32, 128});
  model.Node("MatMul", {"x", "w"}, {"y"}).Node("Add", {"y", "r"}, {"z"});
  model.Output("z", kFloat16);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_FALSE(nodes[0].problem.has_bias);
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kMatMulV3);
}

TEST(LowerGraphTest, GemmFlagsAndRowCAreTheProblemsTransposesAndBias) {
  OnnxBuilder model;
  model.Input("a", kFloat, {64, 32}).Input("b", kFloat, {128, 64}).Input("c", kFloat, {1, 128});
  model.Node("Gemm", {"a", "b", "c"}, {"y"}, {IntAttr("transA", 1), IntAttr("transB", 1)});
  model.Output("y", kFloat);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  const tl::MatmulProblem& problem = nodes[0].problem;
  EXPECT_EQ(nodes[0].status, NodeStatus::kOk) << nodes[0].reason;
  EXPECT_EQ(problem.m, 32);
  EXPECT_EQ(problem.k, 64);
  EXPECT_EQ(problem.n, 128);
  EXPECT_TRUE(problem.trans_a);
  EXPECT_TRUE(problem.trans_b);
  EXPECT_TRUE(problem.has_bias);
  EXPECT_EQ(problem.dtype_a, tl::DataType::kFloat32);
}

TEST(LowerGraphTest, GemmMatrixCIsAddedSeparatelyUnlessFused) {
  OnnxBuilder model;
  model.Input("a", kFloat16, {64, 32})
      .Input("b", kFloat16, {32, 128})
      .Input("c", kFloat16, {64, 128});
  model.Node("Gemm", {"a", "b", "c"}, {"y"}).Output("y", kFloat16);
  std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_FALSE(nodes[0].problem.has_bias);
  ASSERT_EQ(nodes[0].derivation.notes.size(), 1u);
  EXPECT_THAT(nodes[0].derivation.notes[0], HasSubstr("is not a bias row"));
  LoweringOptions fuse;
  fuse.fuse_epilogues = true;
  nodes = Lower(model, {}, fuse);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kFusedMatMul);
  EXPECT_EQ(nodes[0].problem.fused.op, tl::FusedOp::kAdd);
}

TEST(LowerGraphTest, GemmScaleFactorsAreUnsupported) {
  OnnxBuilder model;
  model.Input("a", kFloat, {8, 8}).Input("b", kFloat, {8, 8});
  model.Node("Gemm", {"a", "b"}, {"y"}, {FloatAttr("alpha", 0.5f)}).Output("y", kFloat);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(nodes[0].reason, HasSubstr("alpha=0.5"));
}

TEST(LowerGraphTest, EinsumOfABatchMatmulLowersAndOthersAreUnsupported) {
  OnnxBuilder model;
  model.Input("a", kFloat16, {4, 32, 16}).Input("b", kFloat16, {4, 64, 16});
  model.Node("Einsum", {"a", "b"}, {"c"}, {StringAttr("equation", "bmk, bnk -> bmn")});
  model.Node("Einsum", {"a"}, {"d"}, {StringAttr("equation", "bij->bji")});
  model.Output("c", kFloat16).Output("d", kFloat16);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kOk) << nodes[0].reason;
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kBatchMatMulV3);
  EXPECT_TRUE(nodes[0].problem.trans_b);
  EXPECT_EQ(nodes[0].problem.n, 64);
  EXPECT_EQ(nodes[1].status, NodeStatus::kUnsupported);
  EXPECT_THAT(nodes[1].reason, HasSubstr("is not a batch matmul"));
}

TEST(LowerGraphTest, QuantizedMatmulsAreListedUnsupportedWithTheirOperator) {
  OnnxBuilder model;
  model.Input("a", kInt8, {16, 32}).Input("b", kInt8, {32, 8});
  model.Node("MatMulInteger", {"a", "b"}, {"c"}).Output("c", onnx::TensorProto_DataType_INT32);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(nodes[0].reason, HasSubstr("QuantBatchMatmulV3"));
}

TEST(LowerGraphTest, DequantizedInputsAreAQuantizedMatmul) {
  OnnxBuilder model;
  model.Input("q", kInt8, {16, 32}).Input("scale", kFloat, {}).Input("w", kFloat, {32, 8});
  model.Node("DequantizeLinear", {"q", "scale"}, {"x"}, {}, "dq");
  model.Node("MatMul", {"x", "w"}, {"y"}).Output("y", kFloat);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(nodes[0].reason, HasSubstr("DequantizeLinear 'dq'"));
}

TEST(LowerGraphTest, UnsupportedDtypeAndUnknownDimsAreNamed) {
  OnnxBuilder model;
  model.Input("a", kDouble, {4, 4}).Input("b", kDouble, {4, 4});
  model.Input("x", kFloat16, {"seq", 64}).Input("w", kFloat16, {64, 64});
  model.Node("MatMul", {"a", "b"}, {"c"}).Node("MatMul", {"x", "w"}, {"y"});
  model.Output("c", kDouble).Output("y", kFloat16);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(nodes[0].reason, HasSubstr("DOUBLE"));
  EXPECT_EQ(nodes[1].status, NodeStatus::kUnresolved);
  EXPECT_THAT(nodes[1].reason, HasSubstr("dim 'seq'"));
}

TEST(LowerGraphTest, ComputeDtypeRunsFloat32InHalf) {
  OnnxBuilder model;
  model.Input("x", kFloat, {32, 64}).Input("w", kFloat, {64, 128});
  model.Node("MatMul", {"x", "w"}, {"y"}).Output("y", kFloat);
  LoweringOptions options;
  options.compute_dtype = tl::DataType::kBFloat16;
  const std::vector<LoweredNode> nodes = Lower(model, {}, options);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].problem.dtype_a, tl::DataType::kBFloat16);
  EXPECT_EQ(nodes[0].problem.dtype_c, tl::DataType::kBFloat16);
  EXPECT_TRUE(nodes[0].derivation.compute_dtype_applied);
}

TEST(LowerGraphTest, ShapesFollowTheExportersReshapeArithmetic) {
  // torch's head split: the target shape [batch, -1, 12, 64] is built from
  // Shape / Gather / Concat of the activation, which ONNX's inference does
  // not follow past the Reshape.
  OnnxBuilder model;
  model.Input("x", kFloat16, {"batch", 197, 768});
  model.Initializer("zero", kInt64, {1}, {0}).Initializer("rest", kInt64, {3}, {-1, 12, 64});
  model.Node("Shape", {"x"}, {"shape"}).Node("Gather", {"shape", "zero"}, {"b"});
  model.Node("Concat", {"b", "rest"}, {"target"}, {IntAttr("axis", 0)});
  model.Node("Reshape", {"x", "target"}, {"split"});
  model.Node("Transpose", {"split"}, {"q"}, {IntsAttr("perm", {0, 2, 1, 3})});
  model.Node("Transpose", {"split"}, {"kt"}, {IntsAttr("perm", {0, 2, 3, 1})});
  model.Node("MatMul", {"q", "kt"}, {"scores"}).Output("scores", kFloat16, 4);
  const std::vector<LoweredNode> nodes = Lower(model, {{"batch", 2}});
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kOk) << nodes[0].reason;
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kBatchMatMulV3);
  EXPECT_THAT(nodes[0].problem.batch.a, ElementsAre(2, 12));
  EXPECT_THAT(nodes[0].problem.batch.b, ElementsAre(2, 12));
  EXPECT_EQ(nodes[0].problem.m, 197);
  EXPECT_EQ(nodes[0].problem.k, 64);
  EXPECT_EQ(nodes[0].problem.n, 197);
}

TEST(LowerGraphTest, FusesReluAndTheErfGeluSubgraph) {
  OnnxBuilder model;
  model.Input("x", kFloat16, {256, 512}).Input("w1", kFloat16, {512, 1024});
  model.Input("w2", kFloat16, {1024, 512});
  model.Node("MatMul", {"x", "w1"}, {"h"}, {}, "fc1");
  // GELU as torch 1.13 exports it: x * (erf(x / sqrt 2) + 1) * 0.5.
  model.Initializer("sqrt2", kFloat16, {}).Initializer("one", kFloat16, {});
  model.Initializer("half", kFloat16, {});
  model.Node("Div", {"h", "sqrt2"}, {"d"}).Node("Erf", {"d"}, {"e"});
  model.Node("Add", {"e", "one"}, {"p"}).Node("Mul", {"h", "p"}, {"q"});
  model.Node("Mul", {"q", "half"}, {"g"});
  model.Node("MatMul", {"g", "w2"}, {"o"}, {}, "fc2").Node("Relu", {"o"}, {"r"}, {}, "relu");
  model.Output("r", kFloat16);
  LoweringOptions fuse;
  fuse.fuse_epilogues = true;
  const std::vector<LoweredNode> nodes = Lower(model, {}, fuse);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kFusedMatMul);
  EXPECT_EQ(nodes[0].problem.fused.op, tl::FusedOp::kGeluErf);
  EXPECT_EQ(nodes[0].derivation.fused_epilogue.size(), 5u);
  EXPECT_EQ(nodes[1].problem.fused.op, tl::FusedOp::kRelu);
  EXPECT_THAT(nodes[1].derivation.fused_epilogue, ElementsAre("relu"));
  // Without the option, plain matmuls.
  const std::vector<LoweredNode> plain = Lower(model);
  EXPECT_EQ(plain[0].problem.op, tl::MatmulOp::kMatMulV3);
  EXPECT_EQ(plain[1].problem.op, tl::MatmulOp::kMatMulV3);
}

TEST(LowerGraphTest, FusesTheTanhGeluSubgraph) {
  // GELU's tanh approximation as exporters write it:
  // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
  OnnxBuilder model;
  model.Input("x", kFloat16, {128, 256}).Input("w", kFloat16, {256, 512});
  model.Initializer("three", kFloat16, {}).Initializer("c", kFloat16, {});
  model.Initializer("s", kFloat16, {}).Initializer("one", kFloat16, {});
  model.Initializer("half", kFloat16, {});
  model.Node("MatMul", {"x", "w"}, {"h"}, {}, "fc");
  model.Node("Pow", {"h", "three"}, {"cube"}).Node("Mul", {"cube", "c"}, {"scaled"});
  model.Node("Add", {"h", "scaled"}, {"inner"}).Node("Mul", {"inner", "s"}, {"arg"});
  model.Node("Tanh", {"arg"}, {"t"}).Node("Add", {"t", "one"}, {"p"});
  model.Node("Mul", {"h", "p"}, {"q"}).Node("Mul", {"q", "half"}, {"g"});
  model.Output("g", kFloat16);
  LoweringOptions fuse;
  fuse.fuse_epilogues = true;
  const std::vector<LoweredNode> nodes = Lower(model, {}, fuse);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kFusedMatMul);
  EXPECT_EQ(nodes[0].problem.fused.op, tl::FusedOp::kGeluTanh);
  EXPECT_EQ(nodes[0].derivation.fused_epilogue.size(), 8u);
}

TEST(LowerGraphTest, AnErfThatIsNotAGeluIsNotFused) {
  // erf(h) read on its own: no multiplication by h, so not a GELU.
  OnnxBuilder model;
  model.Input("x", kFloat16, {128, 256}).Input("w", kFloat16, {256, 512});
  model.Node("MatMul", {"x", "w"}, {"h"}).Node("Erf", {"h"}, {"e"});
  model.Output("e", kFloat16);
  LoweringOptions fuse;
  fuse.fuse_epilogues = true;
  const std::vector<LoweredNode> nodes = Lower(model, {}, fuse);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kMatMulV3);
  EXPECT_THAT(nodes[0].derivation.fused_epilogue, IsEmpty());
}

}  // namespace
}  // namespace npu::graph
