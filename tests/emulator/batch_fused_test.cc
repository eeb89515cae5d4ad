// BatchMatMulV3 and FusedMatMul plans in the emulator: the batch walks of
// the batch kernels, the fused epilogues' numerics against the fp64
// reference, and their cost in the timing model. Plans are built by hand
// from the tiling-data tables as CANN fills them (the goldens'
// `expected.fields` in /work/shared/conformance/cann950_ops/cases.json).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "emulator/accuracy.h"
#include "emulator/emulator.h"
#include "emulator/work_estimate.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/schedule.h"
#include "server/tiling/tiling_data.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
using tiling::DataType;
using tiling::FusedOp;
using tiling::KernelModel;
using tiling::MatmulOp;
using tiling::MatmulProblem;
using tiling::TilingPlan;

const tiling::ChipSpec& Chip950() { return tiling::BuiltinPlatforms().front(); }

MatmulProblem Problem(MatmulOp op, int64_t m, int64_t n, int64_t k,
                      DataType dtype = DataType::kFloat16) {
  MatmulProblem problem;
  problem.op = op;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.dtype_a = problem.dtype_b = problem.dtype_c = problem.dtype_bias = dtype;
  return problem;
}

// An ASWT plan with the batch basic struct (BatchMatMulV3BasicTilingData):
// L1 blocks of `l1` x `l1`, base blocks of l1 x l1 x 32, `batch` batches.
TilingPlan AswtBatchPlan(const MatmulProblem& p, uint64_t rows, uint64_t batch, uint64_t l1,
                         uint32_t block_dim) {
  TilingPlan plan;
  plan.strategy = "ASW_BASIC";
  plan.key.api_level = tiling::ApiLevel::kBasic;
  plan.key.batch_model = static_cast<uint8_t>(tiling::BatchModel::kFusedBatch);
  plan.block_dim = block_dim;
  plan.kernel_type = tiling::KernelType::kAicOnly;
  tiling::BlockTiling& b = plan.block;
  b.base_m = b.base_n = b.m_l1 = b.n_l1 = l1;
  b.base_k = 32;
  b.k_l1 = 64;
  b.single_core_k = static_cast<uint64_t>(p.k);
  plan.data = tiling::NewTilingData<tiling::BatchBasicField>();
  tiling::WriteBlockFields(b, plan.data);
  using F = tiling::BatchBasicField;
  tiling::Set(plan.data, F::kUsedCoreNum, block_dim);
  tiling::Set(plan.data, F::kM, rows);
  tiling::Set(plan.data, F::kN, static_cast<uint64_t>(p.n));
  tiling::Set(plan.data, F::kK, static_cast<uint64_t>(p.k));
  tiling::Set(plan.data, F::kMBaseTailSplitCnt, 1);
  tiling::Set(plan.data, F::kNBaseTailSplitCnt, 1);
  tiling::Set(plan.data, F::kBatchDimAll, batch);
  tiling::Set(plan.data, F::kBatchX3, 1);
  return plan;
}

EmulatorOptions Options(int threads = 1) {
  EmulatorOptions options;
  options.threads = threads;
  return options;
}

// The emulated C within the dtype-implied bound of the fp64 reference, and
// (independently of that bound's code) within a loose relative tolerance of
// ReferenceMatmul().
void ExpectMatchesReference(const MatmulProblem& problem, const Tensors& inputs,
                            const HostTensor& c) {
  absl::StatusOr<AccuracyReport> report = CompareWithReference(problem, inputs, c, 2, nullptr);
  ASSERT_THAT(report.status(), IsOk());
  EXPECT_TRUE(report->passed) << "worst ratio " << report->worst_bound_ratio << " at "
                              << report->worst_index;
  const std::vector<double> ref = ReferenceMatmul(problem, inputs);
  ASSERT_EQ(ref.size(), c.elements());
  const double tol = problem.dtype_c == DataType::kFloat32 ? 1e-4 : 2e-2;
  for (uint64_t i = 0; i < ref.size(); ++i) {
    ASSERT_NEAR(c.Get(i), ref[i], tol * (1.0 + std::fabs(ref[i]))) << "element " << i;
  }
}

// Emulates with 1 and 4 host threads: C bit-identical, and correct.
EmulationResult EmulateAndCheck(const TilingPlan& plan, const MatmulProblem& problem,
                                uint64_t seed = 3) {
  const Tensors inputs = RandomInputs(problem, seed);
  absl::StatusOr<EmulationResult> one = Emulate(plan, problem, Chip950(), inputs, Options(1));
  EXPECT_THAT(one.status(), IsOk());
  if (!one.ok()) return {};
  absl::StatusOr<EmulationResult> four = Emulate(plan, problem, Chip950(), inputs, Options(4));
  EXPECT_THAT(four.status(), IsOk());
  if (four.ok()) {
    EXPECT_EQ(one->c.bytes, four->c.bytes) << "C depends on the host threads";
  }
  ExpectMatchesReference(problem, inputs, one->c);
  return *std::move(one);
}

