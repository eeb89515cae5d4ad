// QuantPlanWithBlock: CANN's plan with the caller's block keeps CANN's
// struct, modes and key (the streamed sibling of an A-full-load kernel),
// re-derives the window as CANN does (CANN's own block gives CANN's words
// back), and refuses what the kernels would not take.
#include "server/tiling/custom_plans.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/tiling/builtin_strategies.h"
#include "tests/testing/kernel_schedules.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling::quant {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

MatmulProblem W8A8(int64_t m, int64_t n, int64_t k) {
  MatmulProblem p = npu::testing::W8A8Problem(m, n, k);
  p.trans_b = true;
  p.dtype_c = DataType::kBFloat16;
  return p;
}

TilingPlan Cann(const MatmulProblem& problem) {
  absl::StatusOr<TilingDecision> decision = MakeBuiltinRegistry().Decide(problem, Chip950());
  EXPECT_THAT(decision, IsOk());
  return decision.ok() ? decision->plan : TilingPlan{};
}

TEST(QuantPlanWithBlockTest, CannsOwnBlockGivesCannsWordsBack) {
  // Several rounds of 256 x 256 blocks, no full load: the high-level
  // struct's window, L1 depths and UB split are CANN's for CANN's block.
  const MatmulProblem problem = W8A8(4096, 7168, 8192);
  const TilingPlan cann = Cann(problem);
  ASSERT_EQ(cann.data.kernel, KernelId::kQuantHighLevel);
  ASSERT_FALSE(KeepsAInL1(cann));
  absl::StatusOr<QuantBlockChoice> own = QuantBlockOfPlan(cann);
  ASSERT_THAT(own, IsOk());
  absl::StatusOr<TilingPlan> plan = QuantPlanWithBlock(problem, Chip950(), cann, *own);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->data.RawWords(), cann.data.RawWords());
  EXPECT_EQ(plan->key.Encode(), cann.key.Encode());
  EXPECT_EQ(plan->block_dim, cann.block_dim);
}

TEST(QuantPlanWithBlockTest, AFullLoadKernelIsReblockedOnItsStreamedSibling) {
  const MatmulProblem problem = W8A8(16, 8192, 8192);
  const TilingPlan cann = Cann(problem);
  ASSERT_TRUE(KeepsAInL1(cann)) << "key kernel " << int{cann.key.quant_kernel};
  absl::StatusOr<QuantBlockChoice> choice = DeepestQuantStaging(problem, Chip950(), 16, 64, 0);
  ASSERT_THAT(choice, IsOk());
  absl::StatusOr<TilingPlan> plan = QuantPlanWithBlock(problem, Chip950(), cann, *choice);
  ASSERT_THAT(plan, IsOk());
  EXPECT_FALSE(KeepsAInL1(*plan));
  EXPECT_EQ(plan->key.quant_kernel + 1, cann.key.quant_kernel);
  EXPECT_EQ(plan->data.Get("matmulTiling.baseN"), 64u);
  EXPECT_EQ(plan->data.Get("matmulTiling.depthA1"), 2 * choice->step_k);
  // 512 tiles on every core.
  EXPECT_EQ(plan->block_dim, Chip950().aic_num);
}

TEST(QuantPlanWithBlockTest, DeepestStagingFitsL0AndL1) {
  const MatmulProblem problem = W8A8(1024, 4096, 8192);
  for (uint64_t side : {16u, 64u, 128u, 256u}) {
    absl::StatusOr<QuantBlockChoice> c = DeepestQuantStaging(problem, Chip950(), side, 256, 0);
    ASSERT_THAT(c, IsOk());
    EXPECT_EQ(c->base_k % 32, 0u);
    EXPECT_LE(2 * 256 * c->base_k, Chip950().l0b_bytes);
    EXPECT_LT(c->base_k, 4096u);
    EXPECT_GE(c->step_k, 1u);
    EXPECT_LE(c->step_k, 4u);
    EXPECT_LE(2 * (side + 256) * c->step_k * c->base_k, Chip950().l1_bytes);
  }
}

TEST(QuantPlanWithBlockTest, RefusesOtherOpsAndStreamK) {
  const MatmulProblem problem = W8A8(256, 1024, 1024);
  const TilingPlan cann = Cann(problem);
  EXPECT_THAT(QuantBlockAlignOf(npu::testing::Problem(64, 64, 64, DataType::kFloat16)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  TilingPlan stream_k = cann;
  stream_k.data.kernel = KernelId::kQuantStreamK;
  EXPECT_THAT(QuantPlanWithBlock(problem, Chip950(), stream_k, {64, 64, 128, 1}).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("MX_STREAMK")));
  EXPECT_THAT(QuantPlanWithBlock(problem, Chip950(), cann, {64, 40, 128, 1}).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("alignment")));
}

}  // namespace
}  // namespace npu::tiling::quant
