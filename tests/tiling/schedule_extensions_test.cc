// The advisor's plan extensions in the work decomposition: the SWAT window
// length and partial L1 residency. Their defaults must leave every schedule
// exactly as CANN's kernels walk it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/schedule.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::BuiltinPlan;
using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

bool SameUnits(const Schedule& a, const Schedule& b) {
  if (a.units.size() != b.units.size()) return false;
  for (size_t i = 0; i < a.units.size(); ++i) {
    const WorkUnit& x = a.units[i];
    const WorkUnit& y = b.units[i];
    if (x.core != y.core || x.round != y.round || !(x.m == y.m) || !(x.n == y.n) || !(x.k == y.k) ||
        x.workspace_slot != y.workspace_slot) {
      return false;
    }
  }
  return true;
}

TEST(ScheduleExtensionsTest, DefaultsAreCannsWindowAndStreamedOperands) {
  const TilingPlan plan;
  EXPECT_EQ(plan.swat_window_rows, 4u);
  EXPECT_EQ(plan.l1_residency, L1Residency::kStreamed);
  EXPECT_EQ(L1ResidencyName(L1Residency::kABand), "A_BAND");
}

TEST(ScheduleExtensionsTest, WindowOfFourAndZeroMatchCannsWalk) {
  for (const MatmulProblem& problem :
       {Problem(4097, 777, 1999), Problem(3000, 5000, 64), Problem(768, 768, 4096)}) {
    const ChipSpec chip = Chip950(8);
    TilingPlan plan = BuiltinPlan(problem, chip);
    absl::StatusOr<Schedule> cann = ExpandSchedule(plan, problem, chip);
    ASSERT_THAT(cann, IsOk());
    EXPECT_EQ(cann->swat_window_rows, 4u);
    plan.swat_window_rows = 0;
    absl::StatusOr<Schedule> zero = ExpandSchedule(plan, problem, chip);
    ASSERT_THAT(zero, IsOk());
    EXPECT_TRUE(SameUnits(*cann, *zero)) << plan.strategy;
  }
}

TEST(ScheduleExtensionsTest, EveryWindowCoversEveryTileOnce) {
  // Sweep shapes, core counts and windows, including windows longer than
  // the rows of tiles and ones that leave a short tail window.
  for (uint32_t aic : {3u, 8u, 32u}) {
    const ChipSpec chip = Chip950(aic);
    for (const MatmulProblem& problem :
         {Problem(4097, 777, 1999), Problem(2000, 3000, 300), Problem(255, 9000, 64),
          Problem(777, 2048, 16384), Problem(512, 512, 16384)}) {
      TilingPlan plan = BuiltinPlan(problem, chip);
      for (uint32_t window = 1; window <= 9; ++window) {
        SCOPED_TRACE(
            absl::StrCat(plan.strategy, " aic=", aic, " m=", problem.m, " window=", window));
        plan.swat_window_rows = window;
        absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, problem, chip);
        ASSERT_THAT(schedule, IsOk());
        EXPECT_THAT(CheckScheduleCoverage(*schedule, problem), IsOk());
      }
    }
  }
}

TEST(ScheduleExtensionsTest, WindowChangesTheWalkOrder) {
  const MatmulProblem problem = Problem(4096, 4096, 256);  // 16 x 16 tiles
  const ChipSpec chip = Chip950();
  TilingPlan plan = BuiltinPlan(problem, chip);
  ASSERT_EQ(plan.block.base_m, 256u);
  plan.swat_window_rows = 1;
  absl::StatusOr<Schedule> rows = ExpandSchedule(plan, problem, chip);
  ASSERT_THAT(rows, IsOk());
  // Window 1: core c's first tile is row 0, column c (no M-first walk).
  for (const WorkUnit& unit : rows->units) {
    if (unit.round == 0 && unit.core < 16) {
      EXPECT_EQ(unit.m.begin, 0u) << unit.core;
      EXPECT_EQ(unit.n.begin, 256u * unit.core);
    }
  }
}

TEST(ScheduleExtensionsTest, ResidencyNeedsTheStreamedDataParallelModel) {
  const ChipSpec chip = Chip950();
  TilingPlan full_load = BuiltinPlan(Problem(48, 9000, 64), chip);
  ASSERT_EQ(full_load.key.full_load, FullLoad::kA);
  full_load.l1_residency = L1Residency::kABand;
  EXPECT_THAT(ExpandSchedule(full_load, Problem(48, 9000, 64), chip),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("l1_residency")));
  TilingPlan stream_k = BuiltinPlan(Problem(512, 512, 16384), chip);
  ASSERT_EQ(stream_k.key.model, KernelModel::kStreamK);
  stream_k.l1_residency = L1Residency::kBBand;
  EXPECT_THAT(ExpandSchedule(stream_k, Problem(512, 512, 16384), chip),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("STREAM_K")));
  TilingPlan streamed = BuiltinPlan(Problem(4097, 777, 1999), chip);
  streamed.l1_residency = L1Residency::kABand;
  absl::StatusOr<Schedule> schedule = ExpandSchedule(streamed, Problem(4097, 777, 1999), chip);
  ASSERT_THAT(schedule, IsOk());
  EXPECT_EQ(schedule->l1_residency, L1Residency::kABand);
}

}  // namespace
}  // namespace npu::tiling
