// ASW_BASIC and its FusedMatMul variant: the batch-context block search,
// the four-buffer rule with a bias, the fp32 split-K and transposed-view
// API levels and innerBatch. Expected words are CANN's
// (batch_matmul_v3_asw_basic_tiling.cpp), checked against its compiled host
// tiling.
#include "server/tiling/strategies/batch_data_parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

TEST(BatchDataParallelTest, Fp32SplitKUsesTheBasicApi) {
  MatmulProblem p = Batched(MatmulOp::kBatchMatMulV3, 100, 300, 4096, 3, DataType::kFloat32);
  p.has_bias = true;
  p.dtype_bias = DataType::kFloat32;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "ASW_BASIC");
  EXPECT_EQ(d->plan.key.Encode(), 0x1u);  // BASIC (split K), FOR_BATCH
  EXPECT_EQ(d->plan.block_dim, 32u);      // all cores, while word 0 counts 30
  EXPECT_THAT(d->plan.data.RawWords(),
              ElementsAre(30, 100, 300, 4096, 64, 64, 256, 64, 64, 128, 4096, 1, 1, 1, 1, 0, 0,
                          33686016, 0, 64, 1, 4096, 0, 3, 1));
  EXPECT_TRUE(BatchUsesFp32SplitK(p, DeriveFacts(p)));
  p.hf32 = true;
  EXPECT_FALSE(BatchUsesFp32SplitK(p, DeriveFacts(p)));
}

TEST(BatchDataParallelTest, FusedBatchKey) {
  MatmulProblem p = Batched(MatmulOp::kFusedMatMul, 300, 500, 700, 3);
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "ASWT_BASIC_INHERITED_FROM_BMMV3");
  EXPECT_EQ(d->plan.key.Encode(), 0x401u);  // BASIC, FUSED_BATCH
  EXPECT_THAT(d->plan.data.RawWords(),
              ElementsAre(24, 300, 500, 700, 160, 128, 256, 160, 128, 64, 700, 1, 1, 1, 1, 0, 0,
                          33686016, 0, 160, 1, 700, 0, 3, 1));
}

TEST(BatchDataParallelTest, BothTransposedViewsWalkTheBatchesInside) {
  MatmulProblem p = Batched(MatmulOp::kBatchMatMulV3, 300, 500, 700, 3);
  p.batch.a_interleaved = p.batch.b_interleaved = true;
  const BatchDataParallelStrategy strategy;
  const ProblemFacts facts = DeriveFacts(p);
  ASSERT_TRUE(strategy.IsCapable(p, facts, Chip950()).ok);
  absl::StatusOr<TilingPlan> plan = strategy.DoTiling(p, facts, Chip950());
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->key.api_level, ApiLevel::kBasic);
  EXPECT_EQ(Get(plan->data, BatchBasicField::kInnerBatch), 3u);
  // One view alone is not supported.
  p.batch.a_interleaved = false;
  Capability c = strategy.IsCapable(p, DeriveFacts(p), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("only one input"));
}

TEST(BatchDataParallelTest, ViewsWithADimOfOneAreContiguous) {
  // A batch of 1 gives the views the strides of contiguous tensors: CANN
  // keeps the tensor API and walks no inner batch.
  MatmulProblem p = Batched(MatmulOp::kBatchMatMulV3, 16, 200, 52, 1, DataType::kBFloat16);
  p.trans_b = true;
  p.batch.a_interleaved = p.batch.b_interleaved = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "ASW_BASIC");
  EXPECT_EQ(d->plan.key.Encode(), 0x42u);  // TENSOR, B transposed
  EXPECT_THAT(d->plan.data.RawWords(), ElementsAre(13, 16, 200, 52, 16, 16, 64, 16, 16, 64, 52, 1,
                                                   1, 1, 1, 0, 0, 33686528, 0, 16, 1, 52, 0, 1, 1));
  EXPECT_FALSE(ATransposedView(p));
  p.batch.a = p.batch.b = {2};
  EXPECT_TRUE(ATransposedView(p));
  EXPECT_TRUE(BTransposedView(p));
  p.n = 1;  // B viewed [2, 1, 52]
  EXPECT_FALSE(BTransposedView(p));
}

TEST(BatchDataParallelTest, BroadcastIsNotItsCase) {
  MatmulProblem p = Batched(MatmulOp::kBatchMatMulV3, 300, 500, 700, 3);
  p.batch.a = {3, 1};
  p.batch.b = {3, 4};
  const BatchDataParallelStrategy strategy;
  Capability c = strategy.IsCapable(p, DeriveFacts(p), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("batches differ"));
}

}  // namespace
}  // namespace npu::tiling
