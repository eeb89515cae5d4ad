// Mixture-of-experts models in the lowering (server/graph/moe_lowering.h,
// lowering.h): ONNX Runtime's com.microsoft MoE / QMoE read by their
// documented inputs, and torch's expert loops, whose rows per expert only
// the run decides.
#include "server/graph/moe_lowering.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/graph/lowering.h"
#include "server/tiling/grouped/gmm_path.h"
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

TEST(ResolveMoeShapesTest, BitWidthsOutsideTheDocumentedOnesAreRefused) {
  for (int64_t bits : {0, 3, 16}) {
    EXPECT_THAT(ResolveMoeShapes(Facts(true, "relu", 0, bits), 64, {8, 128, 64}, {8, 64, 128}, {}),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expert_weight_bits")));
  }
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

// ---------------------------------------------------------------------------
// ONNX Runtime's MoE and QMoE as GroupedMatmul.

namespace g = ::npu::tiling::grouped;
using ::npu::testing::kBFloat16;
using ::npu::testing::kFloat;
using ::npu::testing::kUint8;
using ::npu::testing::OnnxDim;
using ::testing::Contains;
using ::testing::ElementsAre;

const tl::GroupedTensorList& List(const LoweredNode& node, tl::GroupedTensor tensor) {
  return node.problem.grouped[tensor];
}
std::vector<int64_t> Origin(const LoweredNode& node, tl::GroupedTensor tensor) {
  const tl::GroupedTensorList& list = List(node, tensor);
  return list.instances.size() == 1 ? list.instances[0].origin : std::vector<int64_t>{-1};
}

// A Mixtral-like MoE over [batch, seq, 64]: the router's MatMul, then MoE
// with E = 8 experts, inter 128, top-2, SiLU-gated (fc3).
OnnxBuilder FloatMoe(int32_t dtype, bool with_fc3 = true, bool earlier_layout = false,
                     bool biases = false) {
  OnnxBuilder model;
  model.Input("x", dtype, {"batch", "seq", 64}).Input("gate", dtype, {64, 8});
  model.Initializer("flat", kInt64, {2}, {-1, 64});
  model.Node("Reshape", {"x", "flat"}, {"x2d"});
  model.Node("MatMul", {"x2d", "gate"}, {"logits"}, {}, "router");
  const std::vector<OnnxDim> up =
      earlier_layout ? std::vector<OnnxDim>{8, 64, 128} : std::vector<OnnxDim>{8, 128, 64};
  const std::vector<OnnxDim> down =
      earlier_layout ? std::vector<OnnxDim>{8, 128, 64} : std::vector<OnnxDim>{8, 64, 128};
  model.Input("w1", dtype, up).Input("w2", dtype, down).Input("w3", dtype, up);
  model.Input("b1", dtype, {8, 128}).Input("b2", dtype, {8, 64});
  std::vector<std::string> inputs = {"x2d", "logits",          "w1", biases ? "b1" : "",
                                     "w2",  biases ? "b2" : ""};
  if (with_fc3) inputs.push_back("w3");
  model
      .Node("MoE", inputs, {"y"},
            {IntAttr("k", 2), StringAttr("activation_type", with_fc3 ? "silu" : "gelu"),
             IntAttr("normalize_routing_weights", 1)},
            "moe")
      .InDomain("com.microsoft");
  model.Output("y", dtype, 2);
  return model;
}

TEST(MoeLoweringTest, FloatMoeIsTheRouterThenThreeGroupedMatmulsOnTheNoQuantPath) {
  const std::vector<LoweredNode> nodes = Lower(FloatMoe(kFloat16), {{"batch", 2}, {"seq", 16}});
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[0].name, "router");
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kMatMulV3);
  EXPECT_EQ(nodes[0].problem.m, 32);
  const int64_t rows = 32 * 2;  // tokens x top-2
  const std::vector<std::string> roles = {"moe/fc1", "moe/fc3", "moe/fc2"};
  const std::vector<std::pair<int64_t, int64_t>> kn = {{64, 128}, {64, 128}, {128, 64}};
  for (size_t i = 0; i < 3; ++i) {
    const LoweredNode& node = nodes[i + 1];
    SCOPED_TRACE(node.name);
    ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
    EXPECT_EQ(node.name, roles[i]);
    EXPECT_EQ(node.op_type, "MoE");
    EXPECT_EQ(node.node_index, nodes[1].node_index);
    const auto [k, n] = kn[i];
    const tl::MatmulProblem& problem = node.problem;
    EXPECT_EQ(problem.op, tl::MatmulOp::kGroupedMatmul);
    EXPECT_EQ(g::PathOf(problem.grouped), g::GmmPath::kNoQuant);
    EXPECT_THAT(Origin(node, tl::GroupedTensor::kX), ElementsAre(rows, k));
    EXPECT_THAT(Origin(node, tl::GroupedTensor::kWeight), ElementsAre(8, n, k));
    EXPECT_THAT(Origin(node, tl::GroupedTensor::kY), ElementsAre(rows, n));
    EXPECT_THAT(Origin(node, tl::GroupedTensor::kGroupList), ElementsAre(8));
    EXPECT_EQ(List(node, tl::GroupedTensor::kGroupList).dtype, tl::DataType::kInt64);
    EXPECT_EQ(List(node, tl::GroupedTensor::kX).dtype, tl::DataType::kFloat16);
    EXPECT_EQ(List(node, tl::GroupedTensor::kWeight).dtype, tl::DataType::kFloat16);
    EXPECT_FALSE(List(node, tl::GroupedTensor::kBias).present());
    EXPECT_TRUE(problem.grouped.transpose_weight);
    EXPECT_EQ(problem.grouped.split_item, 3);
    EXPECT_EQ(problem.grouped.group_type, tl::kGroupTypeSplitM);
    EXPECT_EQ(problem.grouped.group_list_type, tl::kGroupListCounts);
    EXPECT_TRUE(problem.grouped.token_histogram.empty());
    ASSERT_TRUE(node.flops.has_value());
    EXPECT_DOUBLE_EQ(*node.flops, 2.0 * rows * k * n);
    EXPECT_THAT(node.derivation.assumptions, Contains(HasSubstr("spread them evenly (8 per")));
  }
}

