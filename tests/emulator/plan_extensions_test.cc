// The emulator's support for the advisor's extensions: a resident band of A
// or B in L1, separate GM read / write bandwidth in the timing, and the
// vector dot-product model on 16-bit operands.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "emulator/emulator.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/strategies/vector_mul.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::BuiltinPlan;
using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
using tiling::DataType;
using tiling::L1Residency;
using tiling::MatmulProblem;
using tiling::TilingPlan;

// Max |C - ref| / (u_out |ref| + 2 (k + 2) u32 sum|a b| + 6e-8) over C.
double WorstErrorRatio(const MatmulProblem& problem, const Tensors& inputs, const HostTensor& c) {
  const std::vector<double> ref = ReferenceMatmul(problem, inputs);
  MatmulProblem abs_problem = problem;
  Tensors abs_inputs = inputs;
  for (HostTensor* t : {&abs_inputs.a, &abs_inputs.b}) {
    for (uint64_t i = 0; i < t->elements(); ++i) t->Set(i, std::fabs(t->Get(i)));
  }
  const std::vector<double> mag = ReferenceMatmul(abs_problem, abs_inputs);
  const double u_out = problem.dtype_c == DataType::kFloat32    ? std::ldexp(1.0, -24)
                       : problem.dtype_c == DataType::kBFloat16 ? std::ldexp(1.0, -8)
                                                                : std::ldexp(1.0, -11);
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double bound =
        u_out * std::fabs(ref[i]) +
        2.0 * static_cast<double>(problem.k + 2) * std::ldexp(1.0, -24) * std::fabs(mag[i]) + 6e-8;
    worst = std::max(worst, std::fabs(c.Get(i) - ref[i]) / bound);
  }
  return worst;
}

// CANN's streamed plan turned into an A band of two base rows: the L1 block
// is 2 x base_m rows, walked one row of tiles at a time.
TilingPlan ABandPlan(const MatmulProblem& problem, const tiling::ChipSpec& chip) {
  TilingPlan plan = BuiltinPlan(problem, chip);
  plan.block.m_l1 = 2 * plan.block.base_m;
  plan.l1_residency = L1Residency::kABand;
  plan.swat_window_rows = 1;
  return plan;
}

TEST(PlanExtensionsTest, ABandMatchesReferenceAndReadsALess) {
  // 64 x 64 base blocks, K = 1000: a 128-row band of A is 250 KiB, and the
  // 11 column tiles give each of the 4 cores about 3 units per band.
  const MatmulProblem problem = Problem(300, 700, 1000);
  const tiling::ChipSpec chip = Chip950(4);
  TilingPlan streamed = BuiltinPlan(problem, chip);
  streamed.block.base_m = streamed.block.base_n = 64;
  streamed.block.m_l1 = streamed.block.n_l1 = 64;
  streamed.block.base_k = 64;
  streamed.block.k_l1 = 128;
  streamed.block.m_tail_cnt = streamed.block.n_tail_cnt = 1;
  TilingPlan band = streamed;
  band.block.m_l1 = 128;
  band.l1_residency = L1Residency::kABand;
  band.swat_window_rows = 1;
  const Tensors inputs = RandomInputs(problem, 5);
  EmulatorOptions options;
  options.threads = 2;
  absl::StatusOr<EmulationResult> a = Emulate(streamed, problem, chip, inputs, options);
  absl::StatusOr<EmulationResult> b = Emulate(band, problem, chip, inputs, options);
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_LE(WorstErrorRatio(problem, inputs, b->c), 1.0);
  const uint64_t read_a = a->stats.traffic.ddr_read_bytes + a->stats.traffic.l2_read_bytes;
  const uint64_t read_b = b->stats.traffic.ddr_read_bytes + b->stats.traffic.l2_read_bytes;
  EXPECT_LT(read_b, read_a);
  // Same MMADs either way.
  EXPECT_EQ(a->stats.pipe_busy_cycles[static_cast<int>(Pipe::kCube)],
            b->stats.pipe_busy_cycles[static_cast<int>(Pipe::kCube)]);
}

TEST(PlanExtensionsTest, BBandMatchesReference) {
  const MatmulProblem problem = Problem(700, 300, 1000, DataType::kBFloat16);
  const tiling::ChipSpec chip = Chip950(4);
  TilingPlan plan = BuiltinPlan(problem, chip);
  plan.block.base_n = 64;
  plan.block.n_l1 = 128;
  plan.block.base_k = 64;
  plan.block.k_l1 = 128;
  plan.block.m_tail_cnt = plan.block.n_tail_cnt = 1;
  plan.l1_residency = L1Residency::kBBand;
  plan.swat_window_rows = static_cast<uint32_t>(tiling::CeilDiv(700, plan.block.m_l1));
  const Tensors inputs = RandomInputs(problem, 6);
  EmulatorOptions options;
  absl::StatusOr<EmulationResult> result = Emulate(plan, problem, chip, inputs, options);
  ASSERT_THAT(result, IsOk());
  EXPECT_LE(WorstErrorRatio(problem, inputs, result->c), 1.0);
}

