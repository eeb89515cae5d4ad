// The numerics check: CANN's plans and the variants compute C within the
// dtype bound, directly or on a shrunken copy that keeps the plan's
// structure.
#include "server/advisor/verify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "server/advisor/variants.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/schedule.h"
#include "tests/testing/grouped_problems.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::advisor {
namespace {

using ::npu::testing::BuiltinPlan;
using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using tiling::DataType;
using tiling::KernelModel;
using tiling::MatmulProblem;
using tiling::TilingPlan;

MatmulProblem With(MatmulProblem p, bool bias, bool trans_a, bool trans_b) {
  p.has_bias = bias;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  return p;
}

MatmulProblem Fp32Accumulation(MatmulProblem p) {
  p.force_grp_acc_fp32 = true;
  return p;
}

struct Case {
  std::string name;
  MatmulProblem problem;
  uint32_t aic = 32;
  KernelModel model;
};

uint64_t Macs(const MatmulProblem& p) { return uint64_t(p.m) * uint64_t(p.n) * uint64_t(p.k); }

class CannPlanTest : public ::testing::TestWithParam<Case> {};

TEST_P(CannPlanTest, PassesDirectlyOrShrunk) {
  const Case& c = GetParam();
  const tiling::ChipSpec chip = Chip950(c.aic);
  const TilingPlan plan = BuiltinPlan(c.problem, chip);
  ASSERT_EQ(plan.key.model, c.model) << plan.detail;
  NumericsReport report;
  ASSERT_THAT(VerifyNumerics(plan, c.problem, chip, 3, &report, 2), IsOk());
  EXPECT_LE(report.worst_error_ratio, 1.0);
  const uint64_t elements = uint64_t(c.problem.m) * c.problem.n +
                            uint64_t(c.problem.m) * c.problem.k +
                            uint64_t(c.problem.k) * c.problem.n;
  EXPECT_EQ(report.shrunk, Macs(c.problem) > kDirectVerifyMacs || elements > kDirectVerifyElements)
      << report.note;
  if (report.shrunk) {
    EXPECT_LT(Macs(Problem(report.m, report.n, report.k)), Macs(c.problem));
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryModel, CannPlanTest,
    ::testing::ValuesIn(std::vector<Case>{
        {"AswtOdd", Problem(77, 131, 300), 32, KernelModel::kBasic},
        {"AswtMultiRoundTail", Problem(1000, 257, 129), 32, KernelModel::kBasic},
        {"AswtBf16BiasTransposed",
         With(Problem(333, 200, 96, DataType::kBFloat16), true, true, true), 32,
         KernelModel::kBasic},
        {"AswtLarge", Problem(4097, 777, 1999), 32, KernelModel::kBasic},
        {"AswtHuge", Problem(16383, 16383, 16383), 32, KernelModel::kBasic},
        {"SplitKFp32", Problem(100, 200, 3000, DataType::kFloat32), 32, KernelModel::kBasicSplitK},
        {"SplitKFp32Large", Problem(1024, 2048, 8192, DataType::kFloat32), 32,
         KernelModel::kBasicSplitK},
        {"AFullLoad", Problem(48, 9000, 64), 32, KernelModel::kBasic},
        {"AFullLoadBiasGemv", With(Problem(1, 135021, 9398), true, false, false), 32,
         KernelModel::kBasic},
        {"BFullLoad", With(Problem(5000, 128, 32), false, true, false), 32, KernelModel::kBasic},
        {"FixpipeOutput", With(Problem(1024, 4090, 128), false, false, true), 32,
         KernelModel::kBasic},
        {"StreamKSk", Problem(200, 300, 5000), 8, KernelModel::kStreamK},
        {"StreamKSeeds", Problem(512, 512, 16384), 24, KernelModel::kStreamK},
        {"StreamKDataParallelSk", Problem(2304, 4096, 16384), 32, KernelModel::kStreamK},
        {"StreamKFixpipe", Problem(523, 246, 10866), 32, KernelModel::kStreamK},
        {"StreamKSplitKFp32", Problem(40, 60, 20000, DataType::kFloat32), 8,
         KernelModel::kStreamKSplitK},
        {"KEqualZero", Problem(37, 53, 0), 32, KernelModel::kKEqualZero},
        {"ToMul", Fp32Accumulation(Problem(1, 4096, 4096, DataType::kFloat32)), 32,
         KernelModel::kToMul},
        {"ToMultiMul",
         Fp32Accumulation(With(Problem(10, 192, 4096, DataType::kFloat32), false, false, true)), 32,
         KernelModel::kToMultiMul},
    }),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(VerifyNumericsTest, VariantsPass) {
  const tiling::ChipSpec chip = Chip950();
  std::vector<std::pair<TilingPlan, MatmulProblem>> runs;
  const MatmulProblem mid = Problem(4097, 777, 1999);
  const TilingPlan aswt = BuiltinPlan(mid, chip);
  runs.emplace_back(BlockPlan(mid, chip, 192, 160).plan, mid);
  runs.emplace_back(ResidencyPlan(aswt, mid, chip, tiling::L1Residency::kABand).plan, mid);
  runs.emplace_back(ResidencyPlan(aswt, mid, chip, tiling::L1Residency::kBBand).plan, mid);
  const MatmulProblem fp32 = Problem(700, 900, 3000, DataType::kFloat32);
  runs.emplace_back(
      ResidencyPlan(BuiltinPlan(fp32, chip), fp32, chip, tiling::L1Residency::kABand).plan, fp32);
  const MatmulProblem big = Problem(16384, 8192, 1024);
  runs.emplace_back(WindowPlan(BuiltinPlan(big, chip), big, chip, 7).plan, big);
  for (const MatmulProblem& gemv :
       {Problem(1, 16384, 16384), Problem(1, 300, 777, DataType::kBFloat16),
        With(Problem(5000, 1, 999), true, true, false)}) {
    runs.emplace_back(AivDotPlan(gemv, chip).plan, gemv);
  }
  for (const auto& [plan, problem] : runs) {
    SCOPED_TRACE(absl::StrCat(problem.m, "x", problem.n, "x", problem.k, " ", plan.detail.str()));
    ASSERT_GT(plan.block_dim, 0u) << "variant not offered";
    NumericsReport report;
    EXPECT_THAT(VerifyNumerics(plan, problem, chip, 5, &report, 2), IsOk());
    EXPECT_LE(report.worst_error_ratio, 1.0);
  }
}

TEST(ShrinkTest, KeepsThePlanStructure) {
  const tiling::ChipSpec chip = Chip950();
  std::vector<std::pair<TilingPlan, MatmulProblem>> runs;
  for (const MatmulProblem& problem :
       {Problem(4097, 777, 1999), Problem(16383, 16383, 16383),
        Problem(1024, 2048, 8192, DataType::kFloat32), Problem(48, 9000, 64)}) {
    runs.emplace_back(BuiltinPlan(problem, chip), problem);
  }
  const MatmulProblem mid = Problem(4097, 777, 1999);
  runs.emplace_back(
      ResidencyPlan(BuiltinPlan(mid, chip), mid, chip, tiling::L1Residency::kABand).plan, mid);
  const MatmulProblem big = Problem(16384, 8192, 1024);
  runs.emplace_back(WindowPlan(BuiltinPlan(big, chip), big, chip, 7).plan, big);
  for (const auto& [plan, problem] : runs) {
    SCOPED_TRACE(absl::StrCat(problem.m, "x", problem.n, "x", problem.k, " ", plan.detail.str()));
    absl::StatusOr<ShrunkCase> shrunk =
        ShrinkForVerification(plan, problem, chip, kDirectVerifyMacs);
    ASSERT_THAT(shrunk, IsOk());
    const TilingPlan& small = shrunk->plan;
    EXPECT_EQ(small.key.Encode(), plan.key.Encode());
    EXPECT_EQ(small.block.base_m, plan.block.base_m);
    EXPECT_EQ(small.block.base_n, plan.block.base_n);
    EXPECT_EQ(small.block.base_k, plan.block.base_k);
    EXPECT_EQ(small.block.k_l1, plan.block.k_l1);
    EXPECT_EQ(small.block.m_l1, plan.block.m_l1);
    EXPECT_EQ(small.block.n_l1, plan.block.n_l1);
    EXPECT_EQ(small.swat_window_rows, plan.swat_window_rows);
    EXPECT_EQ(small.l1_residency, plan.l1_residency);
    // Tails kept: the remainders against the L1 blocks and K stages.
    EXPECT_EQ(shrunk->problem.m % plan.block.m_l1, problem.m % plan.block.m_l1);
    EXPECT_EQ(shrunk->problem.n % plan.block.n_l1, problem.n % plan.block.n_l1);
    EXPECT_EQ(shrunk->problem.k % plan.block.k_l1, problem.k % plan.block.k_l1);
    EXPECT_LE(Macs(shrunk->problem), Macs(problem));
    absl::StatusOr<tiling::Schedule> schedule =
        tiling::ExpandSchedule(small, shrunk->problem, shrunk->chip);
    ASSERT_THAT(schedule, IsOk());
    EXPECT_THAT(tiling::CheckScheduleCoverage(*schedule, shrunk->problem), IsOk());
  }
}

TEST(ShrinkTest, StreamKKeepsItsRoundsAndKSlices) {
  for (const auto& [problem, aic] : std::vector<std::pair<MatmulProblem, uint32_t>>{
           {Problem(512, 512, 16384), 24},
           {Problem(2304, 4096, 16384), 32},
           {Problem(40, 60, 20000, DataType::kFloat32), 8}}) {
    const tiling::ChipSpec chip = Chip950(aic);
    const TilingPlan plan = BuiltinPlan(problem, chip);
    absl::StatusOr<tiling::Schedule> full = tiling::ExpandSchedule(plan, problem, chip);
    absl::StatusOr<ShrunkCase> shrunk = ShrinkForVerification(plan, problem, chip, 1 << 24);
    ASSERT_THAT(full, IsOk());
    ASSERT_THAT(shrunk, IsOk());
    absl::StatusOr<tiling::Schedule> small =
        tiling::ExpandSchedule(shrunk->plan, shrunk->problem, chip);
    ASSERT_THAT(small, IsOk());
    EXPECT_THAT(tiling::CheckScheduleCoverage(*small, shrunk->problem), IsOk());
    EXPECT_FALSE(small->reductions.empty());
    EXPECT_EQ(small->split_k_chunk, full->split_k_chunk);
    auto has_data_parallel = [](const tiling::Schedule& s) {
      for (const tiling::WorkUnit& unit : s.units) {
        if (unit.op == tiling::UnitOp::kMmad && !unit.writes_partial) return true;
      }
      return false;
    };
    EXPECT_EQ(has_data_parallel(*small), has_data_parallel(*full));
  }
}

TEST(VerifyNumericsTest, EmulatorErrorsPassThrough) {
  // A Stream-K plan on a shape whose tiles fill whole rounds has no tail
  // round to split (seeds/000 section 7, problem 4).
  const tiling::ChipSpec chip = Chip950(8);
  const TilingPlan plan = BuiltinPlan(Problem(768, 768, 4096), chip);
  ASSERT_EQ(plan.key.model, KernelModel::kStreamK);
  EXPECT_THAT(VerifyNumerics(plan, Problem(512, 1024, 16), chip, 1),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  // A block too large for L0C is named.
  TilingPlan oversized = BuiltinPlan(Problem(300, 300, 300), Chip950());
  oversized.block.base_m = oversized.block.m_l1 = 512;
  oversized.block.base_n = oversized.block.n_l1 = 512;
  EXPECT_THAT(VerifyNumerics(oversized, Problem(300, 300, 300), Chip950(), 1),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// GroupedMatmul above the direct limits: CANN's no-quant plan and a
// re-blocked one are checked on a few experts cut to their last block, N to
// one block and K to one step, with the same block; a form the copy does
// not keep says so.
TEST(ShrinkTest, GroupedMatmulKeepsItsBlockOnAFewExperts) {
  ::npu::testing::GroupedSpec spec;
  spec.groups = 16;
  spec.m = 8192;
  spec.n = 4096;
  spec.k = 2048;
  spec.histogram = ::npu::testing::SkewedHistogram(8192, 16, 1.5, 1);
  spec.histogram[3] += spec.histogram[5];
  spec.histogram[5] = 0;  // an empty expert
  const MatmulProblem problem = ::npu::testing::GroupedProblem(spec);
  const TilingPlan cann = BuiltinPlan(problem, Chip950());
  for (const auto& [bm, bn] : {std::pair<uint64_t, uint64_t>{cann.block.base_m, cann.block.base_n},
                               std::pair<uint64_t, uint64_t>{192, 256}}) {
    absl::StatusOr<TilingPlan> plan = tiling::GroupedNoQuantPlanWithBlock(problem, Chip950(), bm, bn);
    ASSERT_THAT(plan, IsOk());
    NumericsReport report;
    ASSERT_THAT(VerifyNumerics(*plan, problem, Chip950(), 3, &report), IsOk());
    EXPECT_TRUE(report.shrunk);
    EXPECT_LE(report.worst_error_ratio, 1.0);
    EXPECT_THAT(report.note, ::testing::HasSubstr(absl::StrCat("same ", bm, "x", bn, " blocks")));
    EXPECT_THAT(report.note, ::testing::HasSubstr("experts of"));
    EXPECT_LE(uint64_t(report.m) * report.n * report.k, uint64_t{1} << 26);
  }
  ::npu::testing::GroupedSpec split_k;
  split_k.group_type = tiling::kGroupTypeSplitK;
  split_k.groups = 4;
  split_k.m = 96;
  split_k.n = 160;
  split_k.k = 640;
  const MatmulProblem k_problem = ::npu::testing::GroupedProblem(split_k);
  EXPECT_THAT(ShrinkForVerification(BuiltinPlan(k_problem, Chip950()), k_problem, Chip950(),
                                    uint64_t{1} << 24)
                  .status(),
              StatusIs(absl::StatusCode::kUnimplemented, ::testing::HasSubstr("split M")));
}

}  // namespace
}  // namespace npu::advisor