TEST(MoeLoweringTest, TheEarlierLayoutIsUntransposedAndBfloat16BiasesAreFloat32) {
  const std::vector<LoweredNode> nodes =
      Lower(FloatMoe(kBFloat16, /*with_fc3=*/false, /*earlier_layout=*/true, /*biases=*/true),
            {{"batch", 1}, {"seq", 8}});
  ASSERT_EQ(nodes.size(), 3u);
  const LoweredNode& fc1 = nodes[1];
  ASSERT_EQ(fc1.status, NodeStatus::kOk) << fc1.reason;
  EXPECT_EQ(fc1.name, "moe/fc1");
  EXPECT_EQ(nodes[2].name, "moe/fc2");
  EXPECT_FALSE(fc1.problem.grouped.transpose_weight);
  EXPECT_THAT(Origin(fc1, tl::GroupedTensor::kWeight), ElementsAre(8, 64, 128));
  EXPECT_THAT(Origin(fc1, tl::GroupedTensor::kBias), ElementsAre(8, 128));
  EXPECT_EQ(List(fc1, tl::GroupedTensor::kBias).dtype, tl::DataType::kFloat32);
  EXPECT_EQ(fc1.derivation.fused_bias, "b1");
  EXPECT_THAT(fc1.derivation.notes, Contains(HasSubstr("earlier MoE layout")));
  EXPECT_THAT(Origin(nodes[2], tl::GroupedTensor::kBias), ElementsAre(8, 64));
}

TEST(MoeLoweringTest, Float32ExpertsRunInTheComputeDtype) {
  LoweringOptions bf16;
  bf16.compute_dtype = tl::DataType::kBFloat16;
  const std::vector<LoweredNode> cast = Lower(FloatMoe(kFloat), {{"batch", 1}, {"seq", 4}}, bf16);
  ASSERT_EQ(cast.size(), 4u);
  ASSERT_EQ(cast[1].status, NodeStatus::kOk) << cast[1].reason;
  EXPECT_EQ(List(cast[1], tl::GroupedTensor::kX).dtype, tl::DataType::kBFloat16);
  EXPECT_EQ(List(cast[1], tl::GroupedTensor::kWeight).dtype, tl::DataType::kBFloat16);
  EXPECT_TRUE(cast[1].derivation.compute_dtype_applied);
  const std::vector<LoweredNode> plain = Lower(FloatMoe(kFloat), {{"batch", 1}, {"seq", 4}});
  ASSERT_EQ(plain[1].status, NodeStatus::kOk) << plain[1].reason;
  EXPECT_EQ(List(plain[1], tl::GroupedTensor::kX).dtype, tl::DataType::kFloat32);
}

