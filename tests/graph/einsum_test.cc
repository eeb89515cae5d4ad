// Einsum equations (einsum.h): parsing, output dims, and the lowering of
// any equation that is a batched matmul once its operands are permuted.
#include "server/graph/einsum.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/graph/lowering.h"
#include "tests/testing/onnx_builder.h"
#include "tests/testing/status_matchers.h"

namespace npu::graph {
namespace {

namespace tl = ::npu::tiling;
using ::npu::testing::IsOk;
using ::npu::testing::kFloat16;
using ::npu::testing::OnnxBuilder;
using ::npu::testing::StringAttr;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseEinsumTest, ExplicitImplicitAndEllipsis) {
  absl::StatusOr<EinsumEquation> explicit_form = ParseEinsum("bshd, hdc -> bshc", {4, 3});
  ASSERT_THAT(explicit_form, IsOk());
  EXPECT_THAT(explicit_form->inputs, ElementsAre("bshd", "hdc"));
  EXPECT_EQ(explicit_form->output, "bshc");

  absl::StatusOr<EinsumEquation> implicit_form = ParseEinsum("ij,jk", {2, 2});
  ASSERT_THAT(implicit_form, IsOk());
  EXPECT_EQ(implicit_form->output, "ik");

  absl::StatusOr<EinsumEquation> ellipsis = ParseEinsum("...mk,...kn->...mn", {4, 3});
  ASSERT_THAT(ellipsis, IsOk());
  EXPECT_THAT(ellipsis->inputs, ElementsAre("01mk", "1kn"));
  EXPECT_EQ(ellipsis->output, "01mn");
}

TEST(ParseEinsumTest, RefusalsSayWhat) {
  EXPECT_THAT(ParseEinsum("ab,bc->ac", {2}).status().message(), HasSubstr("2 operands"));
  EXPECT_THAT(ParseEinsum("abc,bc->ac", {2, 2}).status().message(), HasSubstr("3 labels"));
  EXPECT_THAT(ParseEinsum("ab,bc->ad", {2, 2}).status().message(), HasSubstr("'d'"));
  EXPECT_THAT(ParseEinsum("a1,bc->ac", {2, 2}).status().message(), HasSubstr("not a label"));
}

TEST(EinsumOutputDimsTest, LabelsGiveTheDims) {
  absl::StatusOr<EinsumEquation> equation = ParseEinsum("bshc,btc->bsht", {4, 3});
  ASSERT_THAT(equation, IsOk());
  EXPECT_THAT(EinsumOutputDims(*equation, {{2, 16, 128, 512}, {2, 1024, 512}}),
              ::testing::Optional(ElementsAre(2, 16, 128, 1024)));
  EXPECT_EQ(EinsumOutputDims(*equation, {{2, 16, 128, 512}, {2, 1024, 256}}), std::nullopt);
}

std::vector<LoweredNode> LowerEinsum(const std::string& equation, std::vector<int64_t> a,
                                     std::vector<int64_t> b) {
  OnnxBuilder model;
  std::vector<npu::testing::OnnxDim> da(a.begin(), a.end()), db(b.begin(), b.end());
  model.Input("a", kFloat16, da).Input("b", kFloat16, db);
  model.Node("Einsum", {"a", "b"}, {"c"}, {StringAttr("equation", equation)}, "einsum");
  model.Node("Relu", {"c"}, {"r"}).Output("r", kFloat16, static_cast<int>(a.size()));
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(model.model(), {}, {});
  EXPECT_THAT(nodes, IsOk());
  return nodes.ok() ? *nodes : std::vector<LoweredNode>();
}

TEST(LowerEinsumTest, AbsorbedMlaQueryProjectionIsTransposeBatchMatMul) {
  // DeepSeek-V3's q_nope . W_UK: x1 [b, s, h, d] is [m, batch, k] with b and
  // s folded into m, y [b, s, h, c] is [m, batch, n]: TransposeBatchMatMul
  // reads and writes them through its perms, no Transpose kernel runs.
  const std::vector<LoweredNode> nodes =
      LowerEinsum("bshd,hdc->bshc", {2, 16, 128, 128}, {128, 128, 512});
  ASSERT_EQ(nodes.size(), 1u);
  const LoweredNode& node = nodes[0];
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  EXPECT_EQ(node.problem.op, tl::MatmulOp::kTransposeBatchMatMul);
  EXPECT_EQ(node.problem.transpose.batch, 128);
  EXPECT_THAT(node.problem.transpose.perm_x1, ElementsAre(1, 0, 2));
  EXPECT_THAT(node.problem.transpose.perm_x2, ElementsAre(0, 1, 2));
  EXPECT_THAT(node.problem.transpose.perm_y, ElementsAre(1, 0, 2));
  EXPECT_EQ(node.problem.m, 2 * 16);
  EXPECT_EQ(node.problem.k, 128);
  EXPECT_EQ(node.problem.n, 512);
  EXPECT_THAT(node.derivation.notes, Contains(HasSubstr("no Transpose kernel runs")));
  ASSERT_TRUE(node.flops.has_value());
  EXPECT_DOUBLE_EQ(*node.flops, 2.0 * 2 * 16 * 128 * 128 * 512);
}

TEST(LowerEinsumTest, APermutedOperandTheOperatorRefusesIsABatchMatmulWithTransposeKernels) {
  // x1 [k, batch, m] is no TransposeBatchMatMul layout: BatchMatMulV3 after
  // a Transpose kernel, noted.
  const std::vector<LoweredNode> nodes = LowerEinsum("dhm,hdc->mhc", {64, 8, 32}, {8, 64, 16});
  ASSERT_EQ(nodes.size(), 1u);
  const LoweredNode& node = nodes[0];
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  EXPECT_EQ(node.problem.op, tl::MatmulOp::kBatchMatMulV3);
  EXPECT_THAT(node.problem.batch.a, ElementsAre(8));
  EXPECT_THAT(node.derivation.notes, Contains(HasSubstr("a Transpose kernel runs first")));
  EXPECT_THAT(node.derivation.notes, Contains(HasSubstr("a Transpose kernel writes")));
}

TEST(LowerEinsumTest, AbsorbedMlaScoresFoldHeadsIntoM) {
  // scores = q . kv^T over the latent dim: heads fold into m, kv is B^T.
  const std::vector<LoweredNode> nodes =
      LowerEinsum("bshc,btc->bsht", {2, 16, 128, 512}, {2, 1024, 512});
  ASSERT_EQ(nodes.size(), 1u);
  const LoweredNode& node = nodes[0];
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  EXPECT_EQ(node.problem.op, tl::MatmulOp::kBatchMatMulV3);
  EXPECT_THAT(node.problem.batch.a, ElementsAre(2));
  EXPECT_EQ(node.problem.m, 16 * 128);
  EXPECT_EQ(node.problem.k, 512);
  EXPECT_EQ(node.problem.n, 1024);
  EXPECT_TRUE(node.problem.trans_b);
  EXPECT_THAT(node.derivation.notes, ::testing::Not(Contains(HasSubstr("Transpose kernel"))));
}

TEST(LowerEinsumTest, PlainMatmulHasNoBatch) {
  const std::vector<LoweredNode> nodes = LowerEinsum("ik,kj", {64, 32}, {32, 16});
  ASSERT_EQ(nodes.size(), 1u);
  ASSERT_EQ(nodes[0].status, NodeStatus::kOk) << nodes[0].reason;
  EXPECT_EQ(nodes[0].problem.op, tl::MatmulOp::kMatMulV3);
  EXPECT_EQ(nodes[0].problem.m, 64);
  EXPECT_EQ(nodes[0].problem.n, 16);
}

TEST(LowerEinsumTest, NonMatmulEquationsAreUnsupportedNamingTheEquation) {
  std::vector<LoweredNode> diagonal = LowerEinsum("ii,ij->ij", {8, 8}, {8, 4});
  ASSERT_EQ(diagonal.size(), 1u);
  EXPECT_EQ(diagonal[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(diagonal[0].reason, HasSubstr("'ii,ij->ij'"));
  std::vector<LoweredNode> summed = LowerEinsum("ij,kl->ik", {8, 8}, {8, 4});
  ASSERT_EQ(summed.size(), 1u);
  EXPECT_EQ(summed[0].status, NodeStatus::kUnsupported);
  EXPECT_THAT(summed[0].reason, HasSubstr("summed over one operand"));
}

}  // namespace
}  // namespace npu::graph
