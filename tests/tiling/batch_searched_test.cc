// ITER_BATCH_BROADCAST_BASICAPI, ITER_BATCH and BASE: their capability
// rules (which CANN strategy a problem reaches) and their plans around the
// high-level API's tiling search.
#include "server/tiling/strategies/batch_searched.h"

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
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

TEST(BatchSearchedTest, OneSidedBroadcastReachesIterBatchBroadcast) {
  const BatchIterateBroadcastStrategy strategy;
  // A broadcast in the inner slot: one A matrix per 300 B matrices.
  MatmulProblem p = Batched(64, 96, 128, {8, 1}, {8, 300});
  const ProblemFacts facts = DeriveFacts(p);
  Capability c = strategy.IsCapable(p, facts, Chip950());
  EXPECT_TRUE(c.ok) << c.reason;
  EXPECT_THAT(c.reason.str(), HasSubstr("A broadcast in batch slot 3"));
  // CANN's answer (checked against its compiled tiling): key 0x602, the
  // default run words around 64x96x128 blocks, 10 batches per L1 load, A
  // broadcast in slot 3.
  absl::StatusOr<TilingPlan> plan = strategy.DoTiling(p, facts, Chip950());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->key.Encode(), 0x602u);
  const std::vector<uint32_t> expected = {
      32, 64,    96,    128, 128, 1, 1, 1,    64,   96,  128,      1,  1, 1, 1,  0, 0, 0,
      0,  40960, 24576, 0,   1,   1, 1, 1,    1,    1,   0,        0,  2, 2, 0,  0, 0, 0,
      0,  0,     0,     0,   0,   0, 0, 0,    0,    0,   0,        0,  0, 0, 1,  1, 1, 1,
      1,  0,     0,     0,   4,   0, 8, 2400, 2400, 1,   1,        1,  1, 1, 1,  1, 8, 8,
      8,  1,     300,   300, 0,   1, 1, 64,   96,   128, 16843264, 64, 1, 0, 10, 1, 3, 4};
  EXPECT_EQ(plan->data.RawWords(), expected);
}

TEST(BatchSearchedTest, IterBatchBroadcastRefusals) {
  const BatchIterateBroadcastStrategy strategy;
  auto reason = [&](const MatmulProblem& p) {
    Capability c = strategy.IsCapable(p, DeriveFacts(p), Chip950());
    EXPECT_FALSE(c.ok);
    return c.reason.str();
  };
  EXPECT_THAT(reason(Batched(64, 96, 128, {8, 2}, {1, 2})), HasSubstr("batch=16 <= aic"));
  EXPECT_THAT(reason(Batched(64, 96, 128, {8, 1}, {1, 300})), HasSubstr("both sides"));
  EXPECT_THAT(reason(Batched(64, 96, 128, {1, 1, 8}, {4, 300, 8})), HasSubstr("more than one"));
  EXPECT_THAT(reason(Batched(64, 96, 128, {40}, {40})), HasSubstr("no broadcast"));
  EXPECT_THAT(reason(Batched(64, 96, 128, {3, 1}, {8, 300})), HasSubstr("differs"));
}

TEST(BatchSearchedTest, BaseTilesWhatNoBatchedStrategyTakes) {
  // Two broadcast slots: no batched strategy but BASE applies. CANN's answer
  // (checked against its compiled tiling): key 0x502, 32 cores, 20 MiB and
  // these 90 words.
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Batched(64, 96, 128, {1, 1, 8}, {4, 300, 8}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->plan.strategy, "BASE");
  EXPECT_EQ(d->plan.key.Encode(), 0x502u);
  EXPECT_EQ(d->plan.block_dim, 32u);
  EXPECT_EQ(d->plan.workspace_bytes, 20971520u);
  const std::vector<uint32_t> expected = {
      32,  64,    96,    128, 128, 256, 256, 128,  256,  256, 64,       4,   4, 1, 1, 0, 0, 0,
      0,   40960, 24576, 0,   1,   1,   1,   1,    2,    2,   0,        0,   2, 2, 1, 0, 0, 0,
      0,   0,     0,     0,   0,   0,   0,   0,    0,    0,   0,        0,   0, 0, 1, 1, 1, 1,
      1,   0,     0,     0,   4,   1,   8,   9600, 9600, 1,   1,        1,   1, 1, 4, 4, 1, 300,
      300, 8,     8,     8,   0,   1,   1,   64,   96,   128, 16843264, 256, 1, 0, 1, 1, 4, 4};
  EXPECT_EQ(d->plan.data.RawWords(), expected);
}

TEST(BatchSearchedTest, IterBatchNeedsTwoBatchesPerLoad) {
  const BatchIterateSearchedStrategy strategy;
  MatmulProblem p = Batched(512, 512, 512, {64}, {64});
  Capability c = strategy.IsCapable(p, DeriveFacts(p), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("batch(es) per load"));
  MatmulProblem small = Batched(32, 32, 32, {64}, {64});
  const ProblemFacts facts = DeriveFacts(small);
  ASSERT_TRUE(strategy.IsCapable(small, facts, Chip950()).ok);
  absl::StatusOr<TilingPlan> plan = strategy.DoTiling(small, facts, Chip950());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->detail.str(), HasSubstr("iterBatch=2"));
  EXPECT_EQ(plan->key.Encode(), 0x100u);  // HIGH_LEVEL, ITER_BATCH_SINGLE_BIAS
  EXPECT_EQ(Get(plan->data, HighLevelBatchField::kIterBatch), 2u);
  EXPECT_EQ(Get(plan->data, HighLevelBatchField::kBatchNum), 2u);
  EXPECT_EQ(Get(plan->data, HighLevelBatchField::kBatchOutNum), 1u);
}

