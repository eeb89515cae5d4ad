// Advise(): CANN's choice is the registry's decision unchanged, candidates
// are ranked by predicted time, each variant appears only where it is valid,
// the budget stops the search, and the recommendation passes numerics.
#include "server/advisor/advisor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/advisor/variants.h"
#include "server/tiling/builtin_strategies.h"
#include "tests/testing/golden_cases.h"
#include "tests/testing/grouped_problems.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::advisor {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
using tiling::DataType;
using tiling::MatmulProblem;
using tiling::TilingPlan;

// Options that keep a test's emulation count small.
AdviseOptions Quick() {
  AdviseOptions options;
  options.max_advisory_ms = 0;
  options.block_search_emulations = 2;
  options.window_emulations = 1;
  options.time_split_rw = false;
  options.verify_recommendation = false;
  return options;
}

void ExpectSamePlan(const TilingPlan& a, const TilingPlan& b) {
  EXPECT_EQ(a.strategy, b.strategy);
  EXPECT_EQ(a.key.Encode(), b.key.Encode());
  EXPECT_EQ(a.block_dim, b.block_dim);
  EXPECT_EQ(a.kernel_type, b.kernel_type);
  EXPECT_EQ(a.workspace_bytes, b.workspace_bytes);
  EXPECT_EQ(a.detail, b.detail);
  EXPECT_EQ(a.data.struct_name(), b.data.struct_name());
  EXPECT_EQ(a.data.RawWords(), b.data.RawWords());
  ASSERT_EQ(a.data.fields.size(), b.data.fields.size());
  for (size_t i = 0; i < a.data.fields.size(); ++i) {
    EXPECT_EQ(a.data.fields[i].name, b.data.fields[i].name);
    EXPECT_EQ(a.data.fields[i].value, b.data.fields[i].value) << a.data.fields[i].name;
  }
  EXPECT_EQ(a.swat_window_rows, b.swat_window_rows);
  EXPECT_EQ(a.l1_residency, b.l1_residency);
}

const Candidate* Find(const Advice& advice, VariantKind kind) {
  for (const Candidate& candidate : advice.candidates) {
    if (candidate.kind == kind) return &candidate;
  }
  return nullptr;
}

const NotOffered* FindNotOffered(const Advice& advice, VariantKind kind) {
  for (const NotOffered& entry : advice.not_offered) {
    if (entry.kind == kind) return &entry;
  }
  return nullptr;
}

void ExpectRankingInvariants(const Advice& advice) {
  ASSERT_FALSE(advice.candidates.empty());
  EXPECT_EQ(advice.rejected_variants, 0u);
  int cann = 0;
  std::set<std::string> names;
  uint64_t cann_cycles = 0;
  for (const Candidate& candidate : advice.candidates) {
    EXPECT_TRUE(names.insert(candidate.name).second) << candidate.name;
    EXPECT_GT(candidate.predicted_cycles, 0u) << candidate.name;
    EXPECT_GT(candidate.predicted_us, 0.0) << candidate.name;
    EXPECT_FALSE(candidate.bound.empty()) << candidate.name;
    EXPECT_FALSE(candidate.explanation.empty()) << candidate.name;
    if (candidate.is_cann_choice) {
      ++cann;
      cann_cycles = candidate.predicted_cycles;
      EXPECT_EQ(candidate.kind, VariantKind::kCannStrategy);
      ExpectSamePlan(candidate.plan, advice.cann.plan);
    }
  }
  EXPECT_EQ(cann, 1);
  for (size_t i = 0; i + 1 < advice.candidates.size(); ++i) {
    const Candidate& a = advice.candidates[i];
    const Candidate& b = advice.candidates[i + 1];
    EXPECT_TRUE(a.predicted_cycles < b.predicted_cycles ||
                (a.predicted_cycles == b.predicted_cycles && a.name < b.name))
        << a.name << " before " << b.name;
  }
  for (const Candidate& candidate : advice.candidates) {
    EXPECT_DOUBLE_EQ(
        candidate.speedup_vs_cann,
        static_cast<double>(cann_cycles) / static_cast<double>(candidate.predicted_cycles));
  }
}

