// ExpandSchedule() for the batch kernels: which core computes which batch
// in which round, the stacked rows of C, and the struct fields a walk
// depends on. Plans carry the words of CANN's goldens
// (/work/shared/conformance/cann950_ops/cases.json `expected.fields`).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/schedule.h"
#include "server/tiling/tiling_data.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

const ChipSpec& Chip950() { return BuiltinPlatforms().front(); }

template <typename Field, size_t N>
TilingPlan StructPlan(uint64_t key, KeyLayout layout, uint32_t block_dim, KernelType type,
                      const uint64_t (&words)[N]) {
  TilingPlan plan;
  plan.key = *TilingKey::Decode(key, layout);
  plan.block_dim = block_dim;
  plan.kernel_type = type;
  plan.data = NewTilingData<Field>();
  for (size_t i = 0; i < N; ++i) plan.data.fields[i].value = words[i];
  return plan;
}

MatmulProblem BatchProblem(int64_t m, int64_t n, int64_t k, std::vector<int64_t> batch) {
  MatmulProblem p;
  p.op = MatmulOp::kBatchMatMulV3;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_b = p.dtype_c = DataType::kFloat32;
  p.batch.a = p.batch.b = std::move(batch);
  return p;
}

TEST(BatchScheduleTest, IterBatchGivesEachCoreWholeBatchesOnStackedRows) {
  // BatchMatMulV3_950_test_iterbatch_basicapi_fixpip_opt_fp32_01.
  const TilingPlan plan =
      StructPlan<IterBatchField>(0x200141, KeyLayout::kMatMul, 32, KernelType::kMixed1To2,
                                 {47, 77, 8, 90, 3, 3, 1, 48, 80, 16, 0, 1, 0, 0});
  MatmulProblem p = BatchProblem(47, 77, 8, {10, 9});
  p.trans_b = true;
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, p, Chip950());
  ASSERT_THAT(schedule.status(), IsOk());
  EXPECT_EQ(schedule->batch, 90u);
  EXPECT_EQ(schedule->batch_rows, 47u);
  EXPECT_EQ(schedule->base_m, 48u);
  EXPECT_EQ(schedule->k_l1, 8u);  // whole batches in L1
  for (const WorkUnit& unit : schedule->units) {
    EXPECT_EQ(unit.m.begin, uint64_t{unit.batch} * 47);
    EXPECT_EQ(unit.m.size(), 47u);
  }
  EXPECT_THAT(CheckScheduleCoverage(*schedule, p), IsOk());
}

TEST(BatchScheduleTest, IterBatchTailTileTakesTheRemainder) {
  // 70 batches in tiles of 4 on 8 cores: 18 tiles, the last one 2 batches.
  const TilingPlan plan =
      StructPlan<IterBatchField>(0x101, KeyLayout::kMatMul, 8, KernelType::kAicOnly,
                                 {16, 16, 16, 70, 4, 4, 0, 16, 16, 16, 0, 1, 0, 0});
  const MatmulProblem p = BatchProblem(16, 16, 16, {70});
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, p, Chip950());
  ASSERT_THAT(schedule.status(), IsOk());
  std::map<uint32_t, uint32_t> per_core;
  for (const WorkUnit& unit : schedule->units) ++per_core[unit.core];
  // Core 0 runs tiles 0, 8, 16; core 1 tiles 1, 9, 17 (the 2-batch tail).
  EXPECT_EQ(per_core[0], 12u);
  EXPECT_EQ(per_core[1], 10u);
  EXPECT_EQ(per_core[2], 8u);
  EXPECT_EQ(schedule->rounds, 3u);
}

TEST(BatchScheduleTest, AswtBatchesAreOutermostWithoutTailResplit) {
  MatmulProblem p = BatchProblem(100, 64, 32, {3});
  TilingPlan plan;
  plan.key.api_level = ApiLevel::kBasic;
  plan.block_dim = 4;
  plan.block.base_m = plan.block.m_l1 = 64;
  plan.block.base_n = plan.block.n_l1 = 64;
  plan.block.base_k = plan.block.k_l1 = 32;
  plan.block.m_tail_cnt = 2;  // ignored with batches, as the kernel ignores it
  plan.data = NewTilingData<BatchBasicField>();
  WriteBlockFields(plan.block, plan.data);
  Set(plan.data, BatchBasicField::kMBaseTailSplitCnt, 1);
  Set(plan.data, BatchBasicField::kNBaseTailSplitCnt, 1);
  Set(plan.data, BatchBasicField::kBatchDimAll, 3);
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, p, Chip950());
  ASSERT_THAT(schedule.status(), IsOk());
  ASSERT_EQ(schedule->units.size(), 6u);  // 2 tiles x 3 batches
  for (const WorkUnit& unit : schedule->units) {
    EXPECT_EQ(unit.batch, unit.tile_idx / 2);
    EXPECT_EQ(unit.core, unit.tile_idx % 4);
  }
  EXPECT_THAT(CheckScheduleCoverage(*schedule, p), IsOk());

  Set(plan.data, BatchBasicField::kBatchDimAll, 2);
  EXPECT_THAT(ExpandSchedule(plan, p, Chip950()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("batchDimAll=2")));
}