TEST(BatchSearchedTest, IterBatchMatchesCann) {
  // The registry reaches ITER_BATCH; CANN's answer (checked against its
  // compiled tiling): key 0x150, 90 words.
  MatmulProblem p = Batched(19, 659, 15, {40}, {40});
  p.trans_a = true;
  p.trans_b = true;
  p.has_bias = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->plan.strategy, "ITER_BATCH");
  EXPECT_EQ(d->plan.key.Encode(), 336u);
  const std::vector<uint32_t> expected = {
      32, 19,   659,  15, 15, 19, 659, 15, 256, 256, 64,       1,   3, 1, 3, 1, 0, 0,
      0,  2112, 4096, 0,  1,  1,  1,   1,  1,   1,   0,        0,   2, 2, 1, 0, 0, 0,
      0,  0,    0,    0,  0,  0,  0,   0,  0,   0,   0,        0,   2, 0, 1, 1, 1, 1,
      1,  0,    0,    0,  4,  0,  40,  40, 40,  1,   1,        1,   1, 1, 1, 1, 1, 1,
      1,  40,   40,   40, 2,  1,  1,   32, 672, 64,  16843264, 256, 1, 0, 1, 1, 4, 4};
  EXPECT_EQ(d->plan.data.RawWords(), expected);
}

TEST(BatchSearchedTest, BaseIsAlwaysCapable) {
  const BatchSearchedFallbackStrategy strategy;
  MatmulProblem p = Batched(64, 96, 128, {40}, {40});
  const ProblemFacts facts = DeriveFacts(p);
  EXPECT_TRUE(strategy.IsCapable(p, facts, Chip950()).ok);
  absl::StatusOr<TilingPlan> plan = strategy.DoTiling(p, facts, Chip950());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->detail.str(), HasSubstr("TENSOR_LEVEL"));
  EXPECT_EQ(plan->data.struct_name(), "BatchMatMulV3TilingData");
  // The search's own words survive: L1 of its depths, one L0C block.
  EXPECT_EQ(Get(plan->data, HighLevelBatchField::kShareL1Size), 40960u);
  EXPECT_EQ(Get(plan->data, HighLevelBatchField::kShareL0cSize), 24576u);
  EXPECT_EQ(Get(plan->data, HighLevelBatchField::kCBatchDimAll), 40u);
}

TEST(BatchSearchedTest, FailedSearchFailsTheStrategy) {
  const BatchSearchedFallbackStrategy strategy;
  MatmulProblem p = Batched(1, 11849, 116, {2, 1}, {1, 3});
  p.trans_b = true;
  // L0C of 12 KiB leaves no L0 block the search accepts.
  ChipSpec chip = Chip950();
  chip.aic_num = 49;
  chip.l1_bytes = 178176;
  chip.l0c_bytes = 12288;
  chip.ub_bytes = 19456;
  EXPECT_THAT(strategy.DoTiling(p, DeriveFacts(p), chip),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("ml0/nl0/kl0 is zero")));
}

// A {1, 0, 2} view of A with a 2-D B is CANN's non-contiguous slice: M is
// batch * m rows, merged with A's batch once more, and the slice words give
// the rows per batch and the batch stride. CANN's own answer for A [7, 58,
// 64] (a view) x B [64, 256], bf16: BASE, key 1282, M 2842, sliceM 58,
// srcNdStride 64.
TEST(BatchSearchedTest, ViewOfATimesTwoDimensionalBIsCannsSlice) {
  MatmulProblem p = Batched(58, 256, 64, {7}, {}, DataType::kBFloat16);
  p.batch.a_interleaved = true;
  absl::StatusOr<TilingDecision> decision = DecideBuiltin(p);
  ASSERT_TRUE(decision.ok()) << decision.status();
  EXPECT_EQ(decision->plan.strategy, "BASE");
  EXPECT_EQ(decision->plan.key.Encode(), 1282u);
  const std::vector<uint32_t> words = decision->plan.data.RawWords();
  ASSERT_EQ(words.size(), 90u);
  EXPECT_EQ(words[1], 2842u);
  EXPECT_EQ(words[83], 58u);
  EXPECT_EQ(words[84], 64u);
}

TEST(BatchSearchedTest, ViewOfAIsRefusedWhereCannReadsNoView) {
  MatmulProblem transposed = Batched(58, 256, 64, {7}, {}, DataType::kBFloat16);
  transposed.batch.a_interleaved = true;
  transposed.trans_a = true;
  EXPECT_THAT(DecideBuiltin(transposed),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("field trans_a")));
  MatmulProblem four_d_b = Batched(58, 131072, 63, {7}, {8, 7}, DataType::kBFloat16);
  four_d_b.batch.a_interleaved = true;
  EXPECT_THAT(DecideBuiltin(four_d_b),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("a_batch_interleaved needs a 2-D or 3-D B")));
  MatmulProblem too_many_rows = Batched(1 << 28, 256, 64, {8}, {}, DataType::kBFloat16);
  too_many_rows.batch.a_interleaved = true;
  EXPECT_THAT(DecideBuiltin(too_many_rows),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("batch * m rows")));
}

}  // namespace
}  // namespace npu::tiling