// ---------------------------------------------------------------------------
// CANN_COMPATIBLE stays CANN's answer.

TEST(AdviseTest, CannChoiceIsTheRegistrysDecisionOnEveryGoldenCase) {
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  for (const npu::testing::GoldenCase& golden :
       npu::testing::LoadGoldenCases(NPU_CONFORMANCE_CASES)) {
    SCOPED_TRACE(golden.name);
    absl::StatusOr<Advice> advice = Advise(registry, golden.problem, golden.chip, Quick());
    ASSERT_THAT(advice, IsOk());
    absl::StatusOr<tiling::TilingDecision> decision = registry.Decide(golden.problem, golden.chip);
    ASSERT_THAT(decision, IsOk());
    ExpectSamePlan(advice->cann.plan, decision->plan);
    ASSERT_EQ(advice->cann.trace.size(), decision->trace.size());
    for (size_t i = 0; i < decision->trace.size(); ++i) {
      EXPECT_EQ(advice->cann.trace[i].strategy, decision->trace[i].strategy);
      EXPECT_EQ(advice->cann.trace[i].reason, decision->trace[i].reason);
      EXPECT_EQ(advice->cann.trace[i].chosen, decision->trace[i].chosen);
    }
    // And it is still CANN's golden answer.
    EXPECT_EQ(advice->cann.plan.block_dim, golden.block_dim);
    EXPECT_EQ(advice->cann.plan.key.Encode(), golden.tiling_key);
    for (const auto& [field, value] : golden.fields) {
      EXPECT_EQ(advice->cann.plan.data.Get(field), std::optional<uint64_t>(value)) << field;
    }
    ExpectRankingInvariants(*advice);
  }
}

TEST(AdviseTest, InvalidProblemsKeepTheRegistrysError) {
  EXPECT_THAT(Advise(Problem(0, 64, 64), Chip950()), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Advise(Problem(64, 64, -1), Chip950()), StatusIs(absl::StatusCode::kInvalidArgument));
}

// ---------------------------------------------------------------------------
// Ranking.

TEST(AdviseTest, CandidatesAreRankedByPredictedTime) {
  for (const auto& [problem, aic] : std::vector<std::pair<MatmulProblem, uint32_t>>{
           {Problem(4097, 777, 1999), 32},
           {Problem(512, 512, 16384), 24},
           {Problem(1, 4096, 4096), 32},
           {Problem(48, 9000, 64), 32},
           {Problem(300, 300, 20000, DataType::kFloat32), 32},
           {Problem(16383, 1, 255, DataType::kBFloat16), 32}}) {
    SCOPED_TRACE(absl::StrCat(problem.m, "x", problem.n, "x", problem.k));
    absl::StatusOr<Advice> advice = Advise(problem, Chip950(aic), Quick());
    ASSERT_THAT(advice, IsOk());
    ExpectRankingInvariants(*advice);
  }
}

TEST(AdviseTest, OtherCapableStrategiesAreCandidates) {
  // CANN picks Stream-K; BASIC_ASWT is capable too and is ranked beside it.
  absl::StatusOr<Advice> advice = Advise(Problem(512, 512, 16384), Chip950(24), Quick());
  ASSERT_THAT(advice, IsOk());
  EXPECT_EQ(advice->cann.plan.strategy, "BASIC_STREAM_K");
  std::set<std::string> names;
  for (const Candidate& candidate : advice->candidates) names.insert(candidate.name);
  EXPECT_TRUE(names.count("BASIC_STREAM_K"));
  EXPECT_TRUE(names.count("BASIC_ASWT"));
  std::map<std::string, std::string> rejected;
  for (const NotOffered& entry : advice->not_offered) rejected[entry.name] = entry.reason;
  EXPECT_THAT(rejected["K_EQUAL_ZERO"], HasSubstr("K=16384 != 0"));
  EXPECT_THAT(rejected["TO_MUL"], HasSubstr("force_grp_acc_fp32"));
}

