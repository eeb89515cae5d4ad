#include "server/tiling/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/cann_fault.h"
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
  EXPECT_THAT(
      MakeBuiltinRegistry().Names(MatmulOp::kMatMulV3),
      ElementsAre("K_EQUAL_ZERO", "TO_MUL", "TO_MULTI_MUL", "BASIC_STREAM_K", "BASIC_ASWT"));
}

TEST(StrategyRegistryTest, DuplicateNameIsRejected) {
  StrategyRegistry registry;
  EXPECT_THAT(registry.Add(std::make_unique<SwizzledDataParallelStrategy>(), MatmulOp::kMatMulV3),
              IsOk());
  EXPECT_THAT(registry.Add(std::make_unique<SwizzledDataParallelStrategy>(), MatmulOp::kMatMulV3),
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
  EXPECT_THAT(decision->trace[0].reason.str(), HasSubstr("K=1024 != 0"));
  EXPECT_THAT(decision->trace[3].reason.str(),
              HasSubstr("align256(K)=1024 < max(8192, 32*256)/2=4096"));
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
            EXPECT_EQ(full->plan.data.struct_name(), bare->plan.data.struct_name());
            EXPECT_EQ(full->plan.data.RawWords(), bare->plan.data.RawWords());
            EXPECT_EQ(full->plan.block_dim, bare->plan.block_dim);
            EXPECT_EQ(full->plan.workspace_bytes, bare->plan.workspace_bytes);
            CheckedInputs checked;
            ASSERT_TRUE(checked.CheckProblem(p).ok());
            ASSERT_TRUE(checked.CheckChip(Chip950()).ok());
            absl::StatusOr<TilingDecision> unchecked = registry.Decide(checked, quiet);
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
  EXPECT_EQ(strategies.size(), registry.Names(MatmulOp::kMatMulV3).size());
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
  CheckedInputs checked;
  ASSERT_THAT(checked.CheckProblem(Problem(1024, 1024, 1024)), IsOk());
  ASSERT_THAT(checked.CheckChip(a2), IsOk());
  const auto arch_refusal = StatusIs(
      absl::StatusCode::kFailedPrecondition,
      AllOf(HasSubstr("arch35 mat_mul_v3 tiling applies to DAV_3510 only"),
            HasSubstr("\"ascend910b1\" is DAV_2201"), HasSubstr("Execute with a kernel_schedule")));
  for (const DecideOptions& options : {DecideOptions{}, forced}) {
    EXPECT_THAT(registry.Decide(Problem(1024, 1024, 1024), a2, options), arch_refusal);
    EXPECT_THAT(registry.Decide(checked, options), arch_refusal);
  }
  // The architecture alone decides: the 950PR's figures do not help.
  ChipSpec relabelled = Chip950();
  relabelled.npu_arch = NpuArch::kDav2201;
  EXPECT_THAT(registry.Decide(Problem(1024, 1024, 1024), relabelled),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("DAV_2201")));
  EXPECT_THAT(registry.Decide(Problem(1024, 1024, 1024), Chip950()), IsOk());
}

using ::npu::testing::Batched;

// Problems on which CANN's own host tiling divides by zero (its process dies
// with SIGFPE): FAILED_PRECONDITION that says so, never a fault here, and the
// walk ends at the strategy where CANN's ends.
TEST(CannFaultTest, LongKWrapsTheCoreSplitDivisorToZero) {
  // kBytes * 2 * m0 = 2^27 * 32 wraps to 0 in CANN's 32-bit search.
  MatmulProblem p = Batched(512, 128, 4194304, {24, 1}, {}, DataType::kBFloat16);
  p.trans_a = true;
  absl::StatusOr<TilingDecision> decision = MakeBuiltinRegistry().Decide(p, Chip950());
  ASSERT_THAT(decision, StatusIs(absl::StatusCode::kFailedPrecondition,
                                 AllOf(HasSubstr("CANN's host tiling divides by zero"),
                                       HasSubstr("kBytes * 2 * m0 wraps to 0"))));
  EXPECT_TRUE(IsCannFault(decision.status()));
}

TEST(CannFaultTest, ZeroKPastKEqualZeroNamesTheDivision) {
  MatmulProblem nz = Batched(64, 64, 0, 2);
  nz.format_b = Format::kFractalNz;
  EXPECT_THAT(MakeBuiltinRegistry().Decide(nz, Chip950()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("ASW_BASIC: CANN's host tiling divides by zero"),
                             HasSubstr("k=0"))));
  MatmulProblem fused_nz = nz;
  fused_nz.op = MatmulOp::kFusedMatMul;
  for (FusedOp op : {FusedOp::kNone, FusedOp::kRelu}) {
    fused_nz.fused.op = op;
    EXPECT_THAT(MakeBuiltinRegistry().Decide(fused_nz, Chip950()),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("CANN's host tiling divides by zero")));
  }
  MatmulProblem cast = Problem(64, 64, 0);
  cast.op = MatmulOp::kFusedMatMul;
  cast.fused.op = FusedOp::kCast16To32;
  cast.dtype_c = DataType::kFloat32;
  EXPECT_THAT(MakeBuiltinRegistry().Decide(cast, Chip950()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("BASIC_ASWT_INHERITED_FROM_MMV3: CANN's host tiling divides")));
  // A 2-D relu with an NZ B is no fault: no strategy takes it, as in CANN.
  MatmulProblem relu = Problem(64, 64, 0);
  relu.op = MatmulOp::kFusedMatMul;
  relu.fused.op = FusedOp::kRelu;
  relu.format_b = Format::kFractalNz;
  absl::StatusOr<TilingDecision> refused = MakeBuiltinRegistry().Decide(relu, Chip950());
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kFailedPrecondition,
                                HasSubstr("no FusedMatMul strategy could tile")));
  EXPECT_FALSE(IsCannFault(refused.status()));
}