TEST(BatchEmulationTest, AswtWalksBatchTimesTilesOnOddShapes) {
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 37, 45, 70);
  p.batch.a = p.batch.b = {2, 3};
  const TilingPlan plan = AswtBatchPlan(p, 37, 6, 32, 5);
  const EmulationResult result = EmulateAndCheck(plan, p);
  // 2 x 2 tiles per batch, 6 batches, 5 cores: rounds of 5 tiles.
  EXPECT_EQ(result.schedule.batch, 6u);
  EXPECT_EQ(result.schedule.units.size(), 24u);
  EXPECT_EQ(result.schedule.rounds, 5u);
  EXPECT_THAT(result.c.shape, ::testing::ElementsAre(2, 3, 37, 45));
  // Tile 23 (core 3, round 4) is batch 5's last tile.
  bool found = false;
  for (const tiling::WorkUnit& unit : result.schedule.units) {
    if (unit.tile_idx == 23) {
      found = true;
      EXPECT_EQ(unit.core, 3u);
      EXPECT_EQ(unit.batch, 5u);
      EXPECT_GE(unit.m.begin, 5u * 37);
    }
  }
  EXPECT_TRUE(found);
}

TEST(BatchEmulationTest, BroadcastBatchReadsTheSharedOperandWithBias) {
  // A [1, m, k] shared by B's four batches (A_FULL_LOAD's case), bias [n].
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 20, 33, 48);
  p.batch.a = {1};
  p.batch.b = {4};
  p.trans_b = true;
  p.has_bias = true;
  p.dtype_bias = DataType::kFloat32;
  EmulateAndCheck(AswtBatchPlan(p, 20, 4, 32, 3), p);
}

TEST(BatchEmulationTest, BatchBiasRowPerBatch) {
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 17, 19, 23, DataType::kBFloat16);
  p.batch.a = p.batch.b = p.batch.bias = {3};
  p.has_bias = true;
  EmulateAndCheck(AswtBatchPlan(p, 17, 3, 16, 4), p);
}

TEST(BatchEmulationTest, MergedBatchRunsAsOneTallMatrix) {
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 30, 40, 24);
  p.batch.a = {3};  // B has no batch: CANN's plan is for m = 90
  const EmulationResult result = EmulateAndCheck(AswtBatchPlan(p, 90, 1, 32, 8), p);
  EXPECT_EQ(result.schedule.batch, 1u);
  EXPECT_EQ(result.schedule.batch_rows, 90u);
  // The struct's batch count must be the walk's.
  EXPECT_THAT(Emulate(AswtBatchPlan(p, 90, 3, 32, 8), p, Chip950(), {},
                      [] {
                        EmulatorOptions o;
                        o.timing_only = true;
                        return o;
                      }())
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("batchDimAll=3")));
}

// CANN's golden BatchMatMulV3_950_test_iterbatch_basicapi_fixpip_opt_fp32_01.
TilingPlan IterBatchGoldenPlan() {
  TilingPlan plan;
  plan.strategy = "ITER_BATCH_BASICAPI";
  plan.key = *tiling::TilingKey::Decode(0x200141);
  plan.block_dim = 32;
  plan.kernel_type = tiling::KernelType::kMixed1To2;
  plan.data = tiling::NewTilingData<tiling::IterBatchField>();
  const uint64_t words[] = {47, 77, 8, 90, 3, 3, 1, 48, 80, 16, 0, 1, 0, 0};
  for (size_t i = 0; i < plan.data.fields.size(); ++i) plan.data.fields[i].value = words[i];
  return plan;
}

MatmulProblem IterBatchGoldenProblem() {
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 47, 77, 8, DataType::kFloat32);
  p.batch.a = p.batch.b = {10, 9};
  p.trans_b = true;
  p.hf32 = true;
  return p;
}

TEST(BatchEmulationTest, IterBatchTilesAreIterBatchL1WholeBatches) {
  const EmulationResult result = EmulateAndCheck(IterBatchGoldenPlan(), IterBatchGoldenProblem());
  // 90 batches in tiles of 3: 30 tiles on 30 of the 32 cores, one round.
  EXPECT_EQ(result.schedule.aic_cores, 30u);
  EXPECT_EQ(result.schedule.units.size(), 90u);
  EXPECT_EQ(result.schedule.rounds, 1u);
  for (const tiling::WorkUnit& unit : result.schedule.units) {
    EXPECT_EQ(unit.batch / 3, unit.core) << "tile t holds batches 3t..3t+2";
  }
}

TEST(BatchEmulationTest, WorkEstimateCountsEveryBatchOfAStructWithoutBlock) {
  // The plan carries no BlockTiling: the estimate reads the struct's bases.
  const EmulationWork work = EstimateEmulationWork(IterBatchGoldenPlan(), IterBatchGoldenProblem());
  EXPECT_EQ(work.base_blocks, 90u);  // one 48x80 block per batch
  EXPECT_EQ(work.units, 90u);
  EXPECT_EQ(work.k_steps, 1u);
}