TEST(PlanExtensionsTest, OversizedBandNamesTheField) {
  const MatmulProblem problem = Problem(4097, 777, 1999);
  const TilingPlan plan = ABandPlan(problem, Chip950());  // 512 rows x 1999 x 2 B = 2 MiB
  EmulatorOptions options;
  options.timing_only = true;
  EXPECT_THAT(
      Emulate(plan, problem, Chip950(), {}, options),
      StatusIs(absl::StatusCode::kInvalidArgument,
               ::testing::AllOf(HasSubstr("tiling field mL1"), HasSubstr("resident band"))));
}

TEST(PlanExtensionsTest, GmReadWriteSplitChargesWritesToDdr) {
  // K = 32: the output dominates the traffic.
  const MatmulProblem problem = Problem(4096, 4096, 32);
  const TilingPlan plan = BuiltinPlan(problem, Chip950());
  EmulatorOptions options;
  options.timing_only = true;
  absl::StatusOr<EmulationResult> shared = Emulate(plan, problem, Chip950(), {}, options);
  options.gm_split.enabled = true;
  absl::StatusOr<EmulationResult> split = Emulate(plan, problem, Chip950(), {}, options);
  ASSERT_THAT(shared, IsOk());
  ASSERT_THAT(split, IsOk());
  EXPECT_EQ(shared->stats.traffic.ddr_write_bytes, 0u);
  EXPECT_EQ(shared->stats.ddr_write_channel_busy_cycles, 0u);
  EXPECT_EQ(split->stats.traffic.ddr_write_bytes, split->stats.traffic.gm_write_bytes);
  EXPECT_GT(split->stats.ddr_write_channel_busy_cycles, 0u);
  EXPECT_GT(split->stats.total_cycles, shared->stats.total_cycles);
  // A slower write port only slows the run further.
  options.gm_split.write_bytes_per_cycle = 8;
  absl::StatusOr<EmulationResult> slow_write = Emulate(plan, problem, Chip950(), {}, options);
  ASSERT_THAT(slow_write, IsOk());
  EXPECT_GT(slow_write->stats.total_cycles, split->stats.total_cycles);
}

TEST(PlanExtensionsTest, GmReadWriteSplitIsDeterministic) {
  const MatmulProblem problem = Problem(512, 512, 16384);
  const TilingPlan plan = BuiltinPlan(problem, Chip950(24));
  EmulatorOptions options;
  options.timing_only = true;
  options.gm_split.enabled = true;
  absl::StatusOr<EmulationResult> first = Emulate(plan, problem, Chip950(24), {}, options);
  absl::StatusOr<EmulationResult> second = Emulate(plan, problem, Chip950(24), {}, options);
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(first->stats.total_cycles, second->stats.total_cycles);
  EXPECT_GT(first->stats.traffic.ddr_write_bytes, 0u);  // partial sums and C
}

TEST(PlanExtensionsTest, VectorDotOn16BitOperandsMatchesReference) {
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16}) {
    for (const MatmulProblem& problem :
         {Problem(1, 300, 777, dtype), Problem(257, 1, 130, dtype)}) {
      const tiling::ProblemFacts facts = tiling::DeriveFacts(problem);
      absl::StatusOr<TilingPlan> plan =
          tiling::VectorMulStrategy().DoTiling(problem, facts, Chip950());
      ASSERT_THAT(plan, IsOk());
      const Tensors inputs = RandomInputs(problem, 9);
      absl::StatusOr<EmulationResult> result =
          Emulate(*plan, problem, Chip950(), inputs, EmulatorOptions{});
      ASSERT_THAT(result, IsOk());
      EXPECT_LE(WorstErrorRatio(problem, inputs, result->c), 1.0);
      EXPECT_EQ(result->stats.cores.front().kind, tiling::CoreKind::kAiv);
      // The fp32 problem of the same shape skips the cast pass.
      MatmulProblem fp32 = problem;
      fp32.dtype_a = fp32.dtype_b = fp32.dtype_c = DataType::kFloat32;
      EmulatorOptions timing;
      timing.timing_only = true;
      absl::StatusOr<EmulationResult> fp32_result = Emulate(*plan, fp32, Chip950(), {}, timing);
      ASSERT_THAT(fp32_result, IsOk());
      EXPECT_GT(result->stats.pipe_busy_cycles[static_cast<int>(Pipe::kVec)],
                fp32_result->stats.pipe_busy_cycles[static_cast<int>(Pipe::kVec)]);
    }
  }
}

}  // namespace
}  // namespace npu::emu
