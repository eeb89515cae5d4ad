// MERGE_BATCH_BASICAPI and its FusedMatMul variant: the polynomial batch
// count, transposed A, the fused key and the add / mul UB check. Expected
// words are CANN's (batch_matmul_v3_mergebatch_basicapi_tiling.cpp,
// fused_matmul_mergebatch_basic_tiling.cpp), checked against its compiled
// host tiling.
#include "server/tiling/strategies/batch_merge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "server/tiling/strategies/fused_inherited.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Batched;
using ::npu::testing::Chip950;
using ::npu::testing::DecideBuiltin;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(BatchMergeTest, TransposedAKeepsItsKeyBitWithSeveralRows) {
  MatmulProblem p = Batched(MatmulOp::kBatchMatMulV3, 4, 16, 64, 128);
  p.trans_a = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "MERGE_BATCH_BASICAPI");
  EXPECT_EQ(d->plan.key.Encode(), 0x311u);  // BASIC, A transposed, MERGE_BATCH
  EXPECT_EQ(d->plan.block_dim, 32u);
  EXPECT_EQ(d->plan.kernel_type, KernelType::kAicOnly);
  EXPECT_THAT(d->plan.data.RawWords(), ElementsAre(4, 16, 64, 128, 4, 4, 4, 64, 64, 0, 0, 1));
}

TEST(BatchMergeTest, TransposedSingleRowIsNotTransposed) {
  MatmulProblem p = Batched(MatmulOp::kBatchMatMulV3, 1, 16, 64, 128);
  p.trans_a = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "MERGE_BATCH_BASICAPI");
  EXPECT_FALSE(d->plan.key.trans_a);
}

TEST(BatchMergeTest, PolynomialBoundsTheMergedBatches) {
  // One fp32 L0C half (32768 elements) over 16-wide N and 16-row A: the
  // merged block stays near square.
  EXPECT_EQ(MergedBatchesByPolynomial(32768.0, 16, 16), 11u);
  // It never goes below one batch.
  EXPECT_EQ(MergedBatchesByPolynomial(16.0, 4096, 4096), 1u);
}

TEST(BatchMergeTest, FusedMulWritesThroughTheVectorCores) {
  MatmulProblem p = Batched(MatmulOp::kFusedMatMul, 8, 64, 64, 256);
  p.fused.op = FusedOp::kMul;
  p.fused.inner_precise = 1;
  p.fused.x3_shape = {256, 8, 64};
  const std::unique_ptr<Strategy> owned_strategy = InheritedMergeBatch();
  const Strategy& strategy = *owned_strategy;
  EXPECT_EQ(strategy.name(), "MERGE_BATCH_BASICAPI_INHERITED_FROM_BMMV3");
  const ProblemFacts facts = DeriveFacts(p);
  ASSERT_TRUE(strategy.IsCapable(p, facts, Chip950()).ok);
  absl::StatusOr<TilingPlan> plan = strategy.DoTiling(p, facts, Chip950());
  ASSERT_THAT(plan, IsOk());
  // BASIC, MERGE_BATCH, ND_FIXPIPE_1_2, MUL, high performance.
  EXPECT_EQ(plan->key.Encode(), 0x12200301u);
  EXPECT_EQ(plan->kernel_type, KernelType::kMixed1To2);
  EXPECT_THAT(plan->data.RawWords(), ElementsAre(8, 64, 64, 256, 4, 4, 4, 64, 64, 0, 0, 256));
}

TEST(BatchMergeTest, FusedAddNeedsItsResultInUb) {
  // 64 rows of 2048 fp32 results (high precision) overflow the 248 KiB UB.
  MatmulProblem p = Batched(MatmulOp::kFusedMatMul, 64, 2048, 64, 128);
  p.fused.op = FusedOp::kAdd;
  p.fused.x3_shape = {64, 2048};
  const std::unique_ptr<Strategy> owned_strategy = InheritedMergeBatch();
  const Strategy& strategy = *owned_strategy;
  ChipSpec chip = Chip950(8);
  chip.l0c_bytes = 1ull << 30;  // let the L0 checks pass so the UB one decides
  chip.l0b_bytes = 1ull << 30;
  chip.l0a_bytes = 1ull << 30;
  Capability c = strategy.IsCapable(p, DeriveFacts(p), chip);
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("UB"));
  // The same shape without the epilogue passes the checks.
  p.fused.op = FusedOp::kRelu;
  EXPECT_TRUE(strategy.IsCapable(p, DeriveFacts(p), chip).ok);
}

TEST(BatchMergeTest, Refusals) {
  const BatchMergeStrategy strategy;
  const ChipSpec chip = Chip950();
  auto reason = [&](const MatmulProblem& p) {
    Capability c = strategy.IsCapable(p, DeriveFacts(p), chip);
    EXPECT_FALSE(c.ok);
    return c.reason.str();
  };
  EXPECT_THAT(reason(Batched(MatmulOp::kBatchMatMulV3, 4, 16, 64, 127)), HasSubstr("batch=127"));
  EXPECT_THAT(reason(Batched(MatmulOp::kBatchMatMulV3, 32, 16, 64, 128)), HasSubstr("M=32 > N"));
  EXPECT_THAT(reason(Batched(MatmulOp::kBatchMatMulV3, 4, 16, 32, 128)), HasSubstr("aligned K"));
  EXPECT_THAT(reason(Batched(MatmulOp::kBatchMatMulV3, 4, 16, 64, 128, DataType::kFloat32)),
              HasSubstr("fp32 without hf32"));
  EXPECT_THAT(reason(Batched(MatmulOp::kBatchMatMulV3, 200, 400, 64, 128)), HasSubstr("L0"));
}

}  // namespace
}  // namespace npu::tiling