TEST(BatchEmulationTest, IterBatchNamesItsFieldWhenBuffersOverflow) {
  TilingPlan plan = IterBatchGoldenPlan();
  tiling::Set(plan.data, tiling::IterBatchField::kIterBatchL1, 400);
  EmulatorOptions options;
  options.timing_only = true;
  EXPECT_THAT(Emulate(plan, IterBatchGoldenProblem(), Chip950(), {}, options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("iterBatchL1=400")));
}

// A BATCH_STREAM_K plan: batch x MN tiles x K slices in one split round.
TilingPlan BatchStreamKPlan(uint64_t m, uint64_t n, uint64_t k, uint64_t batch, uint64_t base_m,
                            uint64_t base_n, uint64_t sk_k) {
  TilingPlan plan;
  plan.strategy = "BATCH_STREAM_K";
  plan.key.api_level = tiling::ApiLevel::kTensor;
  plan.key.model = KernelModel::kStreamK;
  plan.block_dim = 32;
  plan.kernel_type = tiling::KernelType::kMixed1To2;
  plan.workspace_bytes = tiling::kRuntimeWorkspaceBytes + 32 * tiling::kWorkspaceSlotElements * 4;
  tiling::BlockTiling& b = plan.block;
  b.base_m = b.m_l1 = base_m;
  b.base_n = b.n_l1 = base_n;
  b.base_k = 32;
  b.k_l1 = 128;
  b.single_core_k = sk_k;
  plan.data = tiling::NewTilingData<tiling::BatchBasicField>();
  tiling::WriteBlockFields(b, plan.data);
  using F = tiling::BatchBasicField;
  tiling::Set(plan.data, F::kUsedCoreNum, 32);
  tiling::Set(plan.data, F::kM, m);
  tiling::Set(plan.data, F::kN, n);
  tiling::Set(plan.data, F::kK, k);
  tiling::Set(plan.data, F::kMBaseTailSplitCnt, 1);
  tiling::Set(plan.data, F::kNBaseTailSplitCnt, 1);
  tiling::Set(plan.data, F::kBatchDimAll, batch);
  return plan;
}

TEST(BatchEmulationTest, BatchStreamKSplitsEveryBatchsTiles) {
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 40, 50, 2000);
  p.batch.a = p.batch.b = {3};
  const EmulationResult result = EmulateAndCheck(BatchStreamKPlan(40, 50, 2000, 3, 48, 64, 256), p);
  // 3 batches x 1 MN tile x 8 K slices on 24 AICs; each batch's tile is
  // reduced by 16 AIVs into its own rows of C.
  uint64_t slices = 0, reduce_rows = 0;
  for (const tiling::WorkUnit& unit : result.schedule.units) {
    if (unit.op == tiling::UnitOp::kMmad) ++slices;
    if (unit.op == tiling::UnitOp::kReduce) {
      reduce_rows += unit.m.size();
      EXPECT_GE(unit.m.begin, uint64_t{unit.batch} * 40);
      EXPECT_LE(unit.m.end, uint64_t{unit.batch + 1} * 40);
    }
  }
  EXPECT_EQ(slices, 24u);
  EXPECT_EQ(reduce_rows, 120u);
}

// CANN's golden BatchMatMulV3_950_test_streamk_basicapi_01, timed.
TEST(BatchTimingTest, GoldenBatchStreamKRunsOneSplitRound) {
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 133, 204, 217211, DataType::kFloat32);
  p.batch.a = p.batch.b = {2};
  p.trans_a = p.trans_b = true;
  p.hf32 = true;
  TilingPlan plan = BatchStreamKPlan(133, 204, 217211, 2, 144, 208, 13576);
  EmulatorOptions options;
  options.timing_only = true;
  absl::StatusOr<EmulationResult> result = Emulate(plan, p, Chip950(), {}, options);
  ASSERT_THAT(result.status(), IsOk());
  EXPECT_EQ(result->schedule.rounds, 1u);
  EXPECT_EQ(result->schedule.aic_cores, 32u);
  // 2 x 16 K slices; each batch's 133 rows reduced by 32 AIVs in bands of
  // ceil(133 / 32) = 5 rows: 27 bands, the last 5 AIVs of each batch idle.
  EXPECT_EQ(result->schedule.units.size(), 32u + 2 * 27u);
}

// CANN's golden BatchMatMulV3_910D1_test_mergebatch_01.
TEST(BatchEmulationTest, MergeBatchSpreadsTheRemainderOverTheCores) {
  TilingPlan plan;
  plan.strategy = "MERGE_BATCH_BASICAPI";
  plan.key = *tiling::TilingKey::Decode(0x341);
  plan.block_dim = 32;
  plan.data = tiling::NewTilingData<tiling::MergeBatchField>();
  const uint64_t words[] = {1, 4, 976, 2400, 8, 8, 8, 256, 64, 1, 0, 1};
  for (size_t i = 0; i < plan.data.fields.size(); ++i) plan.data.fields[i].value = words[i];
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 1, 4, 976, DataType::kFloat32);
  p.batch.a = p.batch.b = {2400};
  p.trans_b = true;
  p.hf32 = true;
  const EmulationResult result = EmulateAndCheck(plan, p);
  // 9 main loops of 8 batches per core, then 96 batches as 3 per core.
  EXPECT_EQ(result.schedule.rounds, 10u);
  uint64_t last_round_units = 0;
  for (const tiling::WorkUnit& unit : result.schedule.units) {
    if (unit.round == 9) ++last_round_units;
  }
  EXPECT_EQ(last_round_units, 96u);
}