TEST(AdviseTest, IsDeterministic) {
  AdviseOptions options;
  options.max_advisory_ms = 0;
  absl::StatusOr<Advice> first = Advise(Problem(4097, 777, 1999), Chip950(), options);
  absl::StatusOr<Advice> second = Advise(Problem(4097, 777, 1999), Chip950(), options);
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(second, IsOk());
  ASSERT_EQ(first->candidates.size(), second->candidates.size());
  for (size_t i = 0; i < first->candidates.size(); ++i) {
    EXPECT_EQ(first->candidates[i].name, second->candidates[i].name);
    EXPECT_EQ(first->candidates[i].predicted_cycles, second->candidates[i].predicted_cycles);
    EXPECT_EQ(first->candidates[i].split_rw_rank, second->candidates[i].split_rw_rank);
  }
  EXPECT_EQ(first->emulations, second->emulations);
}

// ---------------------------------------------------------------------------
// Each variant only where it is valid.

struct ValidityCase {
  std::string name;
  MatmulProblem problem;
  uint32_t aic;
  std::vector<VariantKind> offered;
  std::vector<std::pair<VariantKind, std::string>> not_offered;  // kind, reason substring
};

TEST(AdviseTest, VariantsAreOfferedOnlyWhereValid) {
  MatmulProblem nz = Problem(4096, 1280, 8192);
  nz.trans_b = true;
  nz.format_b = tiling::Format::kFractalNz;
  const std::vector<ValidityCase> cases = {
      {"MidSizeFitsL2",
       Problem(4097, 777, 1999),
       32,
       {VariantKind::kBlockSearch, VariantKind::kL1PartialResidency},
       {{VariantKind::kSwatWindow, "fit L2"}, {VariantKind::kAivDot, "both above 1"}}},
      {"BigOperandsExceedL2",
       Problem(16384, 8192, 1024),
       32,
       {VariantKind::kBlockSearch, VariantKind::kSwatWindow, VariantKind::kL1PartialResidency},
       {{VariantKind::kAivDot, "both above 1"}}},
      {"Fp16GemvAtTheDdrRoofline",
       Problem(1, 4096, 4096),
       32,
       {VariantKind::kAivDot},
       {{VariantKind::kBlockSearch, "roofline"}}},
      {"Bf16ColumnVector",
       Problem(16383, 1, 255, DataType::kBFloat16),
       32,
       {VariantKind::kAivDot},
       {{VariantKind::kSwatWindow, "single row or column"}}},
      {"Fp32GemvHasNoAivVariant",
       Problem(1, 4096, 4096, DataType::kFloat32),
       32,
       {},
       {{VariantKind::kAivDot, "float16"}}},
      {"SmallAResidentByCann",
       Problem(48, 9000, 64),
       32,
       {},
       {{VariantKind::kL1PartialResidency, "CANN's whole-matrix residency"},
        {VariantKind::kSwatWindow, "resident operand"}}},
      {"DeepKHasNoBand",
       Problem(512, 512, 16384),
       24,
       {},
       {{VariantKind::kL1PartialResidency, "too deep"}, {VariantKind::kSwatWindow, "one round"}}},
      {"CubeBoundAtTheRoofline",
       Problem(8192, 8192, 8192),
       32,
       {},
       {{VariantKind::kBlockSearch, "roofline"},
        {VariantKind::kSwatWindow, "roofline"},
        {VariantKind::kL1PartialResidency, "roofline"}}},
      {"NzOperandsTimedAsNd",
       nz,
       32,
       {},
       {{VariantKind::kBlockSearch, "FRACTAL_NZ"},
        {VariantKind::kSwatWindow, "FRACTAL_NZ"},
        {VariantKind::kL1PartialResidency, "FRACTAL_NZ"},
        {VariantKind::kAivDot, "FRACTAL_NZ"}}},
  };
  for (const ValidityCase& c : cases) {
    SCOPED_TRACE(c.name);
    AdviseOptions options = Quick();
    options.max_candidates = 20;
    absl::StatusOr<Advice> advice = Advise(c.problem, Chip950(c.aic), options);
    ASSERT_THAT(advice, IsOk());
    for (VariantKind kind : c.offered) {
      EXPECT_NE(Find(*advice, kind), nullptr) << VariantKindName(kind);
    }
    for (const auto& [kind, reason] : c.not_offered) {
      EXPECT_EQ(Find(*advice, kind), nullptr) << VariantKindName(kind);
      const NotOffered* entry = FindNotOffered(*advice, kind);
      ASSERT_NE(entry, nullptr) << VariantKindName(kind);
      bool matched = false;
      for (const NotOffered& e : advice->not_offered) {
        matched |= e.kind == kind && e.reason.find(reason) != std::string::npos;
      }
      EXPECT_TRUE(matched) << VariantKindName(kind) << ": " << entry->reason;
    }
  }
}