// A QMoE over [tokens, 256]: E = 4 experts, inter 512, top-2, with `bits`
// per weight and a scale per column (block 0) or per block along K.
OnnxBuilder QuantMoe(int64_t bits, int64_t block, bool zero_points = false) {
  const int64_t pack = 8 / bits;
  OnnxBuilder model;
  model.Input("x", kFloat16, {"tokens", 256}).Input("probs", kFloat16, {"tokens", 4});
  std::vector<std::string> inputs = {"x", "probs"};
  for (const auto& [fc, n, k] :
       {std::tuple<std::string, int64_t, int64_t>{"1", 512, 256}, {"2", 256, 512}}) {
    model.Input("w" + fc, kUint8, {4, n, k / pack});
    if (block == 0) {
      model.Input("s" + fc, kFloat16, {4, n});
      if (zero_points) model.Input("z" + fc, kUint8, {4, n / pack});
    } else {
      model.Input("s" + fc, kFloat16, {4, n, k / block});
      if (zero_points) model.Input("z" + fc, kUint8, {4, n, k / block / pack});
    }
    inputs.insert(inputs.end(), {"w" + fc, "s" + fc, ""});
  }
  inputs.insert(inputs.end(), {"", "", "", zero_points ? "z1" : "", zero_points ? "z2" : ""});
  std::vector<onnx::AttributeProto> attributes = {
      IntAttr("k", 2), StringAttr("activation_type", "relu"), IntAttr("expert_weight_bits", bits)};
  if (block != 0) attributes.push_back(IntAttr("block_size", block));
  model.Node("QMoE", inputs, {"y"}, attributes, "qmoe").InDomain("com.microsoft");
  model.Output("y", kFloat16, 2);
  return model;
}

TEST(MoeLoweringTest, QMoeIsTheWeightQuantPathWithItsScalesAsAntiquantScale) {
  for (const auto& [bits, block] : {std::pair<int64_t, int64_t>{4, 0}, {8, 0}, {4, 64}, {8, 128}}) {
    SCOPED_TRACE(absl::StrCat("bits ", bits, " block ", block));
    const std::vector<LoweredNode> nodes = Lower(QuantMoe(bits, block), {{"tokens", 100}});
    ASSERT_EQ(nodes.size(), 2u);
    for (const LoweredNode& node : nodes) {
      ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
      EXPECT_EQ(node.op_type, "QMoE");
      EXPECT_EQ(g::PathOf(node.problem.grouped), g::GmmPath::kWeightQuant);
      EXPECT_EQ(List(node, tl::GroupedTensor::kX).dtype, tl::DataType::kFloat16);
      EXPECT_EQ(List(node, tl::GroupedTensor::kWeight).dtype,
                bits == 4 ? tl::DataType::kInt4 : tl::DataType::kInt8);
      EXPECT_EQ(List(node, tl::GroupedTensor::kAntiquantScale).dtype, tl::DataType::kFloat16);
      EXPECT_FALSE(List(node, tl::GroupedTensor::kAntiquantOffset).present());
      EXPECT_TRUE(node.problem.grouped.transpose_weight);
    }
    EXPECT_THAT(Origin(nodes[0], tl::GroupedTensor::kX), ElementsAre(200, 256));
    EXPECT_THAT(Origin(nodes[0], tl::GroupedTensor::kWeight), ElementsAre(4, 512, 256));
    EXPECT_THAT(Origin(nodes[1], tl::GroupedTensor::kWeight), ElementsAre(4, 256, 512));
    if (block == 0) {
      EXPECT_THAT(Origin(nodes[0], tl::GroupedTensor::kAntiquantScale), ElementsAre(4, 512));
    } else {
      EXPECT_THAT(Origin(nodes[0], tl::GroupedTensor::kAntiquantScale),
                  ElementsAre(4, 512, 256 / block));
      EXPECT_THAT(Origin(nodes[1], tl::GroupedTensor::kAntiquantScale),
                  ElementsAre(4, 256, 512 / block));
    }
  }
}

