#include "emulator/work_estimate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "emulator/program.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::BuiltinPlan;
using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using tiling::MatmulProblem;
using tiling::TilingPlan;

TEST(EstimateEmulationWorkTest, StreamedPlanCountsBlocksStepsAndTiles) {
  TilingPlan plan;
  plan.kernel_type = tiling::KernelType::kAicOnly;
  plan.key.model = tiling::KernelModel::kBasic;
  plan.block.base_m = plan.block.base_n = 128;
  plan.block.m_l1 = plan.block.n_l1 = 256;
  plan.block.base_k = 64;
  const EmulationWork work = EstimateEmulationWork(plan, Problem(1000, 512, 1000));
  EXPECT_EQ(work.base_blocks, 8u * 4);
  EXPECT_EQ(work.k_steps, 16u);
  EXPECT_EQ(work.units, 4u * 2);
  EXPECT_EQ(work.min_ops, 32u * 16);
  EXPECT_EQ(work.why, "32 base blocks x 16 K steps");
  EXPECT_EQ(work.expected_ops, 3u * 32 * 16 + 8);
}

TEST(EstimateEmulationWorkTest, SaturatesInsteadOfWrapping) {
  TilingPlan plan;
  plan.kernel_type = tiling::KernelType::kAicOnly;
  plan.block.base_m = plan.block.base_n = plan.block.base_k = 16;
  plan.block.m_l1 = plan.block.n_l1 = 16;
  const int64_t huge = int64_t{1} << 40;
  const EmulationWork work = EstimateEmulationWork(plan, Problem(huge, huge, huge));
  EXPECT_EQ(work.min_ops, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(work.expected_ops, std::numeric_limits<uint64_t>::max());
}

// The lower bound never exceeds the operations BuildPrograms() emits.
TEST(EstimateEmulationWorkTest, MinOpsBoundsTheBuiltPrograms) {
  const tiling::ChipSpec chip = Chip950();
  for (int64_t m : {1, 100, 2048}) {
    for (int64_t n : {16, 1000, 4096}) {
      for (int64_t k : {32, 1024, 6000}) {
        const MatmulProblem problem = Problem(m, n, k);
        const TilingPlan plan = BuiltinPlan(problem, chip);
        absl::StatusOr<tiling::Schedule> schedule = tiling::ExpandSchedule(plan, problem, chip);
        ASSERT_THAT(schedule, IsOk());
        absl::StatusOr<ProgramSet> programs =
            BuildPrograms(*schedule, plan, problem, ChipModel::FromSpec(chip), {});
        ASSERT_THAT(programs, IsOk());
        const EmulationWork work = EstimateEmulationWork(plan, problem);
        EXPECT_LE(work.min_ops, programs->total_ops)
            << m << "x" << n << "x" << k << " " << plan.strategy << ": " << work.why;
        EXPECT_GT(work.min_ops, 0u);
      }
    }
  }
}

}  // namespace
}  // namespace npu::emu