// CANN's golden BatchMatMulV3_950_test_batchmatmultomul_fp32_01: on the AIV.
TEST(BatchEmulationTest, BatchToMulFollowsTheLastRoundWords) {
  TilingPlan plan;
  plan.strategy = "BATCH_MATMUL_TO_MUL";
  plan.key = *tiling::TilingKey::Decode(0x201);
  plan.block_dim = 64;
  plan.kernel_type = tiling::KernelType::kAivOnly;
  plan.data = tiling::NewTilingData<tiling::BatchToMulField>();
  const uint64_t words[] = {4, 976, 2400, 64, 38, 12, 2, 2, 47, 8};
  for (size_t i = 0; i < plan.data.fields.size(); ++i) plan.data.fields[i].value = words[i];
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 4, 976, 1, DataType::kFloat32);
  p.batch.a = p.batch.b = {2400};
  p.trans_a = true;
  p.hf32 = true;
  const EmulationResult result = EmulateAndCheck(plan, p);
  // Three rounds of 12 batches on all 64 cores, then 2 each on cores 0-46,
  // the tail of 2 on core 47; the cores after it return.
  EXPECT_EQ(result.schedule.aiv_cores, 64u);
  EXPECT_EQ(result.schedule.units.size(), 2400u);
  uint32_t last_core = 0;
  uint64_t last_round_units = 0;
  for (const tiling::WorkUnit& unit : result.schedule.units) {
    if (unit.round != 3) continue;
    ++last_round_units;
    last_core = std::max(last_core, unit.core);
  }
  EXPECT_EQ(last_round_units, 96u);
  EXPECT_EQ(last_core, 47u);
}

// A 2-D MatMulV3-struct ASWT plan for FusedMatMul.
TilingPlan Fused2dPlan(const MatmulProblem& p) {
  TilingPlan plan;
  plan.strategy = "BASIC_ASWT";
  plan.key.api_level = tiling::ApiLevel::kBasic;
  plan.key.layout = tiling::KeyLayout::kFused;
  plan.key.fused_op = p.fused.op;
  plan.block_dim = 6;
  plan.kernel_type = tiling::KernelType::kMixed1To2;
  tiling::BlockTiling& b = plan.block;
  b.base_m = b.m_l1 = 32;
  b.base_n = b.n_l1 = 48;
  b.base_k = 32;
  b.k_l1 = 64;
  plan.data = tiling::NewTilingData<tiling::BasicField>();
  tiling::WriteBlockFields(b, plan.data);
  tiling::Set(plan.data, tiling::BasicField::kUsedCoreNum, 6);
  tiling::Set(plan.data, tiling::BasicField::kMBaseTailSplitCnt, 1);
  tiling::Set(plan.data, tiling::BasicField::kNBaseTailSplitCnt, 1);
  return plan;
}

class FusedOpTest : public ::testing::TestWithParam<FusedOp> {};

TEST_P(FusedOpTest, EpilogueMatchesTheReferenceOnTailShapes) {
  MatmulProblem p = Problem(MatmulOp::kFusedMatMul, 77, 101, 45);
  p.fused.op = GetParam();
  if (p.fused.op == FusedOp::kCast16To32) p.dtype_c = DataType::kFloat32;
  p.has_bias = p.fused.op != FusedOp::kGeluErf && p.fused.op != FusedOp::kGeluTanh;
  p.dtype_bias = DataType::kFloat32;
  EmulateAndCheck(Fused2dPlan(p), p);
}

INSTANTIATE_TEST_SUITE_P(AllOps, FusedOpTest,
                         ::testing::Values(FusedOp::kNone, FusedOp::kRelu, FusedOp::kAdd,
                                           FusedOp::kMul, FusedOp::kGeluErf, FusedOp::kGeluTanh,
                                           FusedOp::kCast16To32),
                         [](const ::testing::TestParamInfo<FusedOp>& info) {
                           return std::string(tiling::FusedOpKeyName(info.param)) == "16CAST32"
                                      ? std::string("CAST16TO32")
                                      : std::string(tiling::FusedOpKeyName(info.param));
                         });

