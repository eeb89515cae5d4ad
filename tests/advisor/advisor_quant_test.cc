// ADVISE for QuantBatchMatmulV3: CANN's plan re-blocked on its own kernel
// and struct (QuantBlockPlan), refused with the kernel's reason where the
// kernel would not take the block, timed and ranked with CANN's choice, and
// both the recommendation and CANN's choice checked through the quant
// numerics (on a shrunken copy above the direct limits).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "emulator/emulator.h"
#include "server/advisor/advisor.h"
#include "server/advisor/variants.h"
#include "server/advisor/verify.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/custom_plans.h"
#include "tests/testing/kernel_schedules.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::advisor {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using tiling::DataType;
using tiling::MatmulProblem;
using tiling::TilingPlan;
using tiling::quant::QuantBlockChoice;

// W8A8: int8 x1 and x2 (stored [n, k]), a float32 scale per channel and per
// token, bfloat16 y: MIX_ASW's 96-word struct.
MatmulProblem W8A8(int64_t m, int64_t n, int64_t k) {
  MatmulProblem p = npu::testing::W8A8Problem(m, n, k);
  p.trans_b = true;
  p.dtype_c = DataType::kBFloat16;
  return p;
}

// MXFP8: float8_e4m3fn x1 and x2 with e8m0 scales per 32 K values, bfloat16
// y: MX_BASIC_API_ASW's basic-API struct.
MatmulProblem MxFp8(int64_t m, int64_t n, int64_t k) {
  MatmulProblem p = npu::testing::MxFp4Problem(m, n, k);
  p.dtype_a = p.dtype_b = DataType::kFloat8E4M3;
  return p;
}

TilingPlan Cann(const MatmulProblem& problem) {
  absl::StatusOr<tiling::TilingDecision> decision =
      tiling::MakeBuiltinRegistry().Decide(problem, Chip950());
  EXPECT_THAT(decision, IsOk());
  return decision.ok() ? decision->plan : TilingPlan{};
}

uint64_t Member(const TilingPlan& plan, std::string_view name) {
  return plan.data.Get(name).value_or(0);
}

// ---------------------------------------------------------------------------
// The re-blocked plan.

TEST(QuantBlockPlanTest, ReblocksCannsPlanOnItsOwnStructAndKernel) {
  struct Case {
    const char* name;
    MatmulProblem problem;
    std::string base_m_word;
  };
  for (const Case& c : {Case{"W8A8 MIX_ASW", W8A8(48, 2048, 4096), "matmulTiling.baseM"},
                        Case{"MXFP8 MX_BASIC_API_ASW", MxFp8(96, 2048, 4096), "baseM"}}) {
    SCOPED_TRACE(c.name);
    const TilingPlan cann = Cann(c.problem);
    absl::StatusOr<QuantBlockChoice> choice =
        tiling::quant::DeepestQuantStaging(c.problem, Chip950(), 32, 128, 0);
    ASSERT_THAT(choice, IsOk());
    const Offer offer = QuantBlockPlan(c.problem, Chip950(), cann, *choice);
    ASSERT_TRUE(offer.ok) << offer.reason;
    EXPECT_EQ(offer.plan.strategy, cann.strategy);
    EXPECT_EQ(offer.plan.data.struct_name(), cann.data.struct_name());
    EXPECT_EQ(offer.plan.key.trans_b, cann.key.trans_b);
    EXPECT_EQ(Member(offer.plan, c.base_m_word), 32u);
    EXPECT_EQ(offer.plan.block.base_n, 128u);
    EXPECT_EQ(offer.plan.block.base_k, choice->base_k);
    EXPECT_FALSE(tiling::quant::KeepsAInL1(offer.plan));
    EXPECT_THAT(offer.reason, HasSubstr(cann.strategy + "'s kernel"));
    // The kernel walks it: it times, and computes the right numbers.
    emu::EmulatorOptions timing;
    timing.timing_only = true;
    EXPECT_THAT(emu::Emulate(offer.plan, c.problem, Chip950(), {}, timing), IsOk());
    NumericsReport report;
    EXPECT_THAT(VerifyNumerics(offer.plan, c.problem, Chip950(), 7, &report), IsOk());
  }
}

