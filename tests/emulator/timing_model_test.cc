// The timing model's headline figures, through Emulate() in timing-only
// mode: the seeds' Stream-K comparison and a cube-bound large square.
#include "emulator/timing_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "emulator/emulator.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::BuiltinPlan;
using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using tiling::KernelModel;
using tiling::MatmulProblem;
using tiling::TilingPlan;

// The data-parallel plan of the seeds' comparison: 256x256 tiles, the whole
// K on one core, so only mCnt * nCnt cores work.
TilingPlan DataParallelFrom(const TilingPlan& stream_k, uint64_t k) {
  TilingPlan plan = stream_k;
  plan.strategy = "BASIC_ASWT";
  plan.key.model = KernelModel::kBasic;
  plan.kernel_type = tiling::KernelType::kAicOnly;
  plan.block.m_l1 = plan.block.base_m;
  plan.block.n_l1 = plan.block.base_n;
  plan.block.single_core_k = k;
  plan.block.k_cnt = 1;
  plan.block.m_tail_cnt = plan.block.n_tail_cnt = 1;
  return plan;
}

// A fractal row is 32 bytes of K: 16-bit inputs go 16 deep per cycle, fp32
// 8 deep at the architecture's rate, so fp16 peaks at 4096 MACs per cycle.
TEST(ChipModelTest, CubeRateFollowsTheElementBits) {
  EXPECT_EQ(CubeFractalK(tiling::DataType::kFloat16), 16u);
  EXPECT_EQ(CubeFractalK(tiling::DataType::kBFloat16), 16u);
  EXPECT_EQ(CubeFractalK(tiling::DataType::kFloat32), 8u);
  const ChipModel chip = ChipModel::FromSpec(Chip950());
  EXPECT_EQ(chip.PeakMacsPerCycle(tiling::DataType::kFloat16, false), 4096.0);
  EXPECT_EQ(chip.MmadCycles(32, 32, 33, tiling::DataType::kFloat16, false), 4u * 3);
  EXPECT_EQ(chip.MmadCycles(16, 16, 16, tiling::DataType::kFloat32, true), 2u);
  EXPECT_EQ(chip.MmadCycles(16, 16, 16, tiling::DataType::kFloat32, false),
            2 * chip.CubeCyclesPerFractal(tiling::DataType::kFloat32, false));
}

TEST(TimingModelTest, StreamKBeatsDataParallelOnTheSeedsShape) {
  // seeds/000 section 1: M=N=512, K=16384 fp16 with 256x256 blocks gives
  // mCnt*nCnt=4 tiles, so data-parallel keeps 4 of 24 cores busy; Stream-K
  // splits each tile's K over kCnt=24/4=6 cores ("4 x kCnt" pieces, close to
  // all cores), an ideal 6x of the kernel's time (the task's fixed launch
  // cost aside). The workspace round trip and the AIV reduction keep the
  // model's figure below that.
  const tiling::ChipSpec chip = Chip950(24);
  const MatmulProblem problem = Problem(512, 512, 16384);
  const TilingPlan stream_k = BuiltinPlan(problem, chip);
  ASSERT_EQ(stream_k.key.model, KernelModel::kStreamK);
  ASSERT_EQ(stream_k.block.base_m, 256u);
  ASSERT_EQ(stream_k.block.k_cnt, 6u);
  const TilingPlan data_parallel = DataParallelFrom(stream_k, problem.k);
  EmulatorOptions options;
  options.timing_only = true;
  absl::StatusOr<EmulationResult> sk = Emulate(stream_k, problem, chip, {}, options);
  absl::StatusOr<EmulationResult> dp = Emulate(data_parallel, problem, chip, {}, options);
  ASSERT_THAT(sk, IsOk());
  ASSERT_THAT(dp, IsOk());
  int busy_dp_cores = 0;
  for (const CoreStats& core : dp->stats.cores) busy_dp_cores += core.units > 0 ? 1 : 0;
  EXPECT_EQ(busy_dp_cores, 4);
  EXPECT_EQ(dp->stats.bound, "CUBE");
  const double speedup =
      static_cast<double>(dp->stats.kernel_cycles) / static_cast<double>(sk->stats.kernel_cycles);
  RecordProperty("stream_k_speedup", absl::StrCat(speedup));
  EXPECT_GT(speedup, 4.0);  // the model gives 4.8x
  EXPECT_LT(speedup, 6.0);
}

TEST(TimingModelTest, LargeSquareFp16IsCubeBoundNearPeak) {
  const MatmulProblem problem = Problem(8192, 8192, 8192);
  const TilingPlan plan = BuiltinPlan(problem, Chip950());
  EmulatorOptions options;
  options.timing_only = true;
  absl::StatusOr<EmulationResult> result = Emulate(plan, problem, Chip950(), {}, options);
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->stats.bound, "CUBE");
  EXPECT_GT(result->stats.cube_utilization, 0.85);
  EXPECT_LE(result->stats.cube_utilization, 1.0);
  // 8192^3 MACs at 4096 per cycle on 32 cores is 4.19M cycles at best.
  EXPECT_GE(result->stats.total_cycles, 8192ull * 8192 * 8192 / (4096 * 32));
}

}  // namespace
}  // namespace npu::emu
