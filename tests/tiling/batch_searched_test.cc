// ITER_BATCH_BROADCAST_BASICAPI, ITER_BATCH and BASE: their capability
// rules (which CANN strategy a problem reaches) and the failure they report
// for the tiling search the engine lacks.
#include "server/tiling/strategies/batch_searched.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::DecideBuiltin;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

MatmulProblem Batched(int64_t m, int64_t n, int64_t k, std::vector<int64_t> batch_a,
                      std::vector<int64_t> batch_b) {
  MatmulProblem p = Problem(m, n, k);
  p.op = MatmulOp::kBatchMatMulV3;
  p.batch_a = std::move(batch_a);
  p.batch_b = std::move(batch_b);
  return p;
}

TEST(BatchSearchedTest, OneSidedBroadcastReachesIterBatchBroadcast) {
  const BatchIterateBroadcastStrategy strategy;
  // A broadcast in the inner slot: one A matrix per 300 B matrices.
  MatmulProblem p = Batched(64, 96, 128, {8, 1}, {8, 300});
  const ProblemFacts facts = DeriveFacts(p);
  Capability c = strategy.IsCapable(p, facts, Chip950());
  EXPECT_TRUE(c.ok) << c.reason;
  EXPECT_THAT(c.reason, HasSubstr("A broadcast in batch slot 3"));
  EXPECT_THAT(
      strategy.DoTiling(p, facts, Chip950()),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("MultiCoreMatmulTiling search")));
}

TEST(BatchSearchedTest, IterBatchBroadcastRefusals) {
  const BatchIterateBroadcastStrategy strategy;
  auto reason = [&](const MatmulProblem& p) {
    Capability c = strategy.IsCapable(p, DeriveFacts(p), Chip950());
    EXPECT_FALSE(c.ok);
    return c.reason;
  };
  EXPECT_THAT(reason(Batched(64, 96, 128, {8, 2}, {1, 2})), HasSubstr("batch=16 <= aic"));
  EXPECT_THAT(reason(Batched(64, 96, 128, {8, 1}, {1, 300})), HasSubstr("both sides"));
  EXPECT_THAT(reason(Batched(64, 96, 128, {1, 1, 8}, {4, 300, 8})), HasSubstr("more than one"));
  EXPECT_THAT(reason(Batched(64, 96, 128, {40}, {40})), HasSubstr("no broadcast"));
  EXPECT_THAT(reason(Batched(64, 96, 128, {3, 1}, {8, 300})), HasSubstr("differs"));
}

TEST(BatchSearchedTest, RegistryRefusesWhatOnlyBaseCouldTile) {
  // Two broadcast slots: no batched strategy but BASE applies, and BASE
  // needs the search.
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Batched(64, 96, 128, {1, 1, 8}, {4, 300, 8}));
  EXPECT_THAT(d, StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("BASE")));
}

TEST(BatchSearchedTest, IterBatchNeedsTwoBatchesPerLoad) {
  const BatchIterateSearchedStrategy strategy;
  MatmulProblem p = Batched(512, 512, 512, {64}, {64});
  Capability c = strategy.IsCapable(p, DeriveFacts(p), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason, HasSubstr("batch(es) per load"));
  MatmulProblem small = Batched(32, 32, 32, {64}, {64});
  const ProblemFacts facts = DeriveFacts(small);
  ASSERT_TRUE(strategy.IsCapable(small, facts, Chip950()).ok);
  EXPECT_THAT(strategy.DoTiling(small, facts, Chip950()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("iterBatch=2")));
}

TEST(BatchSearchedTest, BaseIsAlwaysCapable) {
  const BatchSearchedFallbackStrategy strategy;
  MatmulProblem p = Batched(64, 96, 128, {40}, {40});
  const ProblemFacts facts = DeriveFacts(p);
  EXPECT_TRUE(strategy.IsCapable(p, facts, Chip950()).ok);
  EXPECT_THAT(strategy.DoTiling(p, facts, Chip950()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("TENSOR_LEVEL")));
}

}  // namespace
}  // namespace npu::tiling
