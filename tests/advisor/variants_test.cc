// The variant generators: each plan follows CANN's rules except for the one
// choice it varies, fits the chip, and is offered only where it is valid.
#include "server/advisor/variants.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "emulator/emulator.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/builtin_strategies.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::advisor {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::testing::HasSubstr;
using tiling::DataType;
using tiling::L1Residency;
using tiling::MatmulProblem;
using tiling::TilingPlan;

TilingPlan Decide(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                  const std::string& forced = "") {
  tiling::DecideOptions options;
  options.forced_strategy = forced;
  absl::StatusOr<tiling::TilingDecision> decision =
      tiling::MakeBuiltinRegistry().Decide(problem, chip, options);
  EXPECT_THAT(decision, IsOk());
  return decision.ok() ? decision->plan : TilingPlan{};
}

MatmulProblem NzB(MatmulProblem problem) {
  problem.format_b = tiling::Format::kFractalNz;
  return problem;
}

MatmulProblem Biased(MatmulProblem problem, bool trans_a, bool trans_b) {
  problem.has_bias = true;
  problem.trans_a = trans_a;
  problem.trans_b = trans_b;
  return problem;
}

void ExpectTimes(const TilingPlan& plan, const MatmulProblem& problem,
                 const tiling::ChipSpec& chip) {
  emu::EmulatorOptions options;
  options.timing_only = true;
  EXPECT_THAT(emu::Emulate(plan, problem, chip, {}, options), IsOk());
}

// ---------------------------------------------------------------------------
// (1) Block plans.

TEST(BlockPlanTest, CannsOwnBlockReproducesCannsStreamedPlan) {
  // Given the block CANN's search picks, BlockPlan derives every other field
  // exactly as BASIC_ASWT does: the variant differs from CANN in the block
  // only.
  for (const MatmulProblem& problem :
       {Problem(4097, 777, 1999), Problem(1000, 257, 129), Problem(77, 131, 300),
        Problem(100, 90, 700, DataType::kFloat32), Problem(100, 200, 3000, DataType::kFloat32),
        Biased(Problem(333, 200, 96, DataType::kBFloat16), true, true), Problem(512, 512, 16384)}) {
    const tiling::ChipSpec chip = Chip950();
    const TilingPlan cann = Decide(problem, chip, "BASIC_ASWT");
    SCOPED_TRACE(absl::StrCat(problem.m, "x", problem.n, "x", problem.k, " ", cann.detail.str()));
    ASSERT_EQ(cann.key.full_load, tiling::FullLoad::kNone);
    ASSERT_EQ(cann.key.l0c2out, tiling::L0cToOut::kOnTheFly);
    const Offer offer = BlockPlan(problem, chip, cann.block.base_m, cann.block.base_n);
    ASSERT_TRUE(offer.ok) << offer.reason;
    EXPECT_EQ(offer.plan.key.Encode(), cann.key.Encode());
    EXPECT_EQ(offer.plan.block_dim, cann.block_dim);
    EXPECT_EQ(offer.plan.kernel_type, cann.kernel_type);
    EXPECT_EQ(offer.plan.workspace_bytes, cann.workspace_bytes);
    ASSERT_EQ(offer.plan.data.fields.size(), cann.data.fields.size());
    for (size_t i = 0; i < cann.data.fields.size(); ++i) {
      EXPECT_EQ(offer.plan.data.fields[i].name, cann.data.fields[i].name);
      EXPECT_EQ(offer.plan.data.fields[i].value, cann.data.fields[i].value)
          << cann.data.fields[i].name;
    }
  }
}

TEST(BlockPlanTest, RejectsBlocksThatBreakAlignmentOrBuffers) {
  const MatmulProblem problem = Problem(4097, 777, 1999);
  EXPECT_THAT(BlockPlan(problem, Chip950(), 100, 64).reason, HasSubstr("alignment"));
  const Offer too_big = BlockPlan(problem, Chip950(), 512, 256);  // 512 KiB of fp32 in L0C
  EXPECT_FALSE(too_big.ok);
  EXPECT_THAT(too_big.reason, HasSubstr("l0c"));
  EXPECT_THAT(BlockPlan(NzB(problem), Chip950(), 128, 128).reason, HasSubstr("FRACTAL_NZ"));
  MatmulProblem empty_k = Problem(64, 64, 0);
  EXPECT_FALSE(BlockPlan(empty_k, Chip950(), 64, 64).ok);
}