// Long K values at and around the wrap of CANN's 32-bit byte counts, every
// dtype and transpose: each answer is a plan or a FAILED_PRECONDITION.
TEST(CannFaultTest, LongKSweepNeverFaults) {
  const StrategyRegistry registry = MakeBuiltinRegistry();
  int faults = 0;
  for (int64_t k : {1 << 20, (1 << 21) + 7, 1 << 22, 4194304 + 16, 1 << 23, 12582912, 1 << 24,
                    (1 << 24) + 1, 2147483647}) {
    for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
      for (int transposes = 0; transposes < 4; ++transposes) {
        for (const auto& [batch_a, batch_b] :
             std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
                 {{24, 1}, {}}, {{3}, {3}}, {{2, 5}, {1, 5}}, {{}, {4}}}) {
          MatmulProblem p = Batched(512, 128, k, batch_a, batch_b, dtype);
          p.trans_a = transposes & 1;
          p.trans_b = transposes & 2;
          absl::StatusOr<TilingDecision> decision = registry.Decide(p, Chip950());
          if (decision.ok()) continue;
          EXPECT_THAT(decision.status().code(),
                      ::testing::AnyOf(absl::StatusCode::kFailedPrecondition,
                                       absl::StatusCode::kInvalidArgument))
              << decision.status();
          faults += IsCannFault(decision.status());
        }
      }
    }
  }
  EXPECT_GT(faults, 0);  // the sweep reaches the wrap
}

// CANN's unit test expects this ITER_BATCH_BROADCAST_BASICAPI plan on the
// stock 950PR (key 0x742, block dim 32), although its one-batch L0B blocks
// fit only single-buffered: the answer is CANN's plan with a warning.
TEST(PlanWarningTest, CannPlanThatOverflowsL0BIsAnsweredWithAWarning) {
  MatmulProblem p = ::npu::testing::Batched(1, 200, 64, {5, 256, 8}, {5, 1, 8}, DataType::kFloat32);
  p.trans_b = true;
  absl::StatusOr<TilingDecision> decision = MakeBuiltinRegistry().Decide(p, Chip950());
  ASSERT_THAT(decision, IsOk());
  const TilingPlan& plan = decision->plan;
  EXPECT_EQ(plan.strategy, "ITER_BATCH_BROADCAST_BASICAPI");
  EXPECT_EQ(plan.key.Encode(), 0x742u);
  EXPECT_EQ(plan.block_dim, 32u);
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0].buffer, "L0B");
  EXPECT_EQ(plan.warnings[0].need_bytes, 106496u);
  EXPECT_EQ(plan.warnings[0].have_bytes, 65536u);
  EXPECT_THAT(plan.warnings[0].message, AllOf(HasSubstr("baseN*baseK*4*2=106496 > l0b_bytes=65536"),
                                              HasSubstr("double buffering runs past the buffer")));
  // The same plan fails the strict check the advisor applies to its own plans,
  // and is a hazard nothing may run.
  EXPECT_THAT(CheckPlanFits(plan, p, Chip950()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("l0b_bytes=65536")));
  EXPECT_THAT(PlanHazard(plan, "; not run"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("hazard: CANN's ITER_BATCH_BROADCAST_BASICAPI plan does "
                                       "not fit this chip (L0B overflows: "),
                             HasSubstr("); not run"))));
}

TEST(PlanWarningTest, PlansThatFitCarryNoWarning) {
  absl::StatusOr<TilingDecision> decision =
      MakeBuiltinRegistry().Decide(Problem(4096, 1280, 8192), Chip950());
  ASSERT_THAT(decision, IsOk());
  EXPECT_TRUE(decision->plan.warnings.empty());
  EXPECT_THAT(PlanHazard(decision->plan, ""), IsOk());
}

TEST(PlanWarningTest, SmallCustomL0BGivesCannsMatMulV3PlanWithAWarning) {
  // CANN's own answer (its host tiling, compiled): key 66, block dim 32,
  // baseN 256 x baseK 64 bf16 blocks, twice 32 KiB of a 16 KiB L0B.
  ChipSpec chip = Chip950();
  chip.l0b_bytes = 16384;
  MatmulProblem p = Problem(20000, 1024, 256, DataType::kBFloat16);
  p.trans_b = true;
  absl::StatusOr<TilingDecision> decision = MakeBuiltinRegistry().Decide(p, chip);
  ASSERT_THAT(decision, IsOk());
  EXPECT_EQ(decision->plan.key.Encode(), 66u);
  EXPECT_EQ(decision->plan.block_dim, 32u);
  ASSERT_EQ(decision->plan.warnings.size(), 1u);
  EXPECT_EQ(decision->plan.warnings[0].buffer, "L0B");
  EXPECT_THAT(decision->plan.warnings[0].message,
              AllOf(HasSubstr("baseN*baseK*2*2=65536 > l0b_bytes=16384"),
                    HasSubstr("even one block does not fit")));
}

}  // namespace
}  // namespace npu::tiling