TEST(FusedEmulationTest, EpilogueChangesC) {
  // The fused op is applied: ReLU leaves no negative element, add differs
  // from the plain matmul by x3.
  MatmulProblem p = Problem(MatmulOp::kFusedMatMul, 40, 50, 32, DataType::kFloat32);
  p.fused.op = FusedOp::kRelu;
  const Tensors inputs = RandomInputs(p, 9);
  absl::StatusOr<EmulationResult> relu = Emulate(Fused2dPlan(p), p, Chip950(), inputs, Options());
  ASSERT_THAT(relu.status(), IsOk());
  for (uint64_t i = 0; i < relu->c.elements(); ++i) ASSERT_GE(relu->c.Get(i), 0.0f);
  p.fused.op = FusedOp::kAdd;
  Tensors with_x3 = RandomInputs(p, 9);
  absl::StatusOr<EmulationResult> add = Emulate(Fused2dPlan(p), p, Chip950(), with_x3, Options());
  p.fused.op = FusedOp::kNone;
  with_x3.x3.reset();
  absl::StatusOr<EmulationResult> none = Emulate(Fused2dPlan(p), p, Chip950(), with_x3, Options());
  ASSERT_THAT(add.status(), IsOk());
  ASSERT_THAT(none.status(), IsOk());
  const Tensors x3_source = RandomInputs(
      [&] {
        MatmulProblem q = p;
        q.fused.op = FusedOp::kAdd;
        return q;
      }(),
      9);
  for (uint64_t i = 0; i < add->c.elements(); ++i) {
    ASSERT_FLOAT_EQ(add->c.Get(i), none->c.Get(i) + x3_source.x3->Get(i));
  }
}

