// The quantized forms of the lowering (quant_lowering.h, lowering.h): a
// quantized node is never a float answer, with or without the value_info
// ONNX's shape inference writes; each form becomes its CANN operator or an
// UNSUPPORTED naming why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/graph/lowering.h"
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
using ::npu::testing::kFloat;
using ::npu::testing::kFloat16;
using ::npu::testing::kInt32;
using ::npu::testing::kInt8;
using ::npu::testing::kUint8;
using ::npu::testing::OnnxBuilder;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kM = 64, kK = 256, kN = 512;

std::vector<LoweredNode> Lower(const OnnxBuilder& model, const LoweringOptions& options = {}) {
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(model.model(), {}, options);
  EXPECT_THAT(nodes, IsOk());
  return nodes.ok() ? *nodes : std::vector<LoweredNode>();
}

// x [m, k] float through a symmetric int8 QDQ pair, as torch's fake-quant
// export writes an activation: x -> QuantizeLinear -> DequantizeLinear.
void QdqActivation(OnnxBuilder& model, int32_t codes = kInt8, int64_t zero_point = 0) {
  model.Input("x", kFloat, {kM, kK}).Input("s_x", kFloat, {});
  model.Initializer("zp_x", codes, {}, {zero_point});
  model.Node("QuantizeLinear", {"x", "s_x", "zp_x"}, {"x_q"}, {}, "q_x");
  model.Node("DequantizeLinear", {"x_q", "s_x", "zp_x"}, {"x_dq"}, {}, "dq_x");
}

// A torch Linear weight [n, k] int8 with a per-channel scale, dequantized.
void DequantizedWeight(OnnxBuilder& model, int64_t zero_point = 0) {
  model.Input("w_q", kInt8, {kN, kK}).Input("s_w", kFloat, {kN});
  model.Initializer("zp_w", kInt8, {kN}, std::vector<int64_t>(kN, zero_point));
  model.Node("DequantizeLinear", {"w_q", "s_w", "zp_w"}, {"w_dq"}, {IntAttr("axis", 0)}, "dq_w");
}

void ValueInfos(OnnxBuilder& model) {
  model.ValueInfo("x_dq", kFloat, {kM, kK}).ValueInfo("w_dq", kFloat, {kN, kK});
  model.ValueInfo("w_t", kFloat, {kK, kN}).ValueInfo("y", kFloat, {kM, kN});
}

class QuantFormTest : public ::testing::TestWithParam<bool> {
 protected:
  bool with_value_info() const { return GetParam(); }
};

TEST_P(QuantFormTest, WeightOnlyDequantizeThroughTransposeIsWeightQuantBatchMatmulV2) {
  OnnxBuilder model;
  model.Input("x", kFloat, {kM, kK});
  DequantizedWeight(model);
  model.Node("Transpose", {"w_dq"}, {"w_t"}, {IntsAttr("perm", {1, 0})}, "t_w");
  model.Node("MatMul", {"x", "w_t"}, {"y"}, {}, "fc").Output("y", kFloat);
  if (with_value_info()) ValueInfos(model);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  const LoweredNode& node = nodes[0];
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  const tl::MatmulProblem& problem = node.problem;
  EXPECT_EQ(problem.op, tl::MatmulOp::kWeightQuantBatchMatmulV2);
  EXPECT_EQ(problem.m, kM);
  EXPECT_EQ(problem.k, kK);
  EXPECT_EQ(problem.n, kN);
  EXPECT_TRUE(problem.trans_b);
  // A float32 x runs in float16 without a compute dtype.
  EXPECT_EQ(problem.dtype_a, tl::DataType::kFloat16);
  EXPECT_EQ(problem.dtype_b, tl::DataType::kInt8);
  EXPECT_EQ(problem.dtype_c, tl::DataType::kFloat16);
  EXPECT_TRUE(problem.quant.antiquant_scale.present);
  EXPECT_EQ(problem.quant.antiquant_scale.dtype, tl::DataType::kFloat16);
  EXPECT_THAT(problem.quant.antiquant_scale.shape, ElementsAre(kN));
  EXPECT_FALSE(problem.quant.antiquant_offset.present);
  EXPECT_FALSE(problem.quant.scale.present);
  EXPECT_THAT(node.derivation.absorbed_transposes, ElementsAre("t_w"));
  ASSERT_TRUE(node.flops.has_value());
  EXPECT_DOUBLE_EQ(*node.flops, 2.0 * kM * kK * kN);
}

