#include "server/tiling/custom_plans.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/tiling/registry.h"
#include "server/tiling/strategy_id.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::BuiltinPlan;
using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;

bool IsStreamedAswt(const TilingPlan& plan) {
  return FindStrategyId(plan.strategy) == StrategyId::kSwizzledDataParallel &&
         plan.key.full_load == FullLoad::kNone && plan.key.l0c2out == L0cToOut::kOnTheFly;
}

// Given CANN's own block, the engine's streamed-plan builder reproduces
// CANN's streamed BASIC_ASWT plan: the rules are the strategy's.
TEST(StreamedAswtPlanTest, ReproducesCannsPlanForCannsBlock) {
  const ChipSpec chip = Chip950();
  int compared = 0;
  for (int64_t m : {64, 700, 2048, 5000}) {
    for (int64_t n : {96, 1000, 4096}) {
      for (int64_t k : {256, 3000, 9000}) {
        for (DataType dtype : {DataType::kFloat16, DataType::kFloat32}) {
          const MatmulProblem problem = Problem(m, n, k, dtype);
          const TilingPlan cann = BuiltinPlan(problem, chip);
          if (!IsStreamedAswt(cann)) continue;
          absl::StatusOr<TilingPlan> plan =
              StreamedAswtPlan(problem, chip, cann.block.base_m, cann.block.base_n);
          ASSERT_THAT(plan, IsOk());
          ++compared;
          const std::string shape = absl::StrCat(m, "x", n, "x", k);
          EXPECT_EQ(plan->key.model, cann.key.model) << shape;
          EXPECT_EQ(plan->block_dim, cann.block_dim) << shape;
          EXPECT_EQ(plan->block.base_k, cann.block.base_k) << shape;
          EXPECT_EQ(plan->block.k_l1, cann.block.k_l1) << shape;
          EXPECT_EQ(plan->block.step_ka, cann.block.step_ka) << shape;
          EXPECT_EQ(plan->block.l0c_db, cann.block.l0c_db) << shape;
          EXPECT_EQ(plan->block.m_tail_cnt, cann.block.m_tail_cnt) << shape;
          EXPECT_EQ(plan->block.n_tail_cnt, cann.block.n_tail_cnt) << shape;
          EXPECT_THAT(CheckPlanFits(*plan, problem, chip), IsOk()) << shape;
        }
      }
    }
  }
  EXPECT_GT(compared, 5);
}

TEST(StreamedAswtPlanTest, SaysWhyABlockHasNoPlan) {
  // float32 K-inner A: 16384 x 16 blocks leave no 16-deep base_k in L0A.
  EXPECT_THAT(StreamedAswtPlan(Problem(4096, 4096, 4096, DataType::kFloat32), Chip950(), 16384, 16),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       ::testing::HasSubstr("leaves no 16-deep base_k")));
}

TEST(ResidentBandPlanTest, SplitsTheTailAlongTheStreamedAxisOnly) {
  const ChipSpec chip = Chip950();
  const MatmulProblem problem = Problem(1000, 3000, 400);
  ResidentBandShape shape;
  shape.side = L1Residency::kABand;
  shape.band_base = 128;
  shape.band_steps = 2;
  shape.streamed_base = 256;
  shape.streamed_k_steps = 2;
  shape.base_k = BlockBaseK(problem, chip, 128, 256);
  ASSERT_GT(shape.base_k, 0u);
  const TilingPlan plan = ResidentBandPlan(problem, chip, shape);
  EXPECT_EQ(plan.l1_residency, L1Residency::kABand);
  EXPECT_EQ(plan.block.m_l1, 256u);
  EXPECT_EQ(plan.block.base_n, 256u);
  // 4 bands x 12 column tiles = 48 tiles: a tail round of 16 on 32 cores,
  // split in two along N; the band stays whole.
  EXPECT_EQ(plan.block.m_tail_cnt, 1u);
  EXPECT_EQ(plan.block.n_tail_cnt, 2u);
  EXPECT_EQ(plan.block_dim, 32u);
  EXPECT_THAT(CheckPlanFits(plan, problem, chip), IsOk());
}

TEST(StrategyIdTest, NamesRoundTrip) {
  for (StrategyId id : {StrategyId::kZeroK, StrategyId::kVectorMul, StrategyId::kVectorMultiMul,
                        StrategyId::kStreamK, StrategyId::kSwizzledDataParallel}) {
    EXPECT_EQ(FindStrategyId(StrategyName(id)), id);
  }
  EXPECT_EQ(FindStrategyId("BASIC_ASWT/base_128x128"), std::nullopt);
  // The registry lists the built-in strategies by these names.
  for (const std::string& name : MakeBuiltinRegistry().Names(MatmulOp::kMatMulV3)) {
    EXPECT_TRUE(FindStrategyId(name).has_value()) << name;
  }
}

}  // namespace
}  // namespace npu::tiling
