#include "server/tiling/schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "server/tiling/builtin_strategies.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

ChipSpec ChipWithCores(uint32_t aic) {
  ChipSpec chip = BuiltinPlatforms().front();
  chip.name = absl::StrCat("test", aic);
  chip.aic_num = aic;
  chip.aiv_num = 2 * aic;
  return chip;
}

MatmulProblem Problem(uint64_t m, uint64_t n, uint64_t k, DataType dtype = DataType::kFloat16) {
  MatmulProblem problem;
  problem.m = static_cast<int64_t>(m);
  problem.n = static_cast<int64_t>(n);
  problem.k = static_cast<int64_t>(k);
  problem.dtype_a = problem.dtype_b = problem.dtype_c = dtype;
  return problem;
}

TilingPlan Decide(const MatmulProblem& problem, const ChipSpec& chip,
                  const std::string& forced = "") {
  StrategyRegistry registry = MakeBuiltinRegistry();
  DecideOptions options;
  options.forced_strategy = forced;
  absl::StatusOr<TilingDecision> decision = registry.Decide(problem, chip, options);
  EXPECT_THAT(decision, IsOk());
  return decision.ok() ? decision->plan : TilingPlan{};
}

// Invariants every schedule keeps, whatever the model.
void ExpectScheduleInvariants(const Schedule& schedule, const TilingPlan& plan,
                              const MatmulProblem& problem, const ChipSpec& chip) {
  EXPECT_THAT(CheckScheduleCoverage(schedule, problem), IsOk());
  std::set<std::pair<uint32_t, uint32_t>> core_rounds;
  for (const WorkUnit& unit : schedule.units) {
    if (unit.core_kind == CoreKind::kAic) {
      EXPECT_LT(unit.core, plan.block_dim);
      EXPECT_LT(unit.core, chip.aic_num);
      // One tile per core per round.
      EXPECT_TRUE(core_rounds.insert({unit.core, unit.round}).second)
          << "core " << unit.core << " round " << unit.round;
    } else {
      EXPECT_LT(unit.core, chip.aiv_num);
    }
  }
}

