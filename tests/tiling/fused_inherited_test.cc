// FusedInheritedStrategy, FusedMatMul's "..._INHERITED_FROM_BMMV3": the
// order of its checks around the batched strategy's, and the re-keying of
// the batched plan. The per-strategy words are in the batched strategies'
// tests (batch_*_test.cc).
#include "server/tiling/strategies/fused_inherited.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "server/tiling/tiling_data.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Batched;
using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::testing::HasSubstr;

// A batched strategy that records whether it was asked and answers a
// FOR_BATCH plan with a tensor-API key and a cube struct.
class RecordingStrategy final : public Strategy {
 public:
  explicit RecordingStrategy(bool capable, int* asked) : capable_(capable), asked_(asked) {}
  std::string_view name() const override { return "RECORDING"; }
  Capability IsCapable(const MatmulProblem&, const ProblemFacts&, const ChipSpec&) const override {
    ++*asked_;
    return capable_ ? Capability::Yes("batched yes") : Capability::No("batched no");
  }
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts&,
                                      const ChipSpec&) const override {
    TilingPlan plan;
    plan.key.layout = KeyLayout::kMatMul;
    plan.key.api_level = ApiLevel::kTensor;
    plan.key.trans_b = problem.trans_b;
    plan.key.batch_model = static_cast<uint8_t>(BatchModel::kForBatch);
    plan.data = NewTilingData<BatchBasicField>();
    return plan;
  }

 private:
  bool capable_;
  int* asked_;
};

Capability Refuse(const MatmulProblem&, const ProblemFacts&, const ChipSpec&) {
  return Capability::No("filtered");
}
Capability Accept(const MatmulProblem&, const ProblemFacts&, const ChipSpec&) {
  return Capability::Yes("");
}

// Inheritances of every shape: a filter that refuses, a late check that
// refuses, none, and an amendment.
struct RefusingFilter : NoFusedExtras {
  static constexpr std::string_view kName = "X_INHERITED_FROM_BMMV3";
  static Capability Before(const MatmulProblem& p, const ProblemFacts& f, const ChipSpec& c) {
    return Refuse(p, f, c);
  }
};
struct RefusingLateCheck : NoFusedExtras {
  static constexpr std::string_view kName = "X";
  static Capability Before(const MatmulProblem& p, const ProblemFacts& f, const ChipSpec& c) {
    return Accept(p, f, c);
  }
  static Capability After(const MatmulProblem& p, const ProblemFacts& f, const ChipSpec& c) {
    return Refuse(p, f, c);
  }
};
struct Plain : NoFusedExtras {
  static constexpr std::string_view kName = "X";
  static Capability Before(const MatmulProblem& p, const ProblemFacts& f, const ChipSpec& c) {
    return Accept(p, f, c);
  }
};
struct ThroughVectorCores : Plain {
  static void Amend(const MatmulProblem&, const ProblemFacts&, const ChipSpec&, TilingPlan& plan) {
    plan.key.l0c2out = L0cToOut::kNdFixpipe1To2;
  }
};

template <typename Inheritance>
using Recorded = FusedInheritedStrategy<RecordingStrategy, Inheritance>;

MatmulProblem FusedRelu() {
  MatmulProblem p = Batched(MatmulOp::kFusedMatMul, 64, 64, 64, 4);
  p.fused.op = FusedOp::kRelu;
  p.trans_b = true;
  return p;
}