TEST(BatchScheduleTest, KEqualZeroClearsEveryBatch) {
  MatmulProblem p = BatchProblem(5, 7, 0, {4});
  TilingPlan plan;
  plan.key.model = KernelModel::kKEqualZero;
  plan.kernel_type = KernelType::kAivOnly;
  plan.block_dim = 64;
  plan.data = NewTilingData<KEqZeroField>();
  Set(plan.data, KEqZeroField::kTotalDataAmount, 140);
  Set(plan.data, KEqZeroField::kAivNum, 64);
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, p, Chip950());
  ASSERT_THAT(schedule.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*schedule, p), IsOk());
  // 140 elements in runs of ceil(140 / 64) = 3: 47 AIVs, the last with 2.
  EXPECT_EQ(schedule->aiv_cores, 47u);
}

TEST(BatchScheduleTest, StreamKBeyondOneSplitRoundIsUnimplemented) {
  // 4 x 4 MN tiles x 3 batches exceed the 32 cores of one split round.
  MatmulProblem p = BatchProblem(256, 256, 8192, {3});
  TilingPlan plan;
  plan.key.model = KernelModel::kStreamK;
  plan.kernel_type = KernelType::kMixed1To2;
  plan.block_dim = 32;
  plan.block.base_m = plan.block.base_n = plan.block.m_l1 = plan.block.n_l1 = 64;
  plan.block.base_k = 64;
  plan.block.k_l1 = 256;
  plan.block.single_core_k = 512;
  EXPECT_THAT(ExpandSchedule(plan, p, Chip950()).status(),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("within one round")));
}

// The engine's plan for `problem`; Decide() must pick `strategy`.
TilingPlan EnginePlan(const MatmulProblem& problem, std::string_view strategy) {
  absl::StatusOr<TilingDecision> decision = MakeBuiltinRegistry().Decide(problem, Chip950());
  EXPECT_THAT(decision.status(), IsOk());
  if (!decision.ok()) return {};
  EXPECT_EQ(decision->plan.strategy, strategy) << decision->plan.detail;
  return decision->plan;
}