TEST(ExpandScheduleTest, SweepCoversEveryElementOnce) {
  const uint64_t sizes[] = {1, 15, 16, 200, 256, 257, 777, 1024, 2304, 4100};
  const uint64_t ks[] = {0, 1, 64, 300, 8192, 20000};
  int cases = 0;
  for (uint32_t aic : {8u, 20u, 24u, 32u}) {
    const ChipSpec chip = ChipWithCores(aic);
    for (uint64_t m : sizes) {
      for (uint64_t n : sizes) {
        for (uint64_t k : ks) {
          for (DataType dtype : {DataType::kFloat16, DataType::kFloat32}) {
            if (k == 0 && dtype == DataType::kFloat32) continue;
            MatmulProblem problem = Problem(m, n, k, dtype);
            problem.force_grp_acc_fp32 = dtype == DataType::kFloat32 && (m + n) % 2 == 0;
            const TilingPlan plan = Decide(problem, chip);
            SCOPED_TRACE(absl::StrCat("aic=", aic, " m=", m, " n=", n, " k=", k, " ",
                                      std::string(DataTypeName(dtype)), " ", plan.strategy, " ",
                                      std::string(KernelModelName(plan.key.model))));
            absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, problem, chip);
            ASSERT_THAT(schedule, IsOk());
            ExpectScheduleInvariants(*schedule, plan, problem, chip);
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 2000);
}

TEST(ExpandScheduleTest, TransposedAndBiasedPlansCover) {
  const ChipSpec chip = BuiltinPlatforms().front();
  for (bool trans_a : {false, true}) {
    for (bool trans_b : {false, true}) {
      for (uint64_t m : {96u, 1000u, 5000u}) {
        MatmulProblem problem = Problem(m, 3000, 700);
        problem.trans_a = trans_a;
        problem.trans_b = trans_b;
        problem.has_bias = true;
        const TilingPlan plan = Decide(problem, chip);
        absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, problem, chip);
        ASSERT_THAT(schedule, IsOk());
        ExpectScheduleInvariants(*schedule, plan, problem, chip);
      }
    }
  }
}

TEST(ExpandScheduleTest, AswtWalksTheSwatWindowSerpentine) {
  // 8192^3 fp16 on 32 cores: 256x256 blocks, 32x32 tiles, 32 rounds.
  const ChipSpec chip = BuiltinPlatforms().front();
  const MatmulProblem problem = Problem(8192, 8192, 8192);
  const TilingPlan plan = Decide(problem, chip);
  ASSERT_EQ(plan.block.m_l1, 256u);
  ASSERT_EQ(plan.block.n_l1, 256u);
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, problem, chip);
  ASSERT_THAT(schedule, IsOk());
  EXPECT_EQ(schedule->rounds, 32u);
  EXPECT_EQ(schedule->aic_cores, 32u);
  auto unit_of = [&](uint32_t core, uint32_t round) -> const WorkUnit& {
    for (const WorkUnit& unit : schedule->units) {
      if (unit.core == core && unit.round == round) return unit;
    }
    ADD_FAILURE() << "no unit for core " << core << " round " << round;
    return schedule->units.front();
  };
  // Round 0: the window of four block rows, rows moving fastest.
  EXPECT_EQ(unit_of(0, 0).m, (Range{0, 256}));
  EXPECT_EQ(unit_of(0, 0).n, (Range{0, 256}));
  EXPECT_EQ(unit_of(1, 0).m, (Range{256, 512}));
  EXPECT_EQ(unit_of(3, 0).m, (Range{768, 1024}));
  EXPECT_EQ(unit_of(4, 0).m, (Range{0, 256}));
  EXPECT_EQ(unit_of(4, 0).n, (Range{256, 512}));
  // Tile 128 starts the second window (rows 4..7), which walks N backwards.
  const WorkUnit& second_window = unit_of(0, 4);
  EXPECT_EQ(second_window.m, (Range{1024, 1280}));
  EXPECT_EQ(second_window.n, (Range{8192 - 256, 8192}));
  EXPECT_EQ(unit_of(0, 0).k, (Range{0, 8192}));
}

TEST(ExpandScheduleTest, AswtTailRoundIsResplit) {
  // Find engine plans whose tail round is split, and check the pieces.
  const ChipSpec chip = BuiltinPlatforms().front();
  int resplit = 0;
  for (uint64_t m : {1280u, 2304u, 3000u, 4864u, 5000u}) {
    for (uint64_t n : {1280u, 2560u, 4000u}) {
      const MatmulProblem problem = Problem(m, n, 1024);
      const TilingPlan plan = Decide(problem, chip);
      if (plan.key.model != KernelModel::kBasic || plan.block.m_tail_cnt * plan.block.n_tail_cnt <= 1)
        continue;
      absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, problem, chip);
      ASSERT_THAT(schedule, IsOk());
      ExpectScheduleInvariants(*schedule, plan, problem, chip);
      const uint32_t last = schedule->rounds - 1;
      uint64_t last_round_units = 0, full_round_units = 0;
      for (const WorkUnit& unit : schedule->units) {
        if (unit.round == last) ++last_round_units;
        if (unit.round == 0) ++full_round_units;
      }
      // The tail round runs on more cores than it has base tiles.
      const uint64_t mn = ((m + plan.block.m_l1 - 1) / plan.block.m_l1) *
                          ((n + plan.block.n_l1 - 1) / plan.block.n_l1);
      if (schedule->rounds > 1) {
        EXPECT_GT(last_round_units, mn % plan.block_dim);
      }
      EXPECT_EQ(full_round_units, plan.block_dim);
      ++resplit;
    }
  }
  EXPECT_GT(resplit, 0) << "no engine plan exercised the tail re-split";
}

