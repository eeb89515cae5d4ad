#include "server/tiling/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/strategies/swizzled_data_parallel.h"
#include "server/tiling/validate.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(StrategyRegistryTest, BuiltinOrderIsCannPriority) {
  EXPECT_THAT(MakeBuiltinRegistry().Names(), ElementsAre("K_EQUAL_ZERO", "TO_MUL", "TO_MULTI_MUL",
                                                         "BASIC_STREAM_K", "BASIC_ASWT"));
}

TEST(StrategyRegistryTest, DuplicateNameIsRejected) {
  StrategyRegistry registry;
  EXPECT_THAT(registry.Add(std::make_unique<SwizzledDataParallelStrategy>()), IsOk());
  EXPECT_THAT(registry.Add(std::make_unique<SwizzledDataParallelStrategy>()),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("BASIC_ASWT")));
}

TEST(StrategyRegistryTest, TraceNamesEveryStrategyUpToTheChosenOne) {
  absl::StatusOr<TilingDecision> decision =
      MakeBuiltinRegistry().Decide(Problem(2048, 2048, 1024), Chip950());
  ASSERT_THAT(decision, IsOk());
  ASSERT_EQ(decision->trace.size(), 5u);
  for (size_t i = 0; i + 1 < decision->trace.size(); ++i) {
    EXPECT_FALSE(decision->trace[i].capable) << decision->trace[i].strategy;
    EXPECT_FALSE(decision->trace[i].reason.empty()) << decision->trace[i].strategy;
  }
  EXPECT_TRUE(decision->trace.back().chosen);
  EXPECT_EQ(decision->trace.back().strategy, "BASIC_ASWT");
  EXPECT_EQ(decision->plan.strategy, "BASIC_ASWT");
}

TEST(StrategyRegistryTest, TraceCarriesTheDecidingNumbers) {
  absl::StatusOr<TilingDecision> decision =
      MakeBuiltinRegistry().Decide(Problem(2048, 2048, 1024), Chip950());
  ASSERT_THAT(decision, IsOk());
  EXPECT_THAT(decision->trace[0].reason, HasSubstr("K=1024 != 0"));
  EXPECT_THAT(decision->trace[3].reason, HasSubstr("align256(K)=1024 < max(8192, 32*256)/2=4096"));
}

TEST(StrategyRegistryTest, ForcedStrategyRunsAlone) {
  MatmulProblem p = Problem(4096, 1280, 8192);
  p.trans_b = true;
  DecideOptions options;
  options.forced_strategy = "BASIC_ASWT";
  absl::StatusOr<TilingDecision> decision = MakeBuiltinRegistry().Decide(p, Chip950(), options);
  ASSERT_THAT(decision, IsOk());
  EXPECT_EQ(decision->plan.strategy, "BASIC_ASWT");
  ASSERT_EQ(decision->trace.size(), 1u);
  EXPECT_EQ(decision->plan.key.model, KernelModel::kBasic);
}

TEST(StrategyRegistryTest, ForcedStrategyThatCannotApplyExplainsWhy) {
  DecideOptions options;
  options.forced_strategy = "BASIC_STREAM_K";
  EXPECT_THAT(MakeBuiltinRegistry().Decide(Problem(512, 512, 1024), Chip950(), options),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("align256(K)=1024")));
}

// K = 0 only reaches the cube strategies when one is forced; every one of
// them refuses it instead of sizing blocks from zero K bytes (which divided
// by zero in the ASWT block sizing).
TEST(StrategyRegistryTest, ForcedCubeStrategyRefusesZeroK) {
  for (const char* name : {"BASIC_ASWT", "BASIC_STREAM_K"}) {
    for (int64_t n : {255, 512}) {
      DecideOptions options;
      options.forced_strategy = name;
      EXPECT_THAT(
          MakeBuiltinRegistry().Decide(Problem(n == 255 ? 1 : 512, n, 0), Chip950(), options),
          StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("cannot apply")))
          << name << " n=" << n;
    }
  }
}