TEST(FusedInheritedTest, FilterRunsFirstAndHidesTheBatchedStrategy) {
  int asked = 0;
  const Recorded<RefusingFilter> s(true, &asked);
  const MatmulProblem p = FusedRelu();
  const Capability c = s.IsCapable(p, DeriveFacts(p), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(std::string(c.reason.str()), "filtered");
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(s.name(), "X_INHERITED_FROM_BMMV3");
}

TEST(FusedInheritedTest, LateCheckOnlyJudgesWhatTheBatchedStrategyTook) {
  int asked = 0;
  const MatmulProblem p = FusedRelu();
  const Recorded<RefusingLateCheck> declining(false, &asked);
  EXPECT_EQ(std::string(declining.IsCapable(p, DeriveFacts(p), Chip950()).reason.str()),
            "batched no");
  const Recorded<RefusingLateCheck> taking(true, &asked);
  EXPECT_EQ(std::string(taking.IsCapable(p, DeriveFacts(p), Chip950()).reason.str()), "filtered");
  const Recorded<Plain> plain(true, &asked);
  EXPECT_EQ(std::string(plain.IsCapable(p, DeriveFacts(p), Chip950()).reason.str()), "batched yes");
  EXPECT_EQ(asked, 3);
}

// Without a late check the batched strategy's answer is returned as it is
// (the decorator passes it through without a check of its own).
TEST(FusedInheritedTest, WithoutALateCheckTheBatchedAnswerIsTheAnswer) {
  int asked = 0;
  const MatmulProblem p = FusedRelu();
  for (bool capable : {false, true}) {
    const Recorded<Plain> s(capable, &asked);
    const Capability c = s.IsCapable(p, DeriveFacts(p), Chip950());
    EXPECT_EQ(c.ok, capable);
    EXPECT_EQ(std::string(c.reason.str()), capable ? "batched yes" : "batched no");
  }
  EXPECT_EQ(asked, 2);
}

TEST(FusedInheritedTest, RekeysTheBatchedPlanIntoTheFusedLayout) {
  int asked = 0;
  MatmulProblem p = FusedRelu();
  p.fused.inner_precise = 1;
  const Recorded<ThroughVectorCores> s(true, &asked);
  absl::StatusOr<TilingPlan> plan = s.DoTiling(p, DeriveFacts(p), Chip950());
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->key.layout, KeyLayout::kFused);
  EXPECT_EQ(plan->key.fused_op, FusedOp::kRelu);
  EXPECT_EQ(plan->key.inner_precise, 1);
  EXPECT_EQ(plan->key.api_level, ApiLevel::kBasic);
  EXPECT_EQ(plan->key.batch_model, static_cast<uint8_t>(BatchModel::kFusedBatch));
  EXPECT_TRUE(plan->key.trans_b);
  // The amendment ran, and the kernel type follows the amended key.
  EXPECT_EQ(plan->key.l0c2out, L0cToOut::kNdFixpipe1To2);
  EXPECT_EQ(plan->kernel_type, KernelType::kMixed1To2);
}

TEST(FusedInheritedTest, SwizzledStrategiesDeclineTwoDimensionalShapes) {
  MatmulProblem p = FusedRelu();
  p.batch.a.clear();
  p.batch.b.clear();
  p.batch.c.clear();
  const ProblemFacts facts = DeriveFacts(p);
  for (const std::unique_ptr<Strategy>& s :
       {InheritedBatchStreamK(), InheritedFullLoad(FullLoad::kA), InheritedFullLoad(FullLoad::kB),
        InheritedDataParallel()}) {
    const Capability c = s->IsCapable(p, facts, Chip950());
    EXPECT_FALSE(c.ok) << s->name();
    EXPECT_THAT(std::string(c.reason.str()), HasSubstr("2-D shapes")) << s->name();
  }
}

TEST(FusedInheritedTest, GeluHasNoBatchedKernel) {
  MatmulProblem p = FusedRelu();
  p.fused.op = FusedOp::kGeluTanh;
  const ProblemFacts facts = DeriveFacts(p);
  for (const std::unique_ptr<Strategy>& s :
       {InheritedBatchStreamK(), InheritedMergeBatch(), InheritedIterBatch(),
        InheritedFullLoad(FullLoad::kA), InheritedDataParallel()}) {
    EXPECT_FALSE(s->IsCapable(p, facts, Chip950()).ok) << s->name();
  }
}

}  // namespace
}  // namespace npu::tiling