TEST(ExpandScheduleTest, StreamKSplitsEveryTileAcrossTheCores) {
  // The seeds' headline shape: M=N=512, K=16384 fp16 on 24 cores.
  const ChipSpec chip = ChipWithCores(24);
  const MatmulProblem problem = Problem(512, 512, 16384);
  const TilingPlan plan = Decide(problem, chip);
  ASSERT_EQ(plan.key.model, KernelModel::kStreamK);
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, problem, chip);
  ASSERT_THAT(schedule, IsOk());
  ExpectScheduleInvariants(*schedule, plan, problem, chip);
  EXPECT_EQ(schedule->rounds, 1u);
  ASSERT_EQ(schedule->reductions.size(), 4u);
  int aic_units = 0, aiv_units = 0;
  for (const WorkUnit& unit : schedule->units) {
    if (unit.op == UnitOp::kMmad) {
      ++aic_units;
      EXPECT_TRUE(unit.writes_partial);
      EXPECT_TRUE(unit.signals_aiv);
      EXPECT_EQ(unit.k.size(), unit.k_slice == 5 ? 16384 - 5 * plan.block.single_core_k
                                                 : plan.block.single_core_k);
    } else {
      ++aiv_units;
      EXPECT_EQ(unit.op, UnitOp::kReduce);
    }
  }
  EXPECT_EQ(aic_units, 24);  // 4 tiles x 6 K slices
  // Each 256-row tile is reduced in 12 bands by 12 AIV cores.
  EXPECT_EQ(aiv_units, 48);
  for (const ReductionGroup& group : schedule->reductions) {
    EXPECT_EQ(group.slots.size(), 6u);
    for (size_t i = 1; i < group.slots.size(); ++i) EXPECT_EQ(group.slots[i], group.slots[0] + i);
  }
  EXPECT_TRUE(schedule->idle_aic_cores.empty());
}

TEST(ExpandScheduleTest, DataParallelStreamKPreloadsTheSplitRound) {
  // 9 x 4 = 36 tiles of 256 on 32 cores: one DP round and 4 split tiles.
  const ChipSpec chip = BuiltinPlatforms().front();
  const MatmulProblem problem = Problem(2304, 1024, 8192);
  const TilingPlan plan = Decide(problem, chip);
  ASSERT_EQ(plan.key.model, KernelModel::kStreamK) << plan.detail;
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, problem, chip);
  ASSERT_THAT(schedule, IsOk());
  ExpectScheduleInvariants(*schedule, plan, problem, chip);
  const uint64_t k_slices = plan.block.k_cnt;
  ASSERT_GT(k_slices, 1u);
  ASSERT_EQ(schedule->reductions.size(), 4u);
  for (const WorkUnit& unit : schedule->units) {
    if (unit.op != UnitOp::kMmad) continue;
    if (unit.core < 4 * k_slices) {
      // Preload swap: split slice first, the data-parallel tile second.
      EXPECT_EQ(unit.writes_partial, unit.round == 0) << "core " << unit.core;
      EXPECT_EQ(unit.signals_aiv, unit.round == 0);
    } else {
      EXPECT_FALSE(unit.writes_partial);
      EXPECT_EQ(unit.round, 0u);
      EXPECT_TRUE(unit.signals_aiv);
    }
  }
}

TEST(ExpandScheduleTest, StreamKWithoutTailRoundIsRejected) {
  const ChipSpec chip = BuiltinPlatforms().front();
  const MatmulProblem problem = Problem(2048, 1024, 8192);  // 32 tiles on 32 cores
  TilingPlan plan = Decide(Problem(2304, 1024, 8192), chip);
  ASSERT_EQ(plan.key.model, KernelModel::kStreamK);
  EXPECT_THAT(ExpandSchedule(plan, problem, chip),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("problem 4")));
  EXPECT_THAT(CheckTilePattern(plan, problem),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("problem 4")));
  // Run anyway, the device's tile loops leave C uncovered.
  absl::StatusOr<Schedule> schedule = ExpandTileLoops(plan, problem, chip);
  ASSERT_THAT(schedule, IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*schedule, problem),
              StatusIs(absl::StatusCode::kInternal));
}