TEST_P(QuantFormTest, WeightOnlyGemmTransBIsWeightQuantBatchMatmulV2) {
  OnnxBuilder model;
  model.Input("x", kFloat, {kM, kK}).Input("bias", kFloat, {kN});
  DequantizedWeight(model, 3);
  model.Node("Gemm", {"x", "w_dq", "bias"}, {"y"}, {IntAttr("transB", 1)}, "gemm");
  model.Output("y", kFloat);
  if (with_value_info()) ValueInfos(model);
  LoweringOptions bf16;
  bf16.compute_dtype = tl::DataType::kBFloat16;
  const std::vector<LoweredNode> nodes = Lower(model, bf16);
  ASSERT_EQ(nodes.size(), 1u);
  const LoweredNode& node = nodes[0];
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  EXPECT_EQ(node.problem.op, tl::MatmulOp::kWeightQuantBatchMatmulV2);
  EXPECT_TRUE(node.problem.trans_b);
  EXPECT_EQ(node.problem.dtype_a, tl::DataType::kBFloat16);
  EXPECT_TRUE(node.problem.has_bias);
  EXPECT_EQ(node.problem.dtype_bias, tl::DataType::kBFloat16);
  // A non-zero weight zero point is the antiquant offset, in the scale's shape.
  EXPECT_TRUE(node.problem.quant.antiquant_offset.present);
  EXPECT_THAT(node.problem.quant.antiquant_offset.shape, ElementsAre(kN));
}

TEST_P(QuantFormTest, WeightOnlyUint8CodesAreUnsupportedNamingTheDtype) {
  OnnxBuilder model;
  model.Input("x", kFloat, {kM, kK}).Input("w_q", kUint8, {kK, kN}).Input("s_w", kFloat, {kN});
  model.Initializer("zp_w", kUint8, {kN}, std::vector<int64_t>(kN, 128));
  model.Node("DequantizeLinear", {"w_q", "s_w", "zp_w"}, {"w_dq"}, {IntAttr("axis", 1)}, "dq_w");
  model.Node("MatMul", {"x", "w_dq"}, {"y"}).Output("y", kFloat);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(nodes[0].reason, HasSubstr("UINT8"));
  EXPECT_THAT(nodes[0].reason, HasSubstr("WeightQuantBatchMatmulV2"));
}

TEST_P(QuantFormTest, GemmWithQdqOnBothInputsIsQuantBatchMatmulV3) {
  OnnxBuilder model;
  QdqActivation(model);
  DequantizedWeight(model);
  model.Input("bias", kFloat, {kN});
  model.Node("Gemm", {"x_dq", "w_dq", "bias"}, {"y"}, {IntAttr("transB", 1)}, "gemm");
  model.Output("y", kFloat);
  if (with_value_info()) ValueInfos(model);
  LoweringOptions bf16;
  bf16.compute_dtype = tl::DataType::kBFloat16;
  const std::vector<LoweredNode> nodes = Lower(model, bf16);
  ASSERT_EQ(nodes.size(), 1u);
  const LoweredNode& node = nodes[0];
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  const tl::MatmulProblem& problem = node.problem;
  EXPECT_EQ(problem.op, tl::MatmulOp::kQuantBatchMatmulV3);
  EXPECT_EQ(problem.m, kM);
  EXPECT_EQ(problem.k, kK);
  EXPECT_EQ(problem.n, kN);
  EXPECT_TRUE(problem.trans_b);
  EXPECT_EQ(problem.dtype_a, tl::DataType::kInt8);
  EXPECT_EQ(problem.dtype_b, tl::DataType::kInt8);
  EXPECT_EQ(problem.dtype_c, tl::DataType::kBFloat16);
  // A bfloat16 y takes a float32 scale (CANN's dtype rules), s_x * s_w per channel.
  EXPECT_EQ(problem.quant.scale.dtype, tl::DataType::kFloat32);
  EXPECT_THAT(problem.quant.scale.shape, ElementsAre(kN));
  EXPECT_FALSE(problem.quant.pertoken.present);
  EXPECT_TRUE(problem.has_bias);
  EXPECT_EQ(problem.dtype_bias, tl::DataType::kFloat32);
  EXPECT_EQ(node.derivation.fused_bias, "bias");
}