TEST(AdviseTest, NzProblemSaysItWasTimedAsNd) {
  MatmulProblem nz = Problem(4096, 1280, 8192);
  nz.trans_b = true;
  nz.format_b = tiling::Format::kFractalNz;
  absl::StatusOr<Advice> advice = Advise(nz, Chip950(), Quick());
  ASSERT_THAT(advice, IsOk());
  EXPECT_THAT(advice->timing_note, HasSubstr("ND"));
  EXPECT_EQ(advice->cann.plan.strategy, "BASIC_STREAM_K");
}

// ---------------------------------------------------------------------------
// Budget and caps.

TEST(AdviseTest, BudgetStopsBetweenCandidatesAndSaysSo) {
  // A fake clock that advances 10 ms per reading: deterministic, no wall
  // clock in the test.
  double now = 0;
  AdviseOptions options;
  options.clock_ms = [&now] { return now += 10; };
  options.max_advisory_ms = 35;
  absl::StatusOr<Advice> limited = Advise(Problem(4097, 777, 1999), Chip950(), options);
  ASSERT_THAT(limited, IsOk());
  EXPECT_TRUE(limited->budget_exhausted);
  EXPECT_THAT(limited->budget_note, HasSubstr("advisory budget of 35 ms"));
  EXPECT_THAT(limited->budget_note, HasSubstr("skipped"));
  ExpectRankingInvariants(*limited);
  // The recommendation is still checked.
  EXPECT_EQ(limited->candidates.front().numerics, NumericsCheck::kPassed);

  now = 0;
  options.max_advisory_ms = 0;  // no budget
  absl::StatusOr<Advice> full = Advise(Problem(4097, 777, 1999), Chip950(), options);
  ASSERT_THAT(full, IsOk());
  EXPECT_FALSE(full->budget_exhausted);
  EXPECT_TRUE(full->budget_note.empty());
  EXPECT_LT(limited->emulations, full->emulations);
  EXPECT_LE(limited->candidates.size(), full->candidates.size());
}

TEST(AdviseTest, ZeroBudgetStillTimesCannsChoice) {
  double now = 0;
  AdviseOptions options;
  options.clock_ms = [&now] { return now += 1000; };
  options.max_advisory_ms = 1;
  absl::StatusOr<Advice> advice = Advise(Problem(4097, 777, 1999), Chip950(), options);
  ASSERT_THAT(advice, IsOk());
  ASSERT_EQ(advice->candidates.size(), 1u);
  EXPECT_TRUE(advice->candidates.front().is_cann_choice);
  EXPECT_EQ(advice->emulations, 1u);
  EXPECT_TRUE(advice->budget_exhausted);
  EXPECT_FALSE(advice->split_rw_timed);
}

TEST(AdviseTest, MaxCandidatesAlwaysKeepsCannsChoice) {
  // Here the block search beats CANN's 256x256 blocks.
  AdviseOptions options = Quick();
  options.max_candidates = 1;
  absl::StatusOr<Advice> one = Advise(Problem(4097, 777, 1999), Chip950(), options);
  ASSERT_THAT(one, IsOk());
  ASSERT_EQ(one->candidates.size(), 1u);
  EXPECT_TRUE(one->candidates.front().is_cann_choice);
  options.max_candidates = 2;
  absl::StatusOr<Advice> two = Advise(Problem(4097, 777, 1999), Chip950(), options);
  ASSERT_THAT(two, IsOk());
  ASSERT_EQ(two->candidates.size(), 2u);
  EXPECT_FALSE(two->candidates.front().is_cann_choice);
  EXPECT_GT(two->candidates.front().speedup_vs_cann, 1.0);
  EXPECT_TRUE(two->candidates.back().is_cann_choice);
  bool dropped = false;
  for (const NotOffered& entry : two->not_offered) {
    dropped |= entry.reason.find("beyond max_candidates=2") != std::string::npos;
  }
  EXPECT_TRUE(dropped);
}

