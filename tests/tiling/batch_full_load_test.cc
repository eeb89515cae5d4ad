// AL1_FULL_LOAD_BASIC / BL1_FULL_LOAD_BASIC: which side may stay resident,
// the streamed side's minimum work, and the plans on the batch-context
// planners. Expected words are CANN's
// (batch_matmul_v3_asw_{al1,bl1}_full_load_basic_tiling.cpp), checked
// against its compiled host tiling.
#include "server/tiling/strategies/batch_full_load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

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

TEST(BatchFullLoadTest, UnbatchedAStaysResident) {
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Batched(64, 2000, 64, {1}, {300}));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "AL1_FULL_LOAD_BASIC");
  EXPECT_EQ(d->plan.key.Encode(), 0x10002u);  // TENSOR, A_FULL_LOAD
  EXPECT_EQ(d->plan.block_dim, 32u);
  EXPECT_THAT(d->plan.data.RawWords(),
              ElementsAre(32, 64, 2000, 64, 64, 128, 64, 256, 128, 64, 64, 1, 1, 1, 1, 0, 0,
                          16909312, 0, 256, 1, 64, 0, 300, 1));
}

TEST(BatchFullLoadTest, UnbatchedBStaysResident) {
  // A transposed keeps A's batch out of M, so B is the unbatched side.
  MatmulProblem p = Batched(3000, 100, 512, {300}, {}, DataType::kBFloat16);
  p.trans_a = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "BL1_FULL_LOAD_BASIC");
  EXPECT_EQ(d->plan.key.Encode(), 0x20012u);
  EXPECT_THAT(d->plan.data.RawWords(),
              ElementsAre(32, 3000, 100, 512, 128, 112, 192, 128, 256, 64, 512, 1, 1, 1, 1, 0, 0,
                          33686528, 0, 128, 1, 1, 0, 300, 1));
}

TEST(BatchFullLoadTest, FusedKeyIsBasicWithFusedBatch) {
  // FusedMatMul has no batch broadcast: only all-ones batches leave A
  // unbatched.
  MatmulProblem p = Batched(64, 2000, 64, {300}, {300});
  p.op = MatmulOp::kFusedMatMul;
  const std::unique_ptr<Strategy> owned_strategy = InheritedFullLoad(FullLoad::kA);
  const Strategy& strategy = *owned_strategy;
  EXPECT_EQ(strategy.name(), "AL1_FULL_LOAD_BASIC_INHERITED_FROM_BMMV3");
  Capability c = strategy.IsCapable(p, DeriveFacts(p), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("A has 300 batches"));

  MatmulProblem single = Batched(16, 68112, 16, {1}, {1});
  single.op = MatmulOp::kFusedMatMul;
  single.fused.op = FusedOp::kRelu;
  single.trans_a = single.trans_b = true;
  const ProblemFacts facts = DeriveFacts(single);
  ASSERT_TRUE(strategy.IsCapable(single, facts, Chip950()).ok);
  absl::StatusOr<TilingPlan> plan = strategy.DoTiling(single, facts, Chip950());
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->key.Encode(), 0x5010431u);  // BASIC, FUSED_BATCH, A_FULL_LOAD, RELU
}

TEST(BatchFullLoadTest, Refusals) {
  const BatchFullLoadStrategy a_side(FullLoad::kA);
  const BatchFullLoadStrategy b_side(FullLoad::kB);
  const ChipSpec chip = Chip950();
  auto reason = [&](const Strategy& s, const MatmulProblem& p) {
    Capability c = s.IsCapable(p, DeriveFacts(p), chip);
    EXPECT_FALSE(c.ok);
    return c.reason.str();
  };
  EXPECT_THAT(reason(a_side, Batched(300, 2000, 64, {1}, {300})), HasSubstr("M=300 > 256"));
  // 30 streamed B blocks fit in L1 of the cores and give them under 4
  // rounds each: not worth keeping A resident.
  EXPECT_THAT(reason(a_side, Batched(64, 256, 64, {1}, {30})), HasSubstr("too small"));
  EXPECT_THAT(reason(a_side, Batched(256, 2000, 1024, {1}, {300})), HasSubstr("needs 2*"));
  MatmulProblem nz = Batched(64, 2000, 64, {1}, {300}, DataType::kFloat32);
  nz.format_b = Format::kFractalNz;
  EXPECT_THAT(reason(a_side, nz), HasSubstr("FRACTAL_NZ"));
  EXPECT_THAT(reason(b_side, Batched(64, 2000, 64, {1}, {300})), HasSubstr("B has 300"));
}

}  // namespace
}  // namespace npu::tiling