TEST(FusedEmulationTest, MissingX3IsRefused) {
  MatmulProblem p = Problem(MatmulOp::kFusedMatMul, 16, 16, 16);
  p.fused.op = FusedOp::kMul;
  Tensors inputs = RandomInputs(p, 1);
  inputs.x3.reset();
  EXPECT_THAT(Emulate(Fused2dPlan(p), p, Chip950(), inputs, Options()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reads x3")));
}

// CANN's golden FusedMatMul_950_bmm_add_fixp1v2 (x3 [b, m, n]), smaller b.
TEST(FusedEmulationTest, BatchedAddReadsEachBatchesX3OrTheSharedOne) {
  for (int64_t x3_batch : {int64_t{24}, int64_t{1}, int64_t{0}}) {
    MatmulProblem p = Problem(MatmulOp::kFusedMatMul, 150, 150, 8, DataType::kFloat32);
    p.fused.op = FusedOp::kAdd;
    p.batch.a = p.batch.b = {24};
    p.hf32 = true;
    p.has_bias = true;
    p.dtype_bias = DataType::kFloat32;
    if (x3_batch > 0) p.fused.x3_shape = {x3_batch, 150, 150};
    TilingPlan plan;
    plan.strategy = "ITER_BATCH_BASICAPI";
    plan.key = *tiling::TilingKey::Decode(0x1200101, tiling::KeyLayout::kFused);
    plan.block_dim = 32;
    plan.kernel_type = tiling::KernelType::kMixed1To2;
    plan.data = tiling::NewTilingData<tiling::IterBatchField>();
    const uint64_t words[] = {150, 150, 8, 24, 8, 1, 1, 160, 160, 16, 0, 24, 0, 0};
    for (size_t i = 0; i < plan.data.fields.size(); ++i) plan.data.fields[i].value = words[i];
    SCOPED_TRACE(absl::StrCat("x3 batch ", x3_batch));
    EmulateAndCheck(plan, p);
  }
}

TEST(FusedEmulationTest, KEqualZeroAddLeavesX3) {
  MatmulProblem p = Problem(MatmulOp::kFusedMatMul, 13, 29, 0);
  p.fused.op = FusedOp::kAdd;
  p.batch.a = p.batch.b = {3};
  p.fused.x3_shape = {3, 13, 29};
  TilingPlan plan;
  plan.strategy = "INPUT_K_EQUAL_ZERO";
  plan.key.model = KernelModel::kKEqualZero;
  plan.key.layout = tiling::KeyLayout::kFused;
  plan.block_dim = 64;
  plan.kernel_type = tiling::KernelType::kAivOnly;
  plan.data = tiling::NewTilingData<tiling::BatchBasicField>();
  tiling::Set(plan.data, tiling::BatchBasicField::kUsedCoreNum, 64);
  const Tensors inputs = RandomInputs(p, 4);
  absl::StatusOr<EmulationResult> result = Emulate(plan, p, Chip950(), inputs, Options());
  ASSERT_THAT(result.status(), IsOk());
  for (uint64_t i = 0; i < result->c.elements(); ++i) {
    ASSERT_EQ(result->c.Get(i), inputs.x3->Get(i));
  }
}

// ---------------------------------------------------------------------------
// Timing.

EmulatorStats TimeOf(const TilingPlan& plan, const MatmulProblem& problem) {
  EmulatorOptions options;
  options.timing_only = true;
  absl::StatusOr<EmulationResult> result = Emulate(plan, problem, Chip950(), {}, options);
  EXPECT_THAT(result.status(), IsOk());
  return result.ok() ? result->stats : EmulatorStats{};
}

uint32_t AivCoresWithWork(const EmulatorStats& stats) {
  uint32_t count = 0;
  for (const CoreStats& core : stats.cores) {
    count += core.kind == tiling::CoreKind::kAiv && core.units > 0;
  }
  return count;
}

TEST(BatchTimingTest, MoreBatchesTakeLonger) {
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 256, 256, 256);
  p.batch.a = p.batch.b = {8};
  const uint64_t eight = TimeOf(AswtBatchPlan(p, 256, 8, 128, 32), p).kernel_cycles;
  p.batch.a = p.batch.b = {64};
  const uint64_t sixty_four = TimeOf(AswtBatchPlan(p, 256, 64, 128, 32), p).kernel_cycles;
  // 32 vs 256 tiles on 32 cores: one round vs eight.
  EXPECT_GT(sixty_four, 4 * eight);
}

TEST(FusedTimingTest, AivEpilogueCostsTimeAndUsesTwoAivsPerAic) {
  MatmulProblem p = Problem(MatmulOp::kFusedMatMul, 512, 1024, 64);
  const TilingPlan none_plan = Fused2dPlan(p);
  const EmulatorStats none = TimeOf(none_plan, p);
  EXPECT_EQ(AivCoresWithWork(none), 0u);  // on-the-fly: the fixpipe writes C
  uint64_t previous = none.kernel_cycles;
  // add (x3 read + 3 passes) < gelu_tanh (12) < gelu_erf (16).
  for (FusedOp op : {FusedOp::kAdd, FusedOp::kGeluTanh, FusedOp::kGeluErf}) {
    p.fused.op = op;
    const EmulatorStats stats = TimeOf(Fused2dPlan(p), p);
    SCOPED_TRACE(std::string(tiling::FusedOpName(op)));
    EXPECT_GT(stats.kernel_cycles, previous);
    previous = stats.kernel_cycles;
    // MIX 1:2: both AIVs of each of the 6 AICs take half tiles.
    EXPECT_EQ(AivCoresWithWork(stats), 12u);
    EXPECT_GT(stats.msprof.aiv_vec_time_us, 0.0);
  }
  // ReLU runs on the fixpipe: no AIV.
  p.fused.op = FusedOp::kRelu;
  EXPECT_EQ(AivCoresWithWork(TimeOf(Fused2dPlan(p), p)), 0u);
}

TEST(FusedTimingTest, AddReadsX3ThroughTheAivs) {
  MatmulProblem p = Problem(MatmulOp::kFusedMatMul, 256, 256, 64);
  const EmulatorStats none = TimeOf(Fused2dPlan(p), p);
  p.fused.op = FusedOp::kMul;
  const EmulatorStats mul = TimeOf(Fused2dPlan(p), p);
  // x3 (fp16, m x n) comes in on the AIVs' MTE2.
  EXPECT_EQ(none.traffic.ub_in_bytes, 0u);
  EXPECT_EQ(mul.traffic.ub_in_bytes, 256u * 256 * 2);
}

TEST(FusedTimingTest, Fixpipe1To2PlansCopyOutThroughTheAivs) {
  MatmulProblem p = Problem(MatmulOp::kFusedMatMul, 256, 256, 64);
  p.fused.op = FusedOp::kRelu;
  TilingPlan plan = Fused2dPlan(p);
  plan.key.l0c2out = tiling::L0cToOut::kNdFixpipe1To2;
  const EmulatorStats stats = TimeOf(plan, p);
  EXPECT_EQ(AivCoresWithWork(stats), 12u);
  EXPECT_EQ(stats.traffic.ub_out_bytes, 256u * 256 * 2);
}

TEST(FusedTimingTest, StreamKReductionRunsTheEpilogue) {
  // FusedMatMul's Stream-K plans fold the add into the AIV reduction: x3 is
  // read there and the reduction's vector work grows.
  MatmulProblem p = Problem(MatmulOp::kFusedMatMul, 40, 50, 2000);
  p.batch.a = p.batch.b = {3};
  const TilingPlan plan = BatchStreamKPlan(40, 50, 2000, 3, 48, 64, 256);
  const EmulatorStats none = TimeOf(plan, p);
  p.fused.op = FusedOp::kAdd;
  const EmulatorStats add = TimeOf(plan, p);
  EXPECT_EQ(add.traffic.ub_in_bytes, none.traffic.ub_in_bytes + 3u * 40 * 50 * 2);
  EXPECT_GT(add.pipe_busy_cycles[static_cast<int>(Pipe::kVec)],
            none.pipe_busy_cycles[static_cast<int>(Pipe::kVec)]);
  // And its numerics.
  EmulateAndCheck(plan, p);
}

TEST(BatchTimingTest, IterBatchTilesShareTheirLoads) {
  // The same 90 batches as tiles of 3 and as tiles of 1: the 3-batch tiles
  // pay one MTE2 instruction cost per operand and stage for three batches.
  const MatmulProblem p = IterBatchGoldenProblem();
  TilingPlan three = IterBatchGoldenPlan();
  TilingPlan one = three;
  tiling::Set(one.data, tiling::IterBatchField::kIterBatchL1, 1);
  tiling::Set(one.data, tiling::IterBatchField::kIterBatchL0, 1);
  const EmulatorStats grouped = TimeOf(three, p);
  const EmulatorStats single = TimeOf(one, p);
  const auto mte2 = [](const EmulatorStats& s) {
    return s.pipe_busy_cycles[static_cast<int>(Pipe::kMte2)];
  };
  EXPECT_LT(mte2(grouped), mte2(single));
  EXPECT_EQ(grouped.traffic.ddr_read_bytes + grouped.traffic.l2_read_bytes,
            single.traffic.ddr_read_bytes + single.traffic.l2_read_bytes);
}

// The engine's own plans that carry the 90-word BatchMatMulV3TilingData
// (BASE, ITER_BATCH, ITER_BATCH_BROADCAST_BASICAPI): Decide() must pick
// `strategy` for `problem`.
TilingPlan EnginePlan(const MatmulProblem& problem, std::string_view strategy) {
  absl::StatusOr<tiling::TilingDecision> decision =
      tiling::MakeBuiltinRegistry().Decide(problem, Chip950());
  EXPECT_THAT(decision.status(), IsOk());
  if (!decision.ok()) return {};
  std::string trace;
  for (const tiling::TraceEntry& entry : decision->trace) {
    absl::StrAppend(&trace, "\n  ", entry.strategy,
                    entry.capable ? " yes: " : " no: ", entry.reason.str());
  }
  EXPECT_EQ(decision->plan.strategy, strategy) << trace;
  EXPECT_EQ(decision->plan.data.kernel, tiling::KernelId::kBatchHighLevel);
  return decision->plan;
}

// Counts how often each C element (stacked batches) is written by a cube
// unit: every one must be exactly once.
void ExpectEveryCElementOnce(const tiling::Schedule& schedule, const MatmulProblem& problem) {
  const uint64_t rows = schedule.batch_rows * schedule.batch, n = static_cast<uint64_t>(problem.n);
  std::vector<int> writes(rows * n, 0);
  for (const tiling::WorkUnit& unit : schedule.units) {
    ASSERT_EQ(unit.op, tiling::UnitOp::kMmad);
    ASSERT_LE(unit.m.end, rows);
    ASSERT_LE(unit.n.end, n);
    EXPECT_EQ(unit.k.size(), static_cast<uint64_t>(problem.k));
    EXPECT_GE(unit.m.begin, uint64_t{unit.batch} * schedule.batch_rows);
    EXPECT_LE(unit.m.end, uint64_t{unit.batch + 1} * schedule.batch_rows);
    for (uint64_t i = unit.m.begin; i < unit.m.end; ++i) {
      for (uint64_t j = unit.n.begin; j < unit.n.end; ++j) ++writes[i * n + j];
    }
  }
  for (uint64_t i = 0; i < writes.size(); ++i) {
    ASSERT_EQ(writes[i], 1) << "C element " << i << " (row " << i / n << ")";
  }
  EXPECT_THAT(tiling::CheckScheduleCoverage(schedule, problem), IsOk());
}

// Numerics against the fp64 reference, C bit-identical with 1 and 3 host
// threads, every C element written once.
EmulationResult EmulateEnginePlan(const TilingPlan& plan, const MatmulProblem& problem) {
  const Tensors inputs = RandomInputs(problem, 11);
  absl::StatusOr<EmulationResult> one = Emulate(plan, problem, Chip950(), inputs, Options(1));
  EXPECT_THAT(one.status(), IsOk());
  if (!one.ok()) return {};
  absl::StatusOr<EmulationResult> three = Emulate(plan, problem, Chip950(), inputs, Options(3));
  EXPECT_THAT(three.status(), IsOk());
  if (three.ok()) {
    EXPECT_EQ(one->c.bytes, three->c.bytes) << "C depends on the host threads";
  }
  ExpectMatchesReference(problem, inputs, one->c);
  ExpectEveryCElementOnce(one->schedule, problem);
  return *std::move(one);
}

// BASE: A [4,1] x B [1,3] broadcast both ways, trans_a so A's batch is not
// merged into M; odd sizes leave tail blocks on both axes.
MatmulProblem BaseBroadcastProblem(int64_t outer = 4) {
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 77, 93, 45);
  p.trans_a = true;
  p.batch.a = {outer, 1};
  p.batch.b = {1, 3};
  p.batch.c = {outer, 3};
  return p;
}