// ---------------------------------------------------------------------------
// Numerics of the recommendation and the read / write model.

TEST(AdviseTest, RecommendationPassesTheNumericsCheck) {
  for (const auto& [problem, aic] : std::vector<std::pair<MatmulProblem, uint32_t>>{
           {Problem(4097, 777, 1999), 32},
           {Problem(512, 512, 16384), 24},
           {Problem(16383, 1, 255), 32},
           {Problem(300, 300, 20000, DataType::kFloat32), 32},
           {Problem(77, 131, 300, DataType::kBFloat16), 32},
           {Problem(16384, 8192, 1024), 32}}) {
    SCOPED_TRACE(absl::StrCat(problem.m, "x", problem.n, "x", problem.k));
    AdviseOptions options;
    options.max_advisory_ms = 0;
    absl::StatusOr<Advice> advice = Advise(problem, Chip950(aic), options);
    ASSERT_THAT(advice, IsOk());
    const Candidate& best = advice->candidates.front();
    EXPECT_EQ(best.numerics, NumericsCheck::kPassed) << best.name << ": " << best.numerics_detail;
    EXPECT_THAT(best.numerics_detail, HasSubstr("verified"));
    EXPECT_LE(advice->recommendation_check.worst_error_ratio, 1.0);
    for (const NotOffered& entry : advice->not_offered) {
      EXPECT_THAT(entry.reason, ::testing::Not(HasSubstr("numerics check failed")));
    }
  }
}

TEST(AdviseTest, SplitReadWriteModelReranksTheCandidates) {
  // K = 32: the output dominates the traffic, so charging writes to DDR
  // changes the order.
  AdviseOptions options;
  options.max_advisory_ms = 0;
  absl::StatusOr<Advice> advice = Advise(Problem(4096, 4096, 32), Chip950(), options);
  ASSERT_THAT(advice, IsOk());
  ASSERT_TRUE(advice->split_rw_timed);
  ASSERT_GE(advice->candidates.size(), 2u);
  std::set<uint32_t> ranks;
  std::string best;
  const size_t retimed = std::min<size_t>(advice->candidates.size(), 4);
  for (size_t i = retimed; i < advice->candidates.size(); ++i) {
    EXPECT_EQ(advice->candidates[i].split_rw_rank, 0u);  // only the best four are re-timed
  }
  for (size_t i = 0; i < retimed; ++i) {
    const Candidate& candidate = advice->candidates[i];
    EXPECT_GT(candidate.split_rw_cycles, candidate.predicted_cycles) << candidate.name;
    ranks.insert(candidate.split_rw_rank);
    if (candidate.split_rw_rank == 1) best = candidate.name;
  }
  EXPECT_EQ(ranks.size(), retimed);
  EXPECT_EQ(*ranks.begin(), 1u);
  EXPECT_EQ(*ranks.rbegin(), retimed);
  EXPECT_EQ(advice->split_rw_best, best);
  EXPECT_EQ(advice->split_rw_changes_best, best != advice->candidates.front().name);
}

TEST(AdviseTest, NamesOfTheEnums) {
  EXPECT_EQ(VariantKindName(VariantKind::kL1PartialResidency), "L1_PARTIAL_RESIDENCY");
  EXPECT_EQ(VariantKindName(VariantKind::kAivDot), "AIV_DOT");
  EXPECT_EQ(NumericsCheckName(NumericsCheck::kPassed), "PASSED");
}

}  // namespace
}  // namespace npu::advisor

