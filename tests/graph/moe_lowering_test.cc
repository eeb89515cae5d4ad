// Mixture-of-experts models in the lowering (server/graph/moe_lowering.h,
// lowering.h): ONNX Runtime's com.microsoft MoE / QMoE read by their
// documented inputs, and torch's expert loops, whose rows per expert only
// the run decides.
#include "server/graph/moe_lowering.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/graph/lowering.h"
#include "tests/testing/onnx_builder.h"
#include "tests/testing/status_matchers.h"

namespace npu::graph {
namespace {

namespace tl = ::npu::tiling;
using ::npu::testing::IntAttr;
using ::npu::testing::IntsAttr;
using ::npu::testing::IsOk;
using ::npu::testing::kFloat16;
using ::npu::testing::kInt64;
using ::npu::testing::OnnxBuilder;
using ::npu::testing::StatusIs;
using ::npu::testing::StringAttr;
using ::testing::HasSubstr;

std::vector<LoweredNode> Lower(const OnnxBuilder& model, const Gear& gear = {},
                               const LoweringOptions& options = {}) {
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(model.model(), gear, options);
  EXPECT_THAT(nodes, IsOk());
  return nodes.ok() ? *nodes : std::vector<LoweredNode>();
}

// ---------------------------------------------------------------------------
// torch's expert loop: router, top-k, the routing mask, and expert 3's
// tokens (torch.where of its row of the mask) through its first matmul.

TEST(TorchExpertLoopTest, AnExpertsMatmulIsUnresolvedNamingTheMoeRouting) {
  OnnxBuilder model;
  model.Input("x", kFloat16, {"tokens", 64}).Input("gate", kFloat16, {64, 8});
  model.Input("w1", kFloat16, {64, 128});
  model.Node("MatMul", {"x", "gate"}, {"logits"}, {}, "router");
  model.Initializer("k", kInt64, {1}, {2});
  model.Node("TopK", {"logits", "k"}, {"weights", "chosen"}, {}, "topk");
  model.Initializer("depth", kInt64, {}, {8}).Initializer("on_off", kInt64, {2}, {0, 1});
  model.Node("OneHot", {"chosen", "depth", "on_off"}, {"mask"});
  model.Node("Transpose", {"mask"}, {"by_expert"}, {IntsAttr("perm", {2, 1, 0})});
  model.Initializer("expert", kInt64, {}, {3}).Initializer("one", kInt64, {}, {1});
  model.Node("Gather", {"by_expert", "expert"}, {"mask_e"}, {IntAttr("axis", 0)});
  model.Node("NonZero", {"mask_e"}, {"hits"}, {}, "where_3");
  model.Node("Gather", {"hits", "one"}, {"token"}, {IntAttr("axis", 0)});
  model.Node("Gather", {"x", "token"}, {"rows"}, {IntAttr("axis", 0)});
  model.Node("MatMul", {"rows", "w1"}, {"h"}, {}, "w1.3").Output("h", kFloat16, 2);
  model.Output("weights", kFloat16, 2);
  const std::vector<LoweredNode> nodes = Lower(model, {{"tokens", 32}});
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kOk) << nodes[0].reason;
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kMatMulV3);
  const LoweredNode& expert = nodes[1];
  EXPECT_EQ(expert.name, "w1.3");
  EXPECT_EQ(expert.status, NodeStatus::kUnresolved);
  EXPECT_THAT(expert.reason, HasSubstr("MatMulV3 with k = 64 and n = 128, m unknown"));
  EXPECT_THAT(expert.reason,
              HasSubstr("rows per expert depend on the router's choice at run time (MoE expert "
                        "loop: TopK 'topk' chooses each token's experts)"));
  EXPECT_THAT(expert.reason, HasSubstr("NonZero 'where_3'"));
  EXPECT_FALSE(expert.flops.has_value());
}

