// Advise() for BatchMatMulV3 and FusedMatMul: CANN's answer (the op's
// registry decision) stays first-class, the other capable strategies and
// the block search of the batch kernels are ranked by emulated time, and
// the MatMulV3-only variants say why they are not offered. The op's
// strategies are stand-ins registered by the test (the engine's own land
// separately); what is tested is the advisor around them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "server/advisor/advisor.h"
#include "server/advisor/variants.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/tiling_data.h"
#include "tests/testing/status_matchers.h"

namespace npu::advisor {
namespace {

using ::npu::testing::IsOk;
using ::testing::HasSubstr;
using tiling::DataType;
using tiling::MatmulOp;
using tiling::MatmulProblem;
using tiling::TilingPlan;

const tiling::ChipSpec& Chip950() { return tiling::BuiltinPlatforms().front(); }

// A stand-in strategy: the streamed batch plan with a fixed block.
class FixedBlockStrategy : public tiling::Strategy {
 public:
  FixedBlockStrategy(std::string name, uint64_t base_m, uint64_t base_n)
      : name_(std::move(name)), base_m_(base_m), base_n_(base_n) {}
  std::string_view name() const override { return name_; }
  tiling::Capability IsCapable(const MatmulProblem&, const tiling::ProblemFacts&,
                               const tiling::ChipSpec&) const override {
    return tiling::Capability::Yes("stand-in");
  }
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const tiling::ProblemFacts&,
                                      const tiling::ChipSpec& chip) const override {
    Offer offer = BatchBlockPlan(problem, chip, base_m_, base_n_);
    if (!offer.ok) return absl::FailedPreconditionError(offer.reason);
    offer.plan.strategy = name_;
    offer.plan.detail = "stand-in";
    return offer.plan;
  }