TEST(QuantBlockPlanTest, RefusesWhatTheKernelWouldNotTakeAndSaysWhy) {
  const MatmulProblem w8a8 = W8A8(256, 4096, 8192);
  const TilingPlan cann = Cann(w8a8);
  auto refusal = [&](const MatmulProblem& problem, const TilingPlan& plan, QuantBlockChoice c) {
    const Offer offer = QuantBlockPlan(problem, Chip950(), plan, c);
    EXPECT_FALSE(offer.ok) << c.base_m << "x" << c.base_n << "x" << c.base_k;
    return offer.reason;
  };
  EXPECT_THAT(refusal(w8a8, cann, {40, 128, 128, 2}), HasSubstr("alignment"));
  EXPECT_THAT(refusal(w8a8, cann, {256, 128, 1024, 1}), HasSubstr("L0A"));
  EXPECT_THAT(refusal(w8a8, cann, {16, 256, 1024, 1}), HasSubstr("L0B"));
  EXPECT_THAT(refusal(w8a8, cann, {512, 256, 32, 1}), HasSubstr("L0C"));
  EXPECT_THAT(refusal(w8a8, cann, {16, 16, 4096, 1}), HasSubstr("4096"));
  EXPECT_THAT(refusal(w8a8, cann, {256, 256, 128, 64}), HasSubstr("exceed"));
  // MX K steps hold whole pairs of scales: 64 values.
  const MatmulProblem mx = MxFp8(96, 2048, 4096);
  EXPECT_THAT(refusal(mx, Cann(mx), {32, 128, 96, 1}), HasSubstr("MX scales"));
  // The deepest staging of a block too wide for L0C is refused the same way.
  EXPECT_FALSE(QuantBlockPlan(w8a8, Chip950(), cann, {512, 512, 64, 1}).ok);
}

TEST(QuantBlockPlanTest, SearchGridKeepsTheKernelsAlignment) {
  MatmulProblem p = MxFp8(100, 1000, 4096);
  p.trans_b = false;  // N is x2's inner axis: 32 bytes of float8
  p.quant.scale.shape = {64, 1000, 2};
  const auto grid = QuantBlockSearchGrid(p, Chip950());
  ASSERT_FALSE(grid.empty());
  for (const auto& [bm, bn] : grid) {
    EXPECT_EQ(bm % 16, 0u);
    EXPECT_EQ(bn % 32, 0u) << bn;
    EXPECT_LE(bm * bn * 4, Chip950().l0c_bytes);
  }
}

// ---------------------------------------------------------------------------
// Advise().

AdviseOptions Options() {
  AdviseOptions options;
  options.max_advisory_ms = 0;
  options.block_search_emulations = 4;
  options.window_emulations = 1;
  options.time_split_rw = false;
  return options;
}

void ExpectRankedByPredictedTime(const Advice& advice) {
  for (size_t i = 1; i < advice.candidates.size(); ++i) {
    EXPECT_LE(advice.candidates[i - 1].predicted_cycles, advice.candidates[i].predicted_cycles);
  }
}

TEST(AdviseQuantTest, DecodeOffersBlockSearchCandidatesWithCheckedNumerics) {
  // A decode-shaped W8A8 layer: CANN's 16 x 256 blocks leave the DDR-bound
  // problem on few block columns per core; the search finds a faster block.
  const MatmulProblem problem = W8A8(16, 8192, 8192);
  absl::StatusOr<Advice> advice = Advise(problem, Chip950(), Options());
  ASSERT_THAT(advice, IsOk());
  const Candidate* block = nullptr;
  const Candidate* cann = nullptr;
  for (const Candidate& c : advice->candidates) {
    if (c.kind == VariantKind::kBlockSearch) block = &c;
    if (c.is_cann_choice) cann = &c;
    // Every candidate that was checked passed.
    EXPECT_NE(c.numerics, NumericsCheck::kFailed) << c.name << ": " << c.numerics_detail;
  }
  ASSERT_NE(block, nullptr);
  ASSERT_NE(cann, nullptr);
  EXPECT_THAT(block->name, StartsWith("MIX_ASW/base_"));
  EXPECT_EQ(block->plan.data.struct_name(), cann->plan.data.struct_name());
  EXPECT_THAT(block->explanation, HasSubstr("CANN's base block calculator picks"));
  // The recommendation and CANN's choice were both checked on the quant
  // numerics, on a shrunken copy of the 8192 x 8192 layer.
  EXPECT_EQ(advice->candidates[0].numerics, NumericsCheck::kPassed);
  EXPECT_EQ(cann->numerics, NumericsCheck::kPassed) << cann->numerics_detail;
  EXPECT_THAT(cann->numerics_detail, HasSubstr("verified on"));
  EXPECT_TRUE(advice->recommendation_check.shrunk);
  ExpectRankedByPredictedTime(*advice);
  for (const NotOffered& entry : advice->not_offered) {
    EXPECT_THAT(entry.reason, ::testing::Not(HasSubstr("float kernels' tiling data")));
  }
}