TEST_P(QuantFormTest, StaticQdqMatMulWithBiasAndOutputQuantizeIsAnInt8Output) {
  OnnxBuilder model;
  QdqActivation(model);
  DequantizedWeight(model);
  model.Input("bias", kFloat, {kN}).Input("s_y", kFloat, {});
  model.Initializer("zp_y", kInt8, {}, {3});
  model.Node("Transpose", {"w_dq"}, {"w_t"}, {IntsAttr("perm", {1, 0})}, "t_w");
  model.Node("MatMul", {"x_dq", "w_t"}, {"y"}, {}, "fc");
  model.Node("Add", {"y", "bias"}, {"y_b"}, {}, "bias_add");
  model.Node("QuantizeLinear", {"y_b", "s_y", "zp_y"}, {"y_q"}, {}, "q_y");
  model.Output("y_q", kInt8);
  if (with_value_info()) ValueInfos(model);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  const LoweredNode& node = nodes[0];
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  const tl::MatmulProblem& problem = node.problem;
  EXPECT_EQ(problem.op, tl::MatmulOp::kQuantBatchMatmulV3);
  EXPECT_TRUE(problem.trans_b);
  EXPECT_EQ(problem.dtype_c, tl::DataType::kInt8);
  EXPECT_EQ(problem.quant.scale.dtype, tl::DataType::kUint64);
  EXPECT_THAT(problem.quant.scale.shape, ElementsAre(kN));
  EXPECT_TRUE(problem.has_bias);
  EXPECT_EQ(problem.dtype_bias, tl::DataType::kInt32);
  EXPECT_EQ(node.derivation.fused_bias, "bias_add");
  // y's zero point 3 is the output offset.
  EXPECT_TRUE(problem.quant.offset.present);
  EXPECT_THAT(problem.quant.offset.shape, ElementsAre(1));
  EXPECT_THAT(node.derivation.absorbed_transposes, ElementsAre("t_w"));
}

TEST_P(QuantFormTest, NonZeroZeroPointIsUnsupportedNamingIt) {
  OnnxBuilder model;
  QdqActivation(model, kInt8, 5);
  DequantizedWeight(model);
  model.Node("Transpose", {"w_dq"}, {"w_t"}, {IntsAttr("perm", {1, 0})}, "t_w");
  model.Node("MatMul", {"x_dq", "w_t"}, {"y"}, {}, "fc").Output("y", kFloat);
  if (with_value_info()) ValueInfos(model);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(nodes[0].reason, HasSubstr("zero point 'zp_x'"));
  EXPECT_THAT(nodes[0].reason, HasSubstr("is 5"));
}

TEST_P(QuantFormTest, Uint8ActivationIsUnsupportedNamingTheZeroPoint) {
  OnnxBuilder model;
  QdqActivation(model, kUint8, 128);
  DequantizedWeight(model);
  model.Node("Transpose", {"w_dq"}, {"w_t"}, {IntsAttr("perm", {1, 0})}, "t_w");
  model.Node("MatMul", {"x_dq", "w_t"}, {"y"}, {}, "fc").Output("y", kFloat);
  if (with_value_info()) ValueInfos(model);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(nodes[0].reason, HasSubstr("zero point 'zp_x'"));
}

INSTANTIATE_TEST_SUITE_P(ValueInfo, QuantFormTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "WithValueInfo" : "WithoutValueInfo";
                         });

TEST(QuantLoweringTest, DynamicQuantizationIsPerTokenQuantBatchMatmulV3) {
  // ONNX Runtime's dynamic form of a Linear on a [batch, seq, k] input.
  OnnxBuilder model;
  model.Input("x", kFloat, {2, 32, kK}).Input("w_q", kInt8, {kK, kN});
  model.Input("s_w", kFloat, {kN}).Input("bias", kFloat, {kN});
  model.Initializer("zp_w", kInt8, {kN});
  model.Node("DynamicQuantizeLinear", {"x"}, {"x_q", "x_scale", "x_zp"}, {}, "dql");
  model.Node("MatMulInteger", {"x_q", "w_q", "x_zp", "zp_w"}, {"y_i"}, {}, "mmi");
  model.Node("Cast", {"y_i"}, {"y_f"}, {IntAttr("to", kFloat)}, "cast");
  model.Node("Mul", {"x_scale", "s_w"}, {"scale"}, {}, "scale_mul");
  model.Node("Mul", {"y_f", "scale"}, {"y"}, {}, "dequant");
  model.Node("Add", {"y", "bias"}, {"z"}, {}, "bias_add").Output("z", kFloat);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  const LoweredNode& node = nodes[0];
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  const tl::MatmulProblem& problem = node.problem;
  EXPECT_EQ(problem.op, tl::MatmulOp::kQuantBatchMatmulV3);
  EXPECT_EQ(problem.m, 64);
  EXPECT_TRUE(node.derivation.folded_batch);
  EXPECT_EQ(problem.dtype_c, tl::DataType::kFloat16);
  EXPECT_TRUE(problem.quant.pertoken.present);
  EXPECT_THAT(problem.quant.pertoken.shape, ElementsAre(64));
  EXPECT_EQ(problem.quant.scale.dtype, tl::DataType::kFloat32);
  EXPECT_THAT(problem.quant.scale.shape, ElementsAre(kN));
  EXPECT_TRUE(problem.has_bias);
  EXPECT_EQ(problem.dtype_bias, tl::DataType::kFloat32);
  EXPECT_THAT(node.derivation.notes, ::testing::Contains(HasSubstr("DynamicQuant")));
}