TEST(MoeLoweringTest, QMoeZeroPointsAreTheAntiquantOffset) {
  const std::vector<LoweredNode> nodes = Lower(QuantMoe(8, 0, true), {{"tokens", 16}});
  ASSERT_EQ(nodes.size(), 2u);
  ASSERT_EQ(nodes[0].status, NodeStatus::kOk) << nodes[0].reason;
  EXPECT_THAT(Origin(nodes[0], tl::GroupedTensor::kAntiquantOffset), ElementsAre(4, 512));
  EXPECT_THAT(nodes[0].derivation.notes, Contains(HasSubstr("antiquant_offset")));
}

TEST(MoeLoweringTest, WhatGroupedMatmulCannotTakeIsUnsupportedNamingIt) {
  // Two-bit weights.
  onnx::ModelProto model = QuantMoe(4, 0).model();
  for (onnx::AttributeProto& attribute :
       *model.mutable_graph()->mutable_node(0)->mutable_attribute()) {
    if (attribute.name() == "expert_weight_bits") attribute.set_i(2);
  }
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(model, {{"tokens", 16}}, {});
  ASSERT_THAT(nodes, IsOk());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].name, "qmoe");
  EXPECT_EQ((*nodes)[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT((*nodes)[0].reason, HasSubstr("expert_weight_bits 2"));

  // Weights of no documented layout.
  OnnxBuilder odd;
  odd.Input("x", kFloat16, {16, 64}).Input("probs", kFloat16, {16, 8});
  odd.Input("w1", kFloat16, {8, 96, 32}).Input("w2", kFloat16, {8, 64, 96});
  odd.Node("MoE", {"x", "probs", "w1", "", "w2"}, {"y"}, {IntAttr("k", 2)}, "moe")
      .InDomain("com.microsoft");
  odd.Output("y", kFloat16, 2);
  const std::vector<LoweredNode> refused = Lower(odd);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(refused[0].reason, HasSubstr("fit no layout"));

  // More experts per token than there are, and a router of another width.
  for (const auto& [k, probs] : {std::pair<int64_t, int64_t>{9, 8}, {2, 4}}) {
    OnnxBuilder model;
    model.Input("x", kFloat16, {16, 64}).Input("probs", kFloat16, {16, probs});
    model.Input("w1", kFloat16, {8, 128, 64}).Input("w2", kFloat16, {8, 64, 128});
    model.Node("MoE", {"x", "probs", "w1", "", "w2"}, {"y"}, {IntAttr("k", k)}, "moe")
        .InDomain("com.microsoft");
    model.Output("y", kFloat16, 2);
    const std::vector<LoweredNode> lowered = Lower(model);
    ASSERT_EQ(lowered.size(), 1u);
    EXPECT_EQ(lowered[0].status, NodeStatus::kUnsupported);
    EXPECT_THAT(lowered[0].reason, HasSubstr(k == 9 ? "k = 9" : "router_probs"));
  }
}

TEST(MoeLoweringTest, AnUnknownTokenCountIsUnresolvedNamingTheDim) {
  const std::vector<LoweredNode> nodes = Lower(QuantMoe(4, 0));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "qmoe");
  EXPECT_EQ(nodes[0].status, NodeStatus::kUnresolved);
  EXPECT_THAT(nodes[0].reason, HasSubstr("dim 'tokens'"));
}

TEST(MoeLoweringTest, AnMoeNodeCountsAsUpToThreeLoweredNodes) {
  const onnx::ModelProto model = FloatMoe(kFloat16).model();
  std::vector<size_t> bounds;
  for (const onnx::NodeProto& node : model.graph().node()) bounds.push_back(MaxLoweredNodes(node));
  EXPECT_THAT(bounds, ElementsAre(0, 1, 3));
}

}  // namespace
}  // namespace npu::graph