TEST(HighLevelBatchTest, BaseWalksBaseBlocksOfEveryBroadcastBatch) {
  const MatmulProblem p = BaseBroadcastProblem();
  const TilingPlan plan = EnginePlan(p, "BASE");
  const EmulationResult result = EmulateEnginePlan(plan, p);
  const tiling::Schedule& s = result.schedule;
  EXPECT_EQ(s.batch, 12u);
  EXPECT_EQ(s.batch_rows, 77u);
  // One unit per baseM x baseN block of each batch, dealt round-robin over
  // usedCoreNum cores (BatchMatMulAswBlock).
  const uint64_t base_m = *tiling::Get(plan.data, tiling::HighLevelBatchField::kBaseM);
  const uint64_t base_n = *tiling::Get(plan.data, tiling::HighLevelBatchField::kBaseN);
  const uint64_t used = *tiling::Get(plan.data, tiling::HighLevelBatchField::kUsedCoreNum);
  const uint64_t tiles = 12 * tiling::CeilDiv(77, base_m) * tiling::CeilDiv(93, base_n);
  EXPECT_EQ(s.units.size(), tiles);
  EXPECT_EQ(s.base_m, base_m);
  EXPECT_EQ(s.rounds, tiling::CeilDiv(tiles, used));
  for (const tiling::WorkUnit& unit : s.units) {
    EXPECT_EQ(unit.core, unit.tile_idx % used);
    EXPECT_EQ(unit.batch, unit.tile_idx / (tiles / 12));
  }
}