TEST(QuantLoweringTest, MatMulIntegerWithANonZeroWeightZeroPointIsUnsupported) {
  OnnxBuilder model;
  model.Input("x", kFloat, {kM, kK}).Input("w_q", kInt8, {kK, kN}).Input("s_w", kFloat, {});
  model.Initializer("zp_w", kInt8, {}, {-2});
  model.Node("DynamicQuantizeLinear", {"x"}, {"x_q", "x_scale", "x_zp"}, {}, "dql");
  model.Node("MatMulInteger", {"x_q", "w_q", "x_zp", "zp_w"}, {"y_i"}, {}, "mmi");
  model.Node("Cast", {"y_i"}, {"y_f"}, {IntAttr("to", kFloat)});
  model.Node("Mul", {"y_f", "s_w"}, {"y"}).Output("y", kFloat);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(nodes[0].reason, HasSubstr("zero point 'zp_w'"));
}

TEST(QuantLoweringTest, QLinearMatMulIsAnInt8OutputOrUnsupportedNamingTheZeroPoint) {
  for (int64_t zero : {0, 7}) {
    OnnxBuilder model;
    model.Input("a", kInt8, {kM, kK}).Input("b", kInt8, {kK, kN});
    model.Input("sa", kFloat, {}).Input("sb", kFloat, {kN}).Input("sy", kFloat, {});
    model.Initializer("za", kInt8, {}, {zero}).Initializer("zb", kInt8, {kN});
    model.Initializer("zy", kInt8, {});
    model.Node("QLinearMatMul", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"y"}, {}, "qlm");
    model.Output("y", kInt8);
    const std::vector<LoweredNode> nodes = Lower(model);
    ASSERT_EQ(nodes.size(), 1u);
    if (zero == 0) {
      ASSERT_EQ(nodes[0].status, NodeStatus::kOk) << nodes[0].reason;
      EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kQuantBatchMatmulV3);
      EXPECT_EQ(nodes[0].problem.dtype_c, tl::DataType::kInt8);
      EXPECT_EQ(nodes[0].problem.quant.scale.dtype, tl::DataType::kUint64);
      EXPECT_THAT(nodes[0].problem.quant.scale.shape, ElementsAre(kN));
    } else {
      EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
      EXPECT_THAT(nodes[0].reason, HasSubstr("zero point 'za'"));
    }
  }
}

TEST(QuantLoweringTest, MatMulNBitsIsAPerGroupInt4WeightQuantBatchMatmulV2) {
  OnnxBuilder model;
  model.Input("x", kFloat16, {1, 16, 4096}).Input("b", kUint8, {11008, 128, 16});
  model.Input("scales", kFloat16, {11008 * 128});
  model
      .Node(
          "MatMulNBits", {"x", "b", "scales"}, {"y"},
          {IntAttr("K", 4096), IntAttr("N", 11008), IntAttr("bits", 4), IntAttr("block_size", 32)},
          "mlp.up")
      .InDomain("com.microsoft");
  model.Node("Relu", {"y"}, {"z"}).Output("z", kFloat16, 3);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  const LoweredNode& node = nodes[0];
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  EXPECT_EQ(node.problem.op, tl::MatmulOp::kWeightQuantBatchMatmulV2);
  EXPECT_EQ(node.problem.m, 16);
  EXPECT_EQ(node.problem.k, 4096);
  EXPECT_EQ(node.problem.n, 11008);
  EXPECT_EQ(node.problem.dtype_b, tl::DataType::kInt4);
  EXPECT_TRUE(node.problem.trans_b);
  EXPECT_EQ(node.problem.quant.group_size, 32);
  EXPECT_THAT(node.problem.quant.antiquant_scale.shape, ElementsAre(11008, 128));
  ASSERT_TRUE(node.flops.has_value());
  EXPECT_DOUBLE_EQ(*node.flops, 2.0 * 16 * 4096 * 11008);
}