namespace npu::advisor {
namespace {

// GroupedMatmul's no-quant path: its basic kernel re-blocked, timed on the
// problem's token histogram, ranked with CANN's plan, the recommendation's
// numerics checked over the same histogram; the other variants declined.
TEST(AdviseTest, GroupedMatmulNoQuantSearchesBlocksOnTheHistogram) {
  ::npu::testing::GroupedSpec spec;
  spec.groups = 8;
  spec.m = 1024;
  spec.n = 256;
  spec.k = 128;
  spec.histogram = ::npu::testing::SkewedHistogram(1024, 8, 1.2, 5);
  AdviseOptions options = Quick();
  options.block_search_emulations = 4;
  options.verify_recommendation = true;
  const tiling::MatmulProblem problem = ::npu::testing::GroupedProblem(spec);
  absl::StatusOr<Advice> advice = Advise(problem, Chip950(), options);
  ASSERT_THAT(advice, IsOk());
  ASSERT_GE(advice->candidates.size(), 2u);
  int cann = 0, searched = 0;
  for (size_t i = 0; i < advice->candidates.size(); ++i) {
    const Candidate& c = advice->candidates[i];
    if (i > 0) {
      EXPECT_LE(advice->candidates[i - 1].predicted_cycles, c.predicted_cycles);
    }
    if (c.is_cann_choice) {
      ++cann;
      EXPECT_EQ(c.name, "GROUPED_NO_QUANT");
    }
    if (c.kind == VariantKind::kBlockSearch) {
      ++searched;
      EXPECT_THAT(c.name, ::testing::StartsWith("GROUPED_NO_QUANT/base_"));
      EXPECT_EQ(c.plan.data.kernel, tiling::KernelId::kGroupedNoQuant);
      EXPECT_NE(std::make_pair(c.plan.block.base_m, c.plan.block.base_n),
                std::make_pair(advice->cann.plan.block.base_m, advice->cann.plan.block.base_n));
    }
  }
  EXPECT_EQ(cann, 1);
  EXPECT_EQ(searched, 1);
  EXPECT_EQ(advice->candidates[0].numerics, NumericsCheck::kPassed)
      << advice->candidates[0].numerics_detail;
  for (const NotOffered& n : advice->not_offered) {
    if (n.kind == VariantKind::kSwatWindow) {
      EXPECT_THAT(n.reason, HasSubstr("not offered for GroupedMatmul"));
    }
  }
  // A block the kernel cannot hold is refused naming why.
  EXPECT_FALSE(BlockPlan(problem, Chip950(), 24, 128).ok);
  EXPECT_THAT(BlockPlan(problem, Chip950(), 256, 512).reason, HasSubstr("l0c_bytes"));
}

// The quant and weight-quant paths are ranked on CANN's plan alone.
TEST(AdviseTest, GroupedMatmulQuantPathIsRankedOnCannsPlanAlone) {
  ::npu::testing::GroupedSpec spec;
  spec.x = spec.w = tiling::DataType::kInt8;
  spec.y = tiling::DataType::kBFloat16;
  spec.m = 512;
  spec.n = 256;
  spec.k = 128;
  tiling::MatmulProblem problem = ::npu::testing::GroupedProblem(spec);
  problem.grouped[tiling::GroupedTensor::kScale].dtype = tiling::DataType::kBFloat16;
  problem.grouped[tiling::GroupedTensor::kScale].instances = {::npu::testing::Shape({4, 256})};
  problem.grouped[tiling::GroupedTensor::kPerTokenScale].dtype = tiling::DataType::kFloat32;
  problem.grouped[tiling::GroupedTensor::kPerTokenScale].instances = {
      ::npu::testing::Shape({512})};
  absl::StatusOr<Advice> advice = Advise(problem, Chip950(), Quick());
  ASSERT_THAT(advice, IsOk());
  ASSERT_EQ(advice->candidates.size(), 1u);
  EXPECT_TRUE(advice->candidates[0].is_cann_choice);
  int declined = 0;
  for (const NotOffered& n : advice->not_offered) {
    if (n.kind == VariantKind::kBlockSearch) {
      EXPECT_THAT(n.reason, HasSubstr("ranked on CANN's plan alone"));
      ++declined;
    }
  }
  EXPECT_EQ(declined, 1);
}

}  // namespace
}  // namespace npu::advisor
