// ITER_BATCH_BASICAPI and its FusedMatMul variant: batches per L1 / L0
// load, the base block of a batch too large for L0, the issue-queue cap,
// the fused output path and needNdDma. Expected words are CANN's
// (batch_matmul_v3_iterbatch_basicapi_tiling.cpp,
// fused_matmul_iterbatch_basic_tiling.cpp), checked against its compiled
// host tiling.
#include "server/tiling/strategies/batch_iterate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "server/tiling/strategies/fused_inherited.h"
#include "server/tiling/tiling_data.h"
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

absl::StatusOr<TilingPlan> Tile(const Strategy& strategy, const MatmulProblem& p) {
  const ProblemFacts facts = DeriveFacts(p);
  Capability c = strategy.IsCapable(p, facts, Chip950());
  EXPECT_TRUE(c.ok) << c.reason;
  return strategy.DoTiling(p, facts, Chip950());
}

TEST(BatchIterateTest, BatchTooLargeForL0IsCutKeepingN) {
  // 256x256 of A overflows an L0A half; N (128) is the smallest aligned
  // side of B, so it stays whole and K, then M, fill L0B / L0A.
  absl::StatusOr<TilingDecision> d =
      DecideBuiltin(Batched(MatmulOp::kBatchMatMulV3, 256, 128, 256, 64));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "ITER_BATCH_BASICAPI");
  EXPECT_EQ(d->plan.key.Encode(), 0x101u);
  EXPECT_EQ(d->plan.block_dim, 32u);
  EXPECT_THAT(d->plan.data.RawWords(),
              ElementsAre(256, 128, 256, 64, 1, 1, 0, 128, 128, 128, 0, 1, 0, 0));
}

TEST(BatchIterateTest, LargeBatchesQueueAtMostEightMmads) {
  // 8 batches of 64x64x64 fp16 move more than 64 KiB, so a load holds at
  // most 8 batches even though L1 has room for more.
  absl::StatusOr<TilingDecision> d =
      DecideBuiltin(Batched(MatmulOp::kBatchMatMulV3, 64, 64, 64, {40, 40}));
  ASSERT_THAT(d, IsOk());
  EXPECT_THAT(d->plan.data.RawWords(),
              ElementsAre(64, 64, 64, 1600, 8, 4, 0, 64, 64, 64, 0, 1, 0, 0));
}

TEST(BatchIterateTest, FusedEpilogueReadsSharedX3OnceForSeveralBatches) {
  const std::unique_ptr<Strategy> owned_strategy = InheritedIterBatch();
  const Strategy& strategy = *owned_strategy;
  EXPECT_EQ(strategy.name(), "ITER_BATCH_BASICAPI_INHERITED_FROM_BMMV3");
  MatmulProblem relu = Batched(MatmulOp::kFusedMatMul, 32, 32, 32, 1200);
  relu.fused.op = FusedOp::kRelu;
  absl::StatusOr<TilingPlan> plan = Tile(strategy, relu);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->key.Encode(), 0x5000101u);  // on the fly: no x3
  EXPECT_EQ(plan->kernel_type, KernelType::kAicOnly);
  EXPECT_THAT(plan->data.RawWords(),
              ElementsAre(32, 32, 32, 1200, 38, 16, 0, 32, 32, 32, 0, 1, 1, 0));

  MatmulProblem add = relu;
  add.fused.op = FusedOp::kAdd;
  add.fused.x3_shape = {1, 32, 32};
  plan = Tile(strategy, add);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->key.Encode(), 0x1200101u);  // x3 always goes through the AIV
  EXPECT_EQ(plan->kernel_type, KernelType::kMixed1To2);
  EXPECT_EQ(Get(plan->data, IterBatchField::kNeedNdDma), 1u);

  // A per-batch x3 is read batch by batch.
  add.fused.x3_shape = {1200, 32, 32};
  plan = Tile(strategy, add);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(Get(plan->data, IterBatchField::kBatchX3), 1200u);
  EXPECT_EQ(Get(plan->data, IterBatchField::kNeedNdDma), 0u);
}

TEST(BatchIterateTest, Refusals) {
  const BatchIterateStrategy bmm;
  const std::unique_ptr<Strategy> owned_fused = InheritedIterBatch();
  const Strategy& fused = *owned_fused;
  const ChipSpec chip = Chip950();
  auto reason = [&](const Strategy& s, const MatmulProblem& p) {
    Capability c = s.IsCapable(p, DeriveFacts(p), chip);
    EXPECT_FALSE(c.ok);
    return c.reason.str();
  };
  EXPECT_THAT(reason(bmm, Batched(MatmulOp::kBatchMatMulV3, 32, 32, 32, 32)), HasSubstr("<= aic"));
  EXPECT_THAT(reason(bmm, Batched(MatmulOp::kBatchMatMulV3, 512, 512, 512, 64)),
              HasSubstr("of L1"));
  // One batch overflows L0 and 33 single-batch loads leave most cores idle
  // in the second round.
  EXPECT_THAT(reason(bmm, Batched(MatmulOp::kBatchMatMulV3, 256, 128, 256, 33)),
              HasSubstr("balance"));
  MatmulProblem view = Batched(MatmulOp::kBatchMatMulV3, 32, 32, 32, 64);
  view.batch.a_interleaved = true;
  EXPECT_THAT(reason(bmm, view), HasSubstr("A is a transposed"));
  MatmulProblem gelu = Batched(MatmulOp::kFusedMatMul, 32, 32, 32, 64);
  gelu.fused.op = FusedOp::kGeluTanh;
  EXPECT_THAT(reason(fused, gelu), HasSubstr("gelu"));
}

}  // namespace
}  // namespace npu::tiling