TEST(QuantLoweringTest, MatMulNBitsOfOtherWidthsOrActOrderAreUnsupported) {
  for (int64_t bits : {3, 4}) {
    OnnxBuilder model;
    model.Input("x", kFloat16, {16, 256}).Input("b", kUint8, {64, 8, 16});
    model.Input("scales", kFloat16, {64 * 8})
        .Input("g_idx", onnx::TensorProto_DataType_INT32, {256});
    model
        .Node(
            "MatMulNBits", {"x", "b", "scales", "", bits == 4 ? "g_idx" : ""}, {"y"},
            {IntAttr("K", 256), IntAttr("N", 64), IntAttr("bits", bits), IntAttr("block_size", 32)},
            "nbits")
        .InDomain("com.microsoft");
    model.Output("y", kFloat16, 2);
    const std::vector<LoweredNode> nodes = Lower(model);
    ASSERT_EQ(nodes.size(), 1u);
    EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
    EXPECT_THAT(nodes[0].reason, HasSubstr(bits == 4 ? "g_idx" : "3-bit"));
  }
}

TEST(QuantLoweringTest, FloatMatmulsAfterAQdqPairResolve) {
  // The q.k^T of a QDQ model: both operands pass through QDQ pairs, and the
  // float matmul after them has its shapes.
  OnnxBuilder model;
  model.Input("q", kFloat, {2, 8, 128, 64}).Input("k", kFloat, {2, 8, 64, 128});
  model.Input("s", kFloat, {});
  model.Initializer("zp", kInt8, {});
  model.Node("QuantizeLinear", {"q", "s", "zp"}, {"q_q"});
  model.Node("DequantizeLinear", {"q_q", "s", "zp"}, {"q_dq"});
  model.Node("Softmax", {"q_dq"}, {"p"});
  model.Node("MatMul", {"p", "k"}, {"scores"}, {}, "scores").Output("scores", kFloat);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kOk) << nodes[0].reason;
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kBatchMatMulV3);
  EXPECT_EQ(nodes[0].problem.m, 128);
  EXPECT_EQ(nodes[0].problem.n, 128);
}

TEST(QuantLoweringTest, DequantizedActivationWithAFloatWeightIsUnsupported) {
  OnnxBuilder model;
  QdqActivation(model);
  model.Input("w", kFloat, {kK, kN});
  model.Node("MatMul", {"x_dq", "w"}, {"y"}).Output("y", kFloat);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(nodes[0].reason, HasSubstr("B is a float tensor"));
}

TEST(QuantLoweringTest, PerAxisWeightScaleAlongKIsUnsupported) {
  OnnxBuilder model;
  QdqActivation(model);
  model.Input("w_q", kInt8, {kK, kN}).Input("s_w", kFloat, {kK});
  model.Node("DequantizeLinear", {"w_q", "s_w"}, {"w_dq"}, {IntAttr("axis", 0)}, "dq_w");
  model.Node("MatMul", {"x_dq", "w_dq"}, {"y"}).Output("y", kFloat);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(nodes[0].reason, HasSubstr("along k"));
}

TEST(QuantLoweringTest, Int32DequantizedBiasStaysInt32) {
  OnnxBuilder model;
  QdqActivation(model);
  DequantizedWeight(model);
  model.Input("b_q", kInt32, {kN}).Input("s_b", kFloat, {kN});
  model.Node("DequantizeLinear", {"b_q", "s_b"}, {"b_dq"}, {IntAttr("axis", 0)}, "dq_b");
  model.Node("Transpose", {"w_dq"}, {"w_t"}, {IntsAttr("perm", {1, 0})});
  model.Node("MatMul", {"x_dq", "w_t"}, {"y"}).Node("Add", {"y", "b_dq"}, {"z"});
  model.Output("z", kFloat);
  LoweringOptions bf16;
  bf16.compute_dtype = tl::DataType::kBFloat16;
  const std::vector<LoweredNode> nodes = Lower(model, bf16);
  ASSERT_EQ(nodes.size(), 1u);
  ASSERT_EQ(nodes[0].status, NodeStatus::kOk) << nodes[0].reason;
  EXPECT_EQ(nodes[0].problem.dtype_bias, tl::DataType::kInt32);
  EXPECT_EQ(nodes[0].problem.quant.scale.dtype, tl::DataType::kFloat32);
}

}  // namespace
}  // namespace npu::graph