TEST(ExpandScheduleTest, TileLoopsOfAnAcceptedPlanAreTheSchedule) {
  const ChipSpec chip = BuiltinPlatforms().front();
  for (const MatmulProblem& problem :
       {Problem(2304, 1024, 8192), Problem(1000, 3000, 512), Problem(256, 768, 16384)}) {
    const TilingPlan plan = Decide(problem, chip);
    EXPECT_THAT(CheckTilePattern(plan, problem), IsOk()) << plan.detail;
    absl::StatusOr<Schedule> expanded = ExpandSchedule(plan, problem, chip);
    absl::StatusOr<Schedule> loops = ExpandTileLoops(plan, problem, chip);
    ASSERT_THAT(expanded, IsOk());
    ASSERT_THAT(loops, IsOk());
    ASSERT_EQ(expanded->units.size(), loops->units.size()) << plan.detail;
    for (size_t i = 0; i < loops->units.size(); ++i) {
      EXPECT_EQ(expanded->units[i].m, loops->units[i].m);
      EXPECT_EQ(expanded->units[i].n, loops->units[i].n);
      EXPECT_EQ(expanded->units[i].k, loops->units[i].k);
      EXPECT_EQ(expanded->units[i].workspace_slot, loops->units[i].workspace_slot);
    }
  }
}

TEST(ExpandScheduleTest, StreamKIdleCoresAreListed) {
  // 3 tiles on 32 cores: 10 K slices each, two cores idle.
  const ChipSpec chip = BuiltinPlatforms().front();
  const MatmulProblem problem = Problem(256, 768, 16384);
  const TilingPlan plan = Decide(problem, chip);
  ASSERT_EQ(plan.key.model, KernelModel::kStreamK) << plan.detail;
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, problem, chip);
  ASSERT_THAT(schedule, IsOk());
  ExpectScheduleInvariants(*schedule, plan, problem, chip);
  EXPECT_EQ(schedule->idle_aic_cores.size(), 32u - 3 * plan.block.k_cnt);
}

TEST(ExpandScheduleTest, ZeroKClearsContiguousRuns) {
  const ChipSpec chip = BuiltinPlatforms().front();
  const MatmulProblem problem = Problem(37, 53, 0);
  const TilingPlan plan = Decide(problem, chip);
  ASSERT_EQ(plan.key.model, KernelModel::kKEqualZero);
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, problem, chip);
  ASSERT_THAT(schedule, IsOk());
  ExpectScheduleInvariants(*schedule, plan, problem, chip);
  for (const WorkUnit& unit : schedule->units) EXPECT_EQ(unit.op, UnitOp::kClear);
}

TEST(ExpandScheduleTest, SplitKChunksFollowTheKernel) {
  EXPECT_EQ(SplitKChunks({0, 100}, 0).size(), 1u);
  EXPECT_EQ(SplitKChunks({0, 1000}, 1024).size(), 1u);
  const std::vector<Range> chunks = SplitKChunks({0, 3000}, 1024);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0], (Range{0, 1024}));
  EXPECT_EQ(chunks[1], (Range{1024, 3000}));  // the last chunk takes the remainder
}

TEST(ExpandScheduleTest, BadFieldsNameTheField) {
  const ChipSpec chip = BuiltinPlatforms().front();
  const MatmulProblem problem = Problem(1024, 1024, 1024);
  TilingPlan plan = Decide(problem, chip);
  TilingPlan zero_base = plan;
  zero_base.block.base_m = 0;
  EXPECT_THAT(ExpandSchedule(zero_base, problem, chip),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("baseM")));
  TilingPlan too_many = plan;
  too_many.block_dim = 33;
  EXPECT_THAT(ExpandSchedule(too_many, problem, chip),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("block_dim")));
}

}  // namespace
}  // namespace npu::tiling