TEST(TorchExpertLoopTest, ADataDependentMatmulWithoutARouterKeepsItsReason) {
  OnnxBuilder model;
  model.Input("mask", kFloat16, {64, 8}).Input("x", kFloat16, {64, 256});
  model.Input("w", kFloat16, {256, 1024});
  model.Node("NonZero", {"mask"}, {"nz"}, {}, "where");
  model.Initializer("zero", kInt64, {}, {0});
  model.Node("Gather", {"nz", "zero"}, {"rows"}, {IntAttr("axis", 0)});
  model.Node("Gather", {"x", "rows"}, {"picked"}, {IntAttr("axis", 0)});
  model.Node("MatMul", {"picked", "w"}, {"y"}, {}, "fc").Output("y", kFloat16, 2);
  const std::vector<LoweredNode> nodes = Lower(model);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnresolved);
  EXPECT_THAT(nodes[0].reason, HasSubstr("NonZero 'where'"));
  EXPECT_THAT(nodes[0].reason, ::testing::Not(HasSubstr("MoE")));
}

// ---------------------------------------------------------------------------
// The weights' layouts (ResolveMoeShapes).

MoeFacts Facts(bool quantized = false, const std::string& activation = "silu",
               int64_t swiglu_fusion = 0, int64_t bits = 4) {
  MoeFacts facts;
  facts.quantized = quantized;
  facts.activation_type = activation;
  facts.swiglu_fusion = swiglu_fusion;
  facts.expert_weight_bits = bits;
  return facts;
}

TEST(ResolveMoeShapesTest, TheDocumentedLayoutIsTransposedWithFc3BetweenFc1AndFc2) {
  absl::StatusOr<MoeShapes> shapes =
      ResolveMoeShapes(Facts(), 4096, {8, 14336, 4096}, {8, 4096, 14336}, {{8, 14336, 4096}});
  ASSERT_THAT(shapes, IsOk());
  EXPECT_EQ(shapes->experts, 8);
  EXPECT_EQ(shapes->inter, 14336);
  ASSERT_EQ(shapes->matmuls.size(), 3u);
  EXPECT_EQ(shapes->matmuls[0].role, "fc1");
  EXPECT_EQ(shapes->matmuls[1].role, "fc3");
  EXPECT_EQ(shapes->matmuls[2].role, "fc2");
  EXPECT_EQ(shapes->matmuls[0].k, 4096);
  EXPECT_EQ(shapes->matmuls[0].n, 14336);
  EXPECT_EQ(shapes->matmuls[2].k, 14336);
  EXPECT_EQ(shapes->matmuls[2].n, 4096);
  for (const ExpertMatmul& matmul : shapes->matmuls) EXPECT_TRUE(matmul.transposed);
  EXPECT_TRUE(shapes->layout_note.empty());
}

TEST(ResolveMoeShapesTest, TheEarlierLayoutIsReadUntransposedAndNoted) {
  absl::StatusOr<MoeShapes> shapes =
      ResolveMoeShapes(Facts(false, "relu"), 1024, {4, 1024, 3072}, {4, 3072, 1024}, {});
  ASSERT_THAT(shapes, IsOk());
  ASSERT_EQ(shapes->matmuls.size(), 2u);
  EXPECT_FALSE(shapes->matmuls[0].transposed);
  EXPECT_EQ(shapes->matmuls[0].k, 1024);
  EXPECT_EQ(shapes->matmuls[0].n, 3072);
  EXPECT_EQ(shapes->matmuls[1].k, 3072);
  EXPECT_EQ(shapes->matmuls[1].n, 1024);
  EXPECT_THAT(shapes->layout_note, HasSubstr("earlier MoE layout"));
}

TEST(ResolveMoeShapesTest, SquareExpertsAreReadAsDocumentedWithANote) {
  absl::StatusOr<MoeShapes> shapes =
      ResolveMoeShapes(Facts(false, "gelu"), 512, {4, 512, 512}, {4, 512, 512}, {});
  ASSERT_THAT(shapes, IsOk());
  EXPECT_TRUE(shapes->matmuls[0].transposed);
  EXPECT_THAT(shapes->layout_note, HasSubstr("fit both layouts"));
}