namespace npu::graph {
namespace {

using ::npu::testing::IntAttr;
using ::npu::testing::kFloat16;
using ::npu::testing::kInt64;
using ::npu::testing::OnnxBuilder;
using ::testing::HasSubstr;

TEST(UnresolvedReasonTest, PositionTableOverflowNamesTheBroadcast) {
  OnnxBuilder model;
  model.Input("x", kFloat16, {1, "seq", 64}).Input("pos", kFloat16, {1, 1024, 64});
  model.Input("w", kFloat16, {64, 64});
  model.Node("Add", {"x", "pos"}, {"h"}, {}, "embed_pos");
  model.Node("LayerNormalization", {"h", "pos"}, {"n"});
  model.Node("MatMul", {"n", "w"}, {"y"}, {}, "q_proj").Output("y", kFloat16, 3);
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(model.model(), {{"seq", 2048}}, {});
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].status, NodeStatus::kUnresolved);
  EXPECT_THAT((*nodes)[0].reason, HasSubstr("Add 'embed_pos'"));
  EXPECT_THAT((*nodes)[0].reason, HasSubstr("2048"));
  EXPECT_FALSE((*nodes)[0].flops.has_value());
}

TEST(UnresolvedReasonTest, ExpertRowsFromNonZeroNameTheRouting) {
  // A torch MoE expert: its tokens are the rows NonZero picks.
  OnnxBuilder model;
  model.Input("router", kFloat16, {64, 8}).Input("x", kFloat16, {64, 256});
  model.Input("w", kFloat16, {256, 1024});
  model.Node("NonZero", {"router"}, {"nz"}, {}, "route");
  model.Initializer("zero", kInt64, {}, {0});
  model.Node("Gather", {"nz", "zero"}, {"rows"}, {IntAttr("axis", 0)});
  model.Node("Gather", {"x", "rows"}, {"tokens"}, {IntAttr("axis", 0)});
  model.Initializer("shape", kInt64, {2}, {-1, 256});
  model.Node("Reshape", {"tokens", "shape"}, {"expert_in"});
  model.Node("MatMul", {"expert_in", "w"}, {"y"}, {}, "expert0").Output("y", kFloat16, 2);
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(model.model(), {}, {});
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].status, NodeStatus::kUnresolved);
  EXPECT_THAT((*nodes)[0].reason, HasSubstr("NonZero 'route'"));
  EXPECT_THAT((*nodes)[0].reason, ::testing::Not(HasSubstr("output of Reshape")));
}

}  // namespace
}  // namespace npu::graph

namespace npu::graph {
namespace {

using ::npu::testing::IntAttr;
using ::npu::testing::IntsAttr;
using ::npu::testing::kFloat;
using ::npu::testing::kInt8;
using ::npu::testing::OnnxBuilder;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(QuantLoweringTest, QdqFormOfDynamicQuantizationIsPerToken) {
  // ONNX Runtime's QDQ format of a dynamically quantized activation:
  // DynamicQuantizeLinear -> DequantizeLinear feeding the MatMul.
  OnnxBuilder model;
  model.Input("x", kFloat, {32, 256}).Input("w_q", kInt8, {128, 256}).Input("s_w", kFloat, {128});
  model.Node("DynamicQuantizeLinear", {"x"}, {"x_q", "x_s", "x_zp"}, {}, "dql");
  model.Node("DequantizeLinear", {"x_q", "x_s", "x_zp"}, {"x_dq"});
  model.Node("DequantizeLinear", {"w_q", "s_w"}, {"w_dq"}, {IntAttr("axis", 0)});
  model.Node("Transpose", {"w_dq"}, {"w_t"}, {IntsAttr("perm", {1, 0})});
  model.Node("MatMul", {"x_dq", "w_t"}, {"y"}).Output("y", kFloat);
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(model.model(), {}, {});
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  const LoweredNode& node = (*nodes)[0];
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  EXPECT_TRUE(node.problem.quant.pertoken.present);
  EXPECT_THAT(node.problem.quant.pertoken.shape, ElementsAre(32));
  EXPECT_EQ(node.problem.quant.scale.dtype, tl::DataType::kFloat32);
  EXPECT_THAT(node.problem.quant.scale.shape, ElementsAre(128));
  EXPECT_THAT(node.derivation.notes, ::testing::Contains(HasSubstr("DynamicQuant")));
}

}  // namespace
}  // namespace npu::graph