TEST(BlockPlanTest, EveryGridBlockIsAValidPlan) {
  for (const MatmulProblem& problem :
       {Problem(4097, 777, 1999), Problem(1, 4096, 4096), Problem(16383, 1, 255),
        Problem(300, 300, 20000, DataType::kFloat32), Problem(77, 131, 300, DataType::kBFloat16)}) {
    const tiling::ChipSpec chip = Chip950();
    const auto grid = BlockSearchGrid(problem, chip);
    ASSERT_FALSE(grid.empty());
    EXPECT_TRUE(std::is_sorted(grid.begin(), grid.end()));
    const std::set<std::pair<uint64_t, uint64_t>> unique(grid.begin(), grid.end());
    EXPECT_EQ(unique.size(), grid.size());
    for (const auto& [bm, bn] : grid) {
      SCOPED_TRACE(absl::StrCat(problem.m, "x", problem.n, "x", problem.k, " block ", bm, "x", bn));
      EXPECT_EQ(bm % 16, 0u);
      EXPECT_EQ(bn % 16, 0u);
      EXPECT_LE(bm, std::max<uint64_t>(16, tiling::CeilAlign(problem.m, 16)));
      EXPECT_LE(bn, std::max<uint64_t>(16, tiling::CeilAlign(problem.n, 16)));
      EXPECT_LE(bm * bn * 4, chip.l0c_bytes);
      const Offer offer = BlockPlan(problem, chip, bm, bn);
      ASSERT_TRUE(offer.ok) << offer.reason;
      EXPECT_THAT(tiling::CheckPlanFits(offer.plan, problem, chip), IsOk());
      EXPECT_GT(EstimateBlockCycles(problem, chip, bm, bn), 0.0);
      EXPECT_GT(EstimateBlockOps(problem, chip, bm, bn), 0u);
    }
    ExpectTimes(BlockPlan(problem, chip, grid.front().first, grid.front().second).plan, problem,
                chip);
  }
}

// ---------------------------------------------------------------------------
// (2) SWAT window.

TEST(WindowTest, OfferedOnlyWhenTheOperandsExceedL2OverSeveralRounds) {
  const tiling::ChipSpec chip = Chip950();
  // 64 x 32 tiles of 256 x 256, 48 MiB of operands and 256 MiB of C.
  const MatmulProblem big = Problem(16384, 8192, 1024);
  const TilingPlan aswt = Decide(big, chip);
  EXPECT_EQ(WindowObstacle(aswt, big, chip), "");
  const std::vector<uint32_t> windows = WindowCandidates(aswt, big, chip);
  ASSERT_FALSE(windows.empty());
  for (uint32_t window : windows) {
    EXPECT_NE(window, 4u);
    EXPECT_GE(window, 1u);
    EXPECT_LE(window, tiling::CeilDiv(big.m, aswt.block.m_l1));
    const Offer offer = WindowPlan(aswt, big, chip, window);
    ASSERT_TRUE(offer.ok) << offer.reason;
    EXPECT_EQ(offer.plan.swat_window_rows, window);
  }

  const MatmulProblem fits = Problem(4097, 777, 1999);
  EXPECT_THAT(WindowObstacle(Decide(fits, chip), fits, chip), HasSubstr("fit L2"));
  EXPECT_FALSE(WindowPlan(Decide(fits, chip), fits, chip, 8).ok);

  const MatmulProblem one_round = Problem(512, 512, 16384);
  EXPECT_THAT(WindowObstacle(Decide(one_round, Chip950(24), "BASIC_ASWT"), one_round, Chip950(24)),
              HasSubstr("one round"));
  EXPECT_THAT(WindowObstacle(Decide(one_round, chip), one_round, chip), HasSubstr("STREAM_K"));

  const MatmulProblem a_full = Problem(48, 9000, 64);
  EXPECT_THAT(WindowObstacle(Decide(a_full, chip), a_full, chip), HasSubstr("resident operand"));
  EXPECT_THAT(WindowObstacle(aswt, NzB(big), chip), HasSubstr("FRACTAL_NZ"));
}

// ---------------------------------------------------------------------------
// (3) Partial residency.

