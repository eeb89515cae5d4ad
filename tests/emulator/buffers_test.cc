#include "emulator/buffers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "server/tiling/registry.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::BuiltinPlan;
using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
using tiling::MatmulProblem;
using tiling::TilingPlan;

absl::Status Check(const TilingPlan& plan, const MatmulProblem& problem,
                   const tiling::ChipSpec& chip) {
  absl::StatusOr<tiling::Schedule> schedule = tiling::ExpandSchedule(plan, problem, chip);
  if (!schedule.ok()) return schedule.status();
  return CheckBuffers(*schedule, plan, problem, ChipModel::FromSpec(chip));
}

TEST(CheckBuffersTest, NamesTheFieldOfEachCubeBuffer) {
  const tiling::ChipSpec chip = Chip950();
  const MatmulProblem problem = Problem(2048, 2048, 1024);
  const TilingPlan base = BuiltinPlan(problem, chip);
  ASSERT_THAT(Check(base, problem, chip), IsOk());

  TilingPlan plan = base;
  plan.block.base_k *= 8;
  EXPECT_THAT(Check(plan, problem, chip),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat("tiling field baseK (baseM=", base.block.base_m,
                                              ")=", plan.block.base_k, " overflows L0A"))));
  plan = base;
  plan.block.base_m = 512;
  plan.block.base_n = 512;
  plan.block.base_k = 16;
  EXPECT_THAT(Check(plan, problem, chip),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overflows L0C")));
  plan = base;
  plan.block.k_l1 = 64 * base.block.k_l1;
  EXPECT_THAT(
      Check(plan, problem, chip),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr(absl::StrCat("tiling field kL1=", plan.block.k_l1, " overflows L1"))));
}

// The emulator and the engine share one formula per buffer: over a sweep of
// strategy plans with their blocks and stages pushed past the chip, the
// engine's CheckPlanFits() rejects a plan exactly when the emulator does.
TEST(CheckBuffersTest, AgreesWithTheEnginesFitCheck) {
  const tiling::ChipSpec chip = Chip950();
  int rejected = 0, checked = 0;
  for (int64_t m : {64, 1000, 4096}) {
    for (int64_t n : {128, 3000}) {
      for (int64_t k : {256, 8192}) {
        for (bool bias : {false, true}) {
          MatmulProblem problem = Problem(m, n, k);
          problem.has_bias = bias;
          const TilingPlan base = BuiltinPlan(problem, chip);
          if (base.kernel_type == tiling::KernelType::kAivOnly) continue;
          for (uint64_t scale : {1, 2, 4, 8}) {
            for (int what = 0; what < 3; ++what) {
              TilingPlan plan = base;
              if (what == 0) plan.block.base_k *= scale;
              if (what == 1) plan.block.k_l1 *= scale;
              if (what == 2) plan.block.l0c_db *= scale;
              plan.block.k_l1 = std::max(plan.block.k_l1, plan.block.base_k);
              const absl::Status engine = tiling::CheckPlanFits(plan, problem, chip);
              const absl::Status emulator = Check(plan, problem, chip);
              if (!emulator.ok() && emulator.code() != absl::StatusCode::kInvalidArgument) {
                continue;  // a schedule the expansion refuses: not a buffer
              }
              ++checked;
              rejected += emulator.ok() ? 0 : 1;
              EXPECT_EQ(engine.ok(), emulator.ok())
                  << m << "x" << n << "x" << k << " bias " << bias << " scale " << scale
                  << " field " << what << ": engine " << engine << ", emulator " << emulator;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(rejected, 10);  // the sweep does reach past the buffers
}

}  // namespace
}  // namespace npu::emu