TEST(BatchScheduleTest, HighLevelIterBatchSpreadsTheLastLoopOverTheCores) {
  // ITER_BATCH (a bias of n > 512 keeps ITER_BATCH_BASICAPI out).
  MatmulProblem p = BatchProblem(19, 659, 15, {40});
  p.dtype_a = p.dtype_b = p.dtype_c = p.dtype_bias = DataType::kFloat16;
  p.trans_a = p.trans_b = true;
  p.has_bias = true;
  TilingPlan plan = EnginePlan(p, "ITER_BATCH");
  // 8 cores of 4 batches per loop: a loop of 32, then 8 batches, one on
  // each core (BatchMatMulMultiBatchBaseBlock's last loop).
  Set(plan.data, HighLevelBatchField::kUsedCoreNum, 8);
  Set(plan.data, HighLevelBatchField::kIterBatch, 4);
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, p, Chip950());
  ASSERT_THAT(schedule.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*schedule, p), IsOk());
  EXPECT_TRUE(schedule->batches_share_loads);
  EXPECT_EQ(schedule->aic_cores, 8u);
  EXPECT_EQ(schedule->rounds, 2u);
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> loads;
  for (const WorkUnit& unit : schedule->units) loads[{unit.core, unit.round}].push_back(unit.batch);
  EXPECT_THAT(loads[std::make_pair(0u, 0u)], ::testing::ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(loads[std::make_pair(7u, 0u)], ::testing::ElementsAre(28, 29, 30, 31));
  EXPECT_THAT(loads[std::make_pair(5u, 1u)], ::testing::ElementsAre(37));

  // 6 cores of 4: a loop of 24, then 16 spread as 3, 3, 3, 3, 2, 2.
  Set(plan.data, HighLevelBatchField::kUsedCoreNum, 6);
  schedule = ExpandSchedule(plan, p, Chip950());
  ASSERT_THAT(schedule.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*schedule, p), IsOk());
  loads.clear();
  for (const WorkUnit& unit : schedule->units) loads[{unit.core, unit.round}].push_back(unit.batch);
  EXPECT_THAT(loads[std::make_pair(3u, 1u)], ::testing::ElementsAre(33, 34, 35));
  EXPECT_THAT(loads[std::make_pair(4u, 1u)], ::testing::ElementsAre(36, 37));
  EXPECT_THAT(loads[std::make_pair(5u, 1u)], ::testing::ElementsAre(38, 39));

  Set(plan.data, HighLevelBatchField::kCBatchDimAll, 39);
  EXPECT_THAT(ExpandSchedule(plan, p, Chip950()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cBatchDimAll=39")));
}

TEST(BatchScheduleTest, HighLevelAswTilesAreBaseBlocksBatchOutermost) {
  // BASE on broadcast batches: A [4,1] x B [1,3], transposed A (no merge).
  MatmulProblem p = BatchProblem(120, 93, 45, {});
  p.dtype_a = p.dtype_b = p.dtype_c = DataType::kFloat16;
  p.trans_a = true;
  p.batch.a = {4, 1};
  p.batch.b = {1, 3};
  TilingPlan plan = EnginePlan(p, "BASE");
  // Blocks of 32 x 32 walked on 5 cores in windows of 2 rows.
  Set(plan.data, HighLevelBatchField::kBaseM, 32);
  Set(plan.data, HighLevelBatchField::kBaseN, 32);
  Set(plan.data, HighLevelBatchField::kUsedCoreNum, 5);
  Set(plan.data, HighLevelBatchField::kAswWindowLen, 2);
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, p, Chip950());
  ASSERT_THAT(schedule.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*schedule, p), IsOk());
  // 4 x 3 blocks per batch, 12 batches: 144 tiles, 29 rounds on 5 cores.
  ASSERT_EQ(schedule->units.size(), 144u);
  EXPECT_EQ(schedule->rounds, 29u);
  EXPECT_EQ(schedule->base_m, 32u);
  int checked = 0;
  for (const WorkUnit& unit : schedule->units) {
    EXPECT_EQ(unit.core, unit.tile_idx % 5);
    EXPECT_EQ(unit.batch, unit.tile_idx / 12);
    // Two windows of 2 block rows: inside a window the row moves fastest;
    // the second window walks its columns backwards.
    const int64_t in_batch = unit.tile_idx % 12;
    const uint64_t row0 = uint64_t{unit.batch} * 120;
    if (in_batch == 2) {
      EXPECT_EQ(unit.m, (Range{row0, row0 + 32}));
      EXPECT_EQ(unit.n, (Range{32, 64}));
      ++checked;
    }
    if (in_batch == 6) {
      EXPECT_EQ(unit.m, (Range{row0 + 64, row0 + 96}));
      EXPECT_EQ(unit.n, (Range{64, 93}));
      ++checked;
    }
    if (in_batch == 11) {
      EXPECT_EQ(unit.m, (Range{row0 + 96, row0 + 120}));
      EXPECT_EQ(unit.n, (Range{0, 32}));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 36);
}

TEST(BatchScheduleTest, HighLevelAswSplitsLongFp32KIntoChunks) {
  // fp32 without hf32 and K > 8192: BASE (HIGH_LEVEL, FOR_BATCH); the ASW
  // block sums ceil(K / 8192) chunks of K in GM.
  MatmulProblem p = BatchProblem(40, 40, 20000, {});
  p.trans_a = true;
  p.batch.a = {2, 1};
  p.batch.b = {1, 2};
  const TilingPlan plan = EnginePlan(p, "BASE");
  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, p, Chip950());
  ASSERT_THAT(schedule.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*schedule, p), IsOk());
  EXPECT_EQ(schedule->split_k_chunk, 6672u);  // align8(ceil(20000 / 3))
  p.hf32 = true;
  schedule = ExpandSchedule(EnginePlan(p, "BASE"), p, Chip950());
  ASSERT_THAT(schedule.status(), IsOk());
  EXPECT_EQ(schedule->split_k_chunk, 0u);
}

}  // namespace
}  // namespace npu::tiling