TEST(ResolveMoeShapesTest, FusedSwigluDoublesFc1sN) {
  for (int64_t fusion : {1, 2}) {
    absl::StatusOr<MoeShapes> shapes = ResolveMoeShapes(Facts(false, "swiglu", fusion), 2880,
                                                        {32, 5760, 2880}, {32, 2880, 2880}, {});
    ASSERT_THAT(shapes, IsOk());
    EXPECT_EQ(shapes->fusion, 2);
    EXPECT_EQ(shapes->inter, 2880);
    EXPECT_EQ(shapes->matmuls[0].n, 5760);
  }
  EXPECT_THAT(
      ResolveMoeShapes(Facts(false, "swiglu", 1), 2880, {32, 2880, 2880}, {32, 2880, 2880}, {}),
      StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(
      ResolveMoeShapes(Facts(false, "swiglu", 0), 2880, {32, 2880, 2880}, {32, 2880, 2880}, {}),
      StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ResolveMoeShapesTest, QMoeWeightsHoldPackedCodesAlongK) {
  // int4: two codes a byte, so K = 4096 is stored as 2048 bytes.
  absl::StatusOr<MoeShapes> shapes = ResolveMoeShapes(
      Facts(true, "silu", 0, 4), 4096, {16, 6400, 2048}, {16, 4096, 3200}, {{16, 6400, 2048}});
  ASSERT_THAT(shapes, IsOk());
  EXPECT_EQ(shapes->inter, 6400);
  EXPECT_EQ(shapes->matmuls[0].k, 4096);
  EXPECT_EQ(shapes->matmuls[2].k, 6400);
  // QMoE has no earlier layout to fall back on.
  EXPECT_THAT(
      ResolveMoeShapes(Facts(true, "silu", 0, 8), 4096, {16, 4096, 6400}, {16, 6400, 4096}, {}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fit no layout")));
}

TEST(ResolveMoeShapesTest, DisagreeingWeightsAreRefusedNamingThem) {
  EXPECT_THAT(
      ResolveMoeShapes(Facts(), 64, {8, 128, 64}, {4, 64, 128}, {}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("disagree on the number of experts")));
  EXPECT_THAT(ResolveMoeShapes(Facts(), 64, {8, 128, 64}, {8, 64, 128}, {{8, 96, 64}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fc3_experts_weights")));
  EXPECT_THAT(ResolveMoeShapes(Facts(), 64, {8, 128}, {8, 64, 128}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not 3-D")));
}

TEST(ReadMoeTest, InputsAndAttributesByTheirDocumentedPlaces) {
  OnnxBuilder model;
  model
      .Node(
          "QMoE",
          {"x", "probs", "w1", "s1", "b1", "w2", "s2", "b2", "w3", "s3", "b3", "z1", "z2", "z3",
           "rw"},
          {"y"},
          {IntAttr("k", 2), StringAttr("activation_type", "silu"), IntAttr("expert_weight_bits", 8),
           IntAttr("block_size", 128), IntAttr("use_sparse_mixer", 1)},
          "qmoe")
      .InDomain("com.microsoft");
  const onnx::NodeProto& node = model.graph().node(0);
  ASSERT_TRUE(IsMoeNode(node));
  const MoeFacts facts = ReadMoe(node);
  EXPECT_TRUE(facts.quantized);
  EXPECT_EQ(facts.k, 2);
  EXPECT_TRUE(facts.k_given);
  EXPECT_EQ(facts.expert_weight_bits, 8);
  EXPECT_EQ(facts.block_size, 128);
  EXPECT_EQ(facts.use_sparse_mixer, 1);
  EXPECT_EQ(facts.fc1.weight, "w1");
  EXPECT_EQ(facts.fc1.scales, "s1");
  EXPECT_EQ(facts.fc1.bias, "b1");
  EXPECT_EQ(facts.fc2.scales, "s2");
  EXPECT_EQ(facts.fc3.weight, "w3");
  EXPECT_EQ(facts.fc3.zero_points, "z3");
  EXPECT_EQ(facts.router_weights, "rw");

  OnnxBuilder plain;
  plain.Node("MoE", {"x", "probs", "w1", "", "w2"}, {"y"}, {}, "moe").InDomain("com.microsoft");
  const MoeFacts moe = ReadMoe(plain.graph().node(0));
  EXPECT_FALSE(moe.quantized);
  EXPECT_FALSE(moe.k_given);
  EXPECT_EQ(moe.activation_type, "relu");
  EXPECT_EQ(moe.fc1.weight, "w1");
  EXPECT_TRUE(moe.fc1.bias.empty());
  EXPECT_EQ(moe.fc2.weight, "w2");
  EXPECT_TRUE(moe.fc3.weight.empty());
}

}  // namespace
}  // namespace npu::graph