TEST(ResidencyTest, BandsOfferedWhereTheWholeMatrixExceedsThreeQuartersOfL1) {
  const tiling::ChipSpec chip = Chip950();
  const MatmulProblem problem = Problem(4097, 777, 1999);
  const TilingPlan aswt = Decide(problem, chip);
  for (L1Residency side : {L1Residency::kABand, L1Residency::kBBand}) {
    const bool a_side = side == L1Residency::kABand;
    SCOPED_TRACE(a_side ? "A band" : "B band");
    const Offer offer = ResidencyPlan(aswt, problem, chip, side);
    ASSERT_TRUE(offer.ok) << offer.reason;
    const TilingPlan& plan = offer.plan;
    EXPECT_EQ(plan.l1_residency, side);
    EXPECT_EQ(plan.key.full_load, tiling::FullLoad::kNone);
    const uint64_t band = a_side ? plan.block.m_l1 : plan.block.n_l1;
    const uint64_t base = a_side ? plan.block.base_m : plan.block.base_n;
    EXPECT_EQ(band % base, 0u);
    EXPECT_LE(band * tiling::CeilAlign(problem.k, 16) * 2, chip.l1_bytes * 3 / 4);
    // Consecutive units of a core share the band: rows first for A, columns
    // first for B.
    EXPECT_EQ(plan.swat_window_rows, a_side ? 1u : tiling::CeilDiv(problem.m, plan.block.m_l1));
    EXPECT_THAT(tiling::CheckPlanFits(plan, problem, chip), IsOk());
    ExpectTimes(plan, problem, chip);
  }
}

TEST(ResidencyTest, NotOfferedWhereInvalid) {
  const tiling::ChipSpec chip = Chip950();
  // A (6 KiB) fits: CANN's own A full load applies.
  const MatmulProblem small_a = Problem(48, 9000, 64);
  EXPECT_THAT(ResidencyPlan(Decide(small_a, chip), small_a, chip, L1Residency::kABand).reason,
              HasSubstr("CANN's whole-matrix residency"));
  // K too deep for even 16 rows.
  const MatmulProblem deep = Problem(512, 512, 16384);
  EXPECT_THAT(
      ResidencyPlan(Decide(deep, chip, "BASIC_ASWT"), deep, chip, L1Residency::kABand).reason,
      HasSubstr("too deep"));
  // The other operand is a single tile: nothing to re-use the band.
  const MatmulProblem gemv = Problem(1, 4096, 4096);
  EXPECT_THAT(
      ResidencyPlan(Decide(gemv, chip, "BASIC_ASWT"), gemv, chip, L1Residency::kBBand).reason,
      HasSubstr("one tile"));
  EXPECT_THAT(ResidencyPlan(Decide(Problem(4097, 777, 1999), chip), NzB(Problem(4097, 777, 1999)),
                            chip, L1Residency::kABand)
                  .reason,
              HasSubstr("FRACTAL_NZ"));
  EXPECT_FALSE(
      ResidencyPlan(Decide(gemv, chip, "BASIC_ASWT"), gemv, chip, L1Residency::kStreamed).ok);
}

// ---------------------------------------------------------------------------
// (4) AIV dot products.

TEST(AivDotTest, OfferedOnlyForSixteenBitVectorShapes) {
  const tiling::ChipSpec chip = Chip950();
  for (const MatmulProblem& problem :
       {Problem(1, 4096, 4096), Problem(1, 300, 777, DataType::kBFloat16), Problem(16383, 1, 255),
        Biased(Problem(1, 1000, 64), false, true)}) {
    const Offer offer = AivDotPlan(problem, chip);
    ASSERT_TRUE(offer.ok) << offer.reason;
    EXPECT_EQ(offer.plan.key.model, tiling::KernelModel::kToMul);
    EXPECT_EQ(offer.plan.kernel_type, tiling::KernelType::kAivOnly);
    EXPECT_LE(offer.plan.block_dim, chip.aiv_num);
    ExpectTimes(offer.plan, problem, chip);
  }
  EXPECT_THAT(AivDotPlan(Problem(1, 4096, 4096, DataType::kFloat32), chip).reason,
              HasSubstr("float16"));
  EXPECT_THAT(AivDotPlan(Problem(2, 4096, 4096), chip).reason, HasSubstr("both above 1"));
  EXPECT_THAT(AivDotPlan(Problem(1, 4096, 0), chip).reason, HasSubstr("K=0"));
  EXPECT_THAT(AivDotPlan(NzB(Problem(1, 4096, 4096)), chip).reason, HasSubstr("FRACTAL_NZ"));
}

}  // namespace
}  // namespace npu::advisor