TEST(HighLevelBatchTest, BaseWithMoreBatchesTakesLonger) {
  const MatmulProblem few = BaseBroadcastProblem(4), many = BaseBroadcastProblem(40);
  const TilingPlan few_plan = EnginePlan(few, "BASE"), many_plan = EnginePlan(many, "BASE");
  EXPECT_GT(TimeOf(many_plan, many).kernel_cycles, TimeOf(few_plan, few).kernel_cycles);
}

// ITER_BATCH_BROADCAST_BASICAPI: one A shared by 40 B batches on 32 cores.
MatmulProblem IterBroadcastProblem(int64_t batch = 40) {
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 24, 40, 32);
  p.batch.a = {1};
  p.batch.b = {batch};
  p.batch.c = {batch};
  return p;
}

TEST(HighLevelBatchTest, IterBatchBroadcastReadsTheOneABatchForEveryC) {
  const MatmulProblem p = IterBroadcastProblem();
  const TilingPlan plan = EnginePlan(p, "ITER_BATCH_BROADCAST_BASICAPI");
  EXPECT_EQ(plan.key.batch_model, static_cast<uint8_t>(tiling::BatchModel::kIterBatchBroadcastA));
  const EmulationResult result = EmulateEnginePlan(plan, p);
  EXPECT_EQ(result.schedule.batch, 40u);
  // 40 single-block batches on 32 cores: two rounds, the first eight cores
  // take two batches.
  EXPECT_EQ(result.schedule.units.size(), 40u);
  EXPECT_EQ(result.schedule.aic_cores, 32u);
  EXPECT_EQ(result.schedule.rounds, 2u);
  const EmulatorStats more =
      TimeOf(EnginePlan(IterBroadcastProblem(160), "ITER_BATCH_BROADCAST_BASICAPI"),
             IterBroadcastProblem(160));
  EXPECT_GT(more.kernel_cycles, result.stats.kernel_cycles);
}

// ITER_BATCH: equal batches, both operands transposed, with a bias of
// n > 512 (the 4 KiB bias table rejects ITER_BATCH_BASICAPI's L0 load).
MatmulProblem IterBatchBiasProblem(int64_t batch = 40) {
  MatmulProblem p = Problem(MatmulOp::kBatchMatMulV3, 19, 659, 15);
  p.trans_a = p.trans_b = true;
  p.batch.a = p.batch.b = {batch};
  p.has_bias = true;
  return p;
}

TEST(HighLevelBatchTest, IterBatchGivesEachCoreIterBatchWholeBatches) {
  const MatmulProblem p = IterBatchBiasProblem();
  const TilingPlan plan = EnginePlan(p, "ITER_BATCH");
  EXPECT_EQ(plan.key.batch_model, static_cast<uint8_t>(tiling::BatchModel::kIterBatchSingleBias));
  const EmulationResult result = EmulateEnginePlan(plan, p);
  const tiling::Schedule& s = result.schedule;
  EXPECT_TRUE(s.batches_share_loads);
  const uint64_t per_core = *tiling::Get(plan.data, tiling::HighLevelBatchField::kIterBatch);
  const uint64_t used = *tiling::Get(plan.data, tiling::HighLevelBatchField::kUsedCoreNum);
  ASSERT_GT(per_core, 0u);
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> loads;
  for (const tiling::WorkUnit& unit : s.units) {
    EXPECT_EQ(unit.m.size(), 19u);
    EXPECT_EQ(unit.n.size(), 659u);
    loads[{unit.core, unit.round}].push_back(unit.batch);
  }
  const uint64_t loops = tiling::CeilDiv(40, per_core * used);
  for (const auto& [core_round, batches] : loads) {
    // Consecutive batches; iterBatch of them before the last loop.
    for (size_t i = 1; i < batches.size(); ++i) EXPECT_EQ(batches[i], batches[i - 1] + 1);
    if (core_round.second + 1 < loops) {
      EXPECT_EQ(batches.size(), per_core);
    }
    EXPECT_LE(batches.size(), per_core);
  }
  EXPECT_GT(TimeOf(EnginePlan(IterBatchBiasProblem(160), "ITER_BATCH"), IterBatchBiasProblem(160))
                .kernel_cycles,
            result.stats.kernel_cycles);
}

// A bias per C batch (batch_bias = C's batch dims): BASE reads bias batch
// c % biasBatchDimAll for C batch c.
TEST(HighLevelBatchTest, BatchedBiasAddsEachBatchsRow) {
  MatmulProblem p = BaseBroadcastProblem();
  p.batch.a = p.batch.b = p.batch.c = {2, 3};
  p.has_bias = true;
  p.batch.bias = {2, 3};
  const TilingPlan plan = EnginePlan(p, "BASE");
  EXPECT_EQ(*tiling::Get(plan.data, tiling::HighLevelBatchField::kBiasBatchDimAll), 6u);
  EmulateEnginePlan(plan, p);
}

}  // namespace
}  // namespace npu::emu