TEST(AdviseQuantTest, CannsChoiceStaysFirstWhenItIsAtTheRoofline) {
  // Large and cube-bound: CANN's 256 x 256 blocks are within 10% of the
  // roofline, so no block is timed and CANN's plan is the recommendation.
  const MatmulProblem problem = W8A8(4096, 7168, 8192);
  absl::StatusOr<Advice> advice = Advise(problem, Chip950(), Options());
  ASSERT_THAT(advice, IsOk());
  ASSERT_FALSE(advice->candidates.empty());
  EXPECT_TRUE(advice->candidates[0].is_cann_choice);
  EXPECT_EQ(advice->candidates[0].numerics, NumericsCheck::kPassed);
  bool refused = false;
  for (const NotOffered& entry : advice->not_offered) {
    if (entry.kind == VariantKind::kBlockSearch) {
      refused = true;
      EXPECT_THAT(entry.reason, HasSubstr("roofline"));
    }
  }
  EXPECT_TRUE(refused);
  ExpectRankedByPredictedTime(*advice);
}

TEST(AdviseQuantTest, MxProblemIsVerifiedThroughTheQuantNumerics) {
  const MatmulProblem problem = MxFp8(128, 7168, 2048);
  absl::StatusOr<Advice> advice = Advise(problem, Chip950(), Options());
  ASSERT_THAT(advice, IsOk());
  for (const Candidate& c : advice->candidates) {
    if (c.is_cann_choice || &c == &advice->candidates[0]) {
      EXPECT_EQ(c.numerics, NumericsCheck::kPassed) << c.name << ": " << c.numerics_detail;
    }
  }
  ExpectRankedByPredictedTime(*advice);
}

TEST(AdviseQuantTest, StreamKChoiceIsComparedWithTheSlidingWindowStrategyReblocked) {
  // Small M x N, deep K: CANN picks MX_STREAMK, whose struct has no sliding
  // window; the search re-blocks MX_BASIC_API_ASW, CANN's other strategy.
  const MatmulProblem problem = MxFp8(256, 256, 16384);
  absl::StatusOr<Advice> advice = Advise(problem, Chip950(), Options());
  ASSERT_THAT(advice, IsOk());
  ASSERT_EQ(advice->cann.plan.strategy, "MX_STREAMK");
  bool reblocked = false;
  for (const Candidate& c : advice->candidates) {
    if (c.kind == VariantKind::kBlockSearch) {
      reblocked = true;
      EXPECT_THAT(c.name, StartsWith("MX_BASIC_API_ASW/base_"));
    }
    if (c.is_cann_choice) {
      // The Stream-K slices are not shrunk: the check says so.
      EXPECT_EQ(c.numerics, NumericsCheck::kNotChecked);
      EXPECT_THAT(c.numerics_detail, HasSubstr("MX_STREAMK"));
    }
  }
  EXPECT_TRUE(reblocked);
  ExpectRankedByPredictedTime(*advice);
}

// ---------------------------------------------------------------------------
// The shrunken copy.

TEST(VerifyQuantTest, LargeQuantPlansAreCheckedOnAShrunkenCopyOfTheSameBlocks) {
  for (const MatmulProblem& problem : {W8A8(2048, 8192, 8192), MxFp8(1024, 7168, 4096)}) {
    const TilingPlan cann = Cann(problem);
    NumericsReport report;
    ASSERT_THAT(VerifyNumerics(cann, problem, Chip950(), 3, &report), IsOk());
    EXPECT_TRUE(report.shrunk);
    EXPECT_LE(report.m * report.n, 1024 * 1024);
    EXPECT_LT(report.k, problem.k);
    EXPECT_THAT(report.note, HasSubstr(absl::StrCat(cann.block.base_m, "x", cann.block.base_n)));
    EXPECT_LE(report.worst_error_ratio, 1.0);
  }
}

}  // namespace
}  // namespace npu::advisor