// Neither skipping the texts nor (for inputs that pass the checks) the
// input checks changes a number of the plan.
TEST(StrategyRegistryTest, WithoutTextsOrChecksThePlanIsTheSame) {
  const StrategyRegistry registry = MakeBuiltinRegistry();
  DecideOptions quiet;
  quiet.explain = false;
  quiet.describe = false;
  DecideOptions described = quiet;
  described.describe = true;
  DecideOptions prechecked = quiet;
  prechecked.inputs_validated = true;
  std::set<std::string> strategies;
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    for (int64_t m : {1, 17, 512, 4096}) {
      for (int64_t n : {1, 255, 1280, 8192}) {
        for (int64_t k : {0, 64, 4097, 16384}) {
          for (bool force_fp32 : {false, true}) {
            MatmulProblem p = Problem(m, n, k, dtype);
            p.trans_b = force_fp32;
            p.force_grp_acc_fp32 = force_fp32 && dtype == DataType::kFloat32;
            SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << " "
                                              << DataTypeName(dtype) << " " << force_fp32);
            absl::StatusOr<TilingDecision> full = registry.Decide(p, Chip950());
            absl::StatusOr<TilingDecision> bare = registry.Decide(p, Chip950(), quiet);
            ASSERT_EQ(full.status(), bare.status());
            if (!full.ok()) continue;
            strategies.insert(full->plan.strategy);
            EXPECT_FALSE(full->trace.empty());
            EXPECT_TRUE(bare->trace.empty());
            EXPECT_TRUE(bare->plan.detail.empty());
            // The detail alone: the same words, no trace.
            absl::StatusOr<TilingDecision> detail_only = registry.Decide(p, Chip950(), described);
            ASSERT_TRUE(detail_only.ok()) << detail_only.status();
            EXPECT_FALSE(full->plan.detail.empty());
            EXPECT_EQ(detail_only->plan.detail, full->plan.detail);
            EXPECT_TRUE(detail_only->trace.empty());
            EXPECT_EQ(detail_only->plan.data.RawWords(), full->plan.data.RawWords());
            EXPECT_EQ(full->plan.strategy, bare->plan.strategy);
            EXPECT_EQ(full->plan.key.Encode(), bare->plan.key.Encode());
            EXPECT_EQ(full->plan.data.struct_name, bare->plan.data.struct_name);
            EXPECT_EQ(full->plan.data.RawWords(), bare->plan.data.RawWords());
            EXPECT_EQ(full->plan.block_dim, bare->plan.block_dim);
            EXPECT_EQ(full->plan.workspace_bytes, bare->plan.workspace_bytes);
            ASSERT_TRUE(ValidateProblem(p).ok());
            absl::StatusOr<TilingDecision> unchecked = registry.Decide(p, Chip950(), prechecked);
            ASSERT_TRUE(unchecked.ok()) << unchecked.status();
            EXPECT_EQ(unchecked->plan.strategy, bare->plan.strategy);
            EXPECT_EQ(unchecked->plan.key.Encode(), bare->plan.key.Encode());
            EXPECT_EQ(unchecked->plan.data.RawWords(), bare->plan.data.RawWords());
            EXPECT_EQ(unchecked->plan.block_dim, bare->plan.block_dim);
            EXPECT_EQ(unchecked->plan.workspace_bytes, bare->plan.workspace_bytes);
          }
        }
      }
    }
  }
  // The sweep reaches every built-in strategy.
  EXPECT_EQ(strategies.size(), registry.Names().size());
}

TEST(StrategyRegistryTest, ForcedStrategyExplainsEvenWithoutTexts) {
  DecideOptions options;
  options.forced_strategy = "BASIC_STREAM_K";
  options.explain = false;
  EXPECT_THAT(MakeBuiltinRegistry().Decide(Problem(512, 512, 1024), Chip950(), options),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("align256(K)=1024")));
}

TEST(StrategyRegistryTest, UnknownForcedStrategyIsNotFound) {
  DecideOptions options;
  options.forced_strategy = "FASTEST";
  EXPECT_THAT(MakeBuiltinRegistry().Decide(Problem(64, 64, 64), Chip950(), options),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("BASIC_ASWT")));
}

TEST(StrategyRegistryTest, InvalidInputStopsBeforeAnyStrategy) {
  EXPECT_THAT(MakeBuiltinRegistry().Decide(Problem(0, 64, 64), Chip950()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("m=0")));
  ChipSpec chip = Chip950();
  chip.l1_bytes = 0;
  EXPECT_THAT(MakeBuiltinRegistry().Decide(Problem(64, 64, 64), chip),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("l1_bytes")));
}

TEST(StrategyRegistryTest, EmptyRegistryIsInternal) {
  StrategyRegistry registry;
  EXPECT_THAT(registry.Decide(Problem(64, 64, 64), Chip950()),
              StatusIs(absl::StatusCode::kInternal));
}

TEST(CheckPlanFitsTest, FlagsOversizedL0A) {
  absl::StatusOr<TilingDecision> decision =
      MakeBuiltinRegistry().Decide(Problem(2048, 2048, 1024), Chip950());
  ASSERT_THAT(decision, IsOk());
  TilingPlan plan = decision->plan;
  plan.block.base_k *= 8;
  EXPECT_THAT(CheckPlanFits(plan, Problem(2048, 2048, 1024), Chip950()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("l0a_bytes")));
  plan = decision->plan;
  plan.block_dim = 33;
  EXPECT_THAT(CheckPlanFits(plan, Problem(2048, 2048, 1024), Chip950()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("block_dim=33")));
}

// CANN's arch35 tiling covers DAV_3510 only: Decide() refuses a chip of
// another architecture on every path (checked inputs or not, a forced
// strategy or the priority order), naming the platform and its arch.
TEST(StrategyRegistryTest, RefusesAChipOfAnotherArchitecture) {
  const ChipSpec a2 = *FindPlatform("ascend910b1");
  ASSERT_EQ(a2.npu_arch, NpuArch::kDav2201);
  ASSERT_THAT(ValidateChip(a2), IsOk());  // a valid chip, just not CANN's arch35
  const StrategyRegistry registry = MakeBuiltinRegistry();
  DecideOptions forced;
  forced.forced_strategy = "BASIC_ASWT";
  DecideOptions validated;
  validated.inputs_validated = true;
  for (const DecideOptions& options : {DecideOptions{}, forced, validated}) {
    EXPECT_THAT(registry.Decide(Problem(1024, 1024, 1024), a2, options),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         AllOf(HasSubstr("arch35 mat_mul_v3 tiling applies to DAV_3510 only"),
                               HasSubstr("\"ascend910b1\" is DAV_2201"),
                               HasSubstr("Execute with a kernel_schedule"))));
  }
  // The architecture alone decides: the 950PR's figures do not help.
  ChipSpec relabelled = Chip950();
  relabelled.npu_arch = NpuArch::kDav2201;
  EXPECT_THAT(registry.Decide(Problem(1024, 1024, 1024), relabelled),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("DAV_2201")));
  EXPECT_THAT(registry.Decide(Problem(1024, 1024, 1024), Chip950()), IsOk());
}

}  // namespace
}  // namespace npu::tiling