 private:
  std::string name_;
  uint64_t base_m_, base_n_;
};

// Only the two stand-ins for `op`, so that CANN's answer is a known poor
// block (the built-in registry is exercised by RanksCannsOwnBatchedStrategy).
tiling::StrategyRegistry RegistryWith(MatmulOp op) {
  tiling::StrategyRegistry registry;
  // CANN's priority: the first capable one answers.
  EXPECT_THAT(registry.Add(std::make_unique<FixedBlockStrategy>("AL1_FULL_LOAD_BASIC", 32, 32), op),
              IsOk());
  EXPECT_THAT(registry.Add(std::make_unique<FixedBlockStrategy>("ASW_BASIC", 256, 128), op),
              IsOk());
  return registry;
}

MatmulProblem BatchProblem() {
  MatmulProblem p;
  p.op = MatmulOp::kBatchMatMulV3;
  p.m = 200;
  p.n = 300;
  p.k = 256;
  p.batch.a = p.batch.b = {6};
  return p;
}

AdviseOptions Quick() {
  AdviseOptions options;
  options.max_advisory_ms = 0;
  options.block_search_emulations = 3;
  options.time_split_rw = false;
  options.verify_recommendation = false;
  return options;
}

TEST(AdviseBatchTest, RanksCannsAnswerTheOtherStrategyAndTheBlockSearch) {
  const tiling::StrategyRegistry registry = RegistryWith(MatmulOp::kBatchMatMulV3);
  absl::StatusOr<Advice> advice = Advise(registry, BatchProblem(), Chip950(), Quick());
  ASSERT_THAT(advice.status(), IsOk());
  EXPECT_EQ(advice->cann.plan.strategy, "AL1_FULL_LOAD_BASIC");
  std::set<std::string> names;
  bool cann = false, other = false, search = false;
  for (size_t i = 0; i < advice->candidates.size(); ++i) {
    const Candidate& c = advice->candidates[i];
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    if (i > 0) {
      EXPECT_LE(advice->candidates[i - 1].predicted_cycles, c.predicted_cycles);
    }
    cann |= c.is_cann_choice;
    other |= c.name == "ASW_BASIC";
    if (c.kind == VariantKind::kBlockSearch) {
      search = true;
      EXPECT_THAT(c.name, HasSubstr("ASW_BASIC/base_"));
      EXPECT_EQ(c.plan.data.kernel, tiling::KernelId::kBatchCube);
      EXPECT_EQ(tiling::Get(c.plan.data, tiling::BatchBasicField::kBatchDimAll), 6u);
    }
    EXPECT_GT(c.predicted_cycles, 0u);
  }
  EXPECT_TRUE(cann);
  EXPECT_TRUE(other);
  EXPECT_TRUE(search);
  // The 32x32 stand-in answer is far from the best block.
  EXPECT_FALSE(advice->candidates.front().is_cann_choice);
  EXPECT_GT(advice->candidates.front().speedup_vs_cann, 1.0);
  bool aiv_dot_refused = false;
  for (const NotOffered& n : advice->not_offered) {
    if (n.kind == VariantKind::kAivDot) {
      aiv_dot_refused = true;
      EXPECT_THAT(n.reason, HasSubstr("not offered for BatchMatMulV3"));
    }
  }
  EXPECT_TRUE(aiv_dot_refused);
}

TEST(AdviseBatchTest, RanksCannsOwnBatchedStrategy) {
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  for (MatmulOp op : {MatmulOp::kBatchMatMulV3, MatmulOp::kFusedMatMul}) {
    MatmulProblem p = BatchProblem();
    p.op = op;
    absl::StatusOr<Advice> advice = Advise(registry, p, Chip950(), Quick());
    ASSERT_THAT(advice.status(), IsOk()) << tiling::MatmulOpName(op);
    absl::StatusOr<tiling::TilingDecision> cann = registry.Decide(p, Chip950());
    ASSERT_THAT(cann.status(), IsOk());
    EXPECT_EQ(advice->cann.plan.strategy, cann->plan.strategy);
    EXPECT_EQ(advice->cann.plan.key.Encode(), cann->plan.key.Encode());
    bool has_cann = false, has_search = false;
    for (const Candidate& c : advice->candidates) {
      has_cann |= c.is_cann_choice;
      has_search |= c.kind == VariantKind::kBlockSearch;
      EXPECT_GT(c.predicted_cycles, 0u) << c.name;
    }
    EXPECT_TRUE(has_cann) << tiling::MatmulOpName(op);
    EXPECT_TRUE(has_search) << tiling::MatmulOpName(op);
  }
}

TEST(AdviseBatchTest, RecommendationPassesNumericsWithBatchesAndX3) {
  MatmulProblem p = BatchProblem();
  p.op = MatmulOp::kFusedMatMul;
  p.fused.op = tiling::FusedOp::kAdd;
  p.m = 100;
  p.n = 150;
  p.k = 128;
  p.fused.x3_shape = {6, 100, 150};
  const tiling::StrategyRegistry registry = RegistryWith(MatmulOp::kFusedMatMul);
  AdviseOptions options = Quick();
  options.verify_recommendation = true;
  absl::StatusOr<Advice> advice = Advise(registry, p, Chip950(), options);
  ASSERT_THAT(advice.status(), IsOk());
  const Candidate& best = advice->candidates.front();
  EXPECT_EQ(best.numerics, NumericsCheck::kPassed) << best.numerics_detail;
  // Fused plans keep the op's key and run the add on the AIVs.
  for (const Candidate& c : advice->candidates) {
    EXPECT_EQ(c.plan.key.layout, tiling::KeyLayout::kFused) << c.name;
    EXPECT_EQ(c.plan.key.fused_op, tiling::FusedOp::kAdd) << c.name;
    EXPECT_EQ(c.plan.kernel_type, tiling::KernelType::kMixed1To2) << c.name;
  }
}

TEST(AdviseBatchTest, MoreBatchesPredictMoreTime) {
  const tiling::StrategyRegistry registry = RegistryWith(MatmulOp::kBatchMatMulV3);
  MatmulProblem p = BatchProblem();
  absl::StatusOr<Advice> six = Advise(registry, p, Chip950(), Quick());
  p.batch.a = p.batch.b = {48};
  absl::StatusOr<Advice> many = Advise(registry, p, Chip950(), Quick());
  ASSERT_THAT(six.status(), IsOk());
  ASSERT_THAT(many.status(), IsOk());
  EXPECT_GT(many->candidates.front().predicted_cycles, six->candidates.front().predicted_cycles);
}

TEST(AdviseBatchTest, LargeBatchedProblemsAreRankedUnchecked) {
  MatmulProblem p = BatchProblem();
  p.m = p.n = p.k = 1024;
  p.batch.a = p.batch.b = {64};
  const tiling::StrategyRegistry registry = RegistryWith(MatmulOp::kBatchMatMulV3);
  AdviseOptions options = Quick();
  options.verify_recommendation = true;
  options.block_search_emulations = 1;
  absl::StatusOr<Advice> advice = Advise(registry, p, Chip950(), options);
  ASSERT_THAT(advice.status(), IsOk());
  EXPECT_EQ(advice->candidates.front().numerics, NumericsCheck::kNotChecked);
  EXPECT_THAT(advice->candidates.front().numerics_detail, HasSubstr("not checked"));
}

}  // namespace
}  // namespace npu::advisor
