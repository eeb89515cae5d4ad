#include "server/tiling/plan_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testing/problems.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::Problem;

MatmulProblem WithBias(MatmulProblem problem, bool bias = true) {
  problem.has_bias = bias;
  return problem;
}

// A streamed float16 cube plan with blocks 256 x 128 x 64 and 256-deep L1
// stages.
TilingPlan StreamedPlan() {
  TilingPlan plan;
  plan.kernel_type = KernelType::kAicOnly;
  plan.key.model = KernelModel::kBasic;
  BlockTiling& b = plan.block;
  b.base_m = 256;
  b.base_n = 128;
  b.base_k = 64;
  b.k_l1 = 256;
  b.m_l1 = 256;
  b.n_l1 = 128;
  b.step_ka = b.step_kb = 4;
  b.l0c_db = 1;
  return plan;
}

TEST(CubeBufferDemandTest, StreamedPlanCountsPingPongHalvesAndStages) {
  const CubeBufferDemand d = ComputeCubeBufferDemand(StreamedPlan(), Problem(4096, 4096, 4096));
  EXPECT_EQ(d.l0a_bytes, 2u * 256 * 64 * 2);
  EXPECT_EQ(d.l0b_bytes, 2u * 64 * 128 * 2);
  EXPECT_EQ(d.l0c_bytes, 256u * 128 * 4);
  EXPECT_EQ(d.bias_table_bytes, 0u);
  EXPECT_EQ(d.stage_k, 256u);
  EXPECT_EQ(d.l1_a_bytes, 2u * 256 * 256 * 2);
  EXPECT_EQ(d.l1_b_bytes, 2u * 128 * 256 * 2);
  EXPECT_EQ(d.l1_bytes, d.l1_a_bytes + d.l1_b_bytes);
}

TEST(CubeBufferDemandTest, L0cDoubleBufferAndBiasTable) {
  TilingPlan plan = StreamedPlan();
  plan.block.l0c_db = 2;
  const CubeBufferDemand d = ComputeCubeBufferDemand(plan, WithBias(Problem(4096, 4096, 4096)));
  EXPECT_EQ(d.l0c_bytes, 2u * 256 * 128 * 4);
  EXPECT_EQ(d.bias_table_bytes, 128u * 4);
  // The bias row is staged in the room CANN's heuristics leave in L1.
  EXPECT_EQ(d.l1_bytes, d.l1_a_bytes + d.l1_b_bytes);
}

TEST(CubeBufferDemandTest, FullLoadPadsTheResidentMatrixToFractals) {
  TilingPlan plan = StreamedPlan();
  plan.key.full_load = FullLoad::kA;
  plan.block.step_kb = 3;
  const CubeBufferDemand d = ComputeCubeBufferDemand(plan, Problem(100, 4096, 1000));
  EXPECT_EQ(d.l1_a_bytes, 112u * 1008 * 2);
  // Next to a full load the streamed operand holds stepKb base_k slices.
  EXPECT_EQ(d.l1_b_bytes, 2u * 128 * (3 * 64) * 2);

  plan.key.full_load = FullLoad::kAB;
  const CubeBufferDemand both = ComputeCubeBufferDemand(plan, Problem(100, 40, 1000));
  EXPECT_EQ(both.l1_bytes, (112u + 48) * 1008 * 2);
}

TEST(CubeBufferDemandTest, ResidentBandIsOneL1BlockCutAtTheEdge) {
  TilingPlan plan = StreamedPlan();
  plan.l1_residency = L1Residency::kABand;
  plan.block.m_l1 = 512;
  EXPECT_EQ(ComputeCubeBufferDemand(plan, Problem(4096, 4096, 1000)).l1_a_bytes, 512u * 1008 * 2);
  EXPECT_EQ(ComputeCubeBufferDemand(plan, Problem(300, 4096, 1000)).l1_a_bytes, 300u * 1008 * 2);
}

TEST(FindBufferOverflowTest, NamesTheFirstBufferThatOverflows) {
  const ChipSpec chip = Chip950();
  CubeBufferDemand demand;
  EXPECT_FALSE(FindBufferOverflow(demand, chip).has_value());
  demand.l1_bytes = chip.l1_bytes + 1;
  demand.l0c_bytes = chip.l0c_bytes + 1;
  std::optional<BufferOverflow> overflow = FindBufferOverflow(demand, chip);
  ASSERT_TRUE(overflow.has_value());
  EXPECT_EQ(overflow->buffer, CubeBuffer::kL0c);
  EXPECT_EQ(overflow->need_bytes, chip.l0c_bytes + 1);
  EXPECT_EQ(overflow->have_bytes, chip.l0c_bytes);
  EXPECT_EQ(CubeBufferName(overflow->buffer), "L0C");

  demand.l0c_bytes = chip.l0c_bytes;  // exactly full fits
  overflow = FindBufferOverflow(demand, chip);
  ASSERT_TRUE(overflow.has_value());
  EXPECT_EQ(overflow->buffer, CubeBuffer::kL1);
}

TEST(FindBufferOverflowTest, EveryBuiltinPlanFits) {
  const ChipSpec chip = Chip950();
  for (int64_t m : {1, 16, 100, 1024, 5000}) {
    for (int64_t n : {1, 64, 777, 4096}) {
      for (int64_t k : {16, 300, 4096, 40000}) {
        for (bool bias : {false, true}) {
          const MatmulProblem problem = WithBias(Problem(m, n, k), bias);
          const TilingPlan plan = ::npu::testing::BuiltinPlan(problem, chip);
          if (plan.kernel_type == KernelType::kAivOnly) continue;
          EXPECT_FALSE(FindBufferOverflow(ComputeCubeBufferDemand(plan, problem), chip))
              << m << "x" << n << "x" << k << " bias " << bias << ": " << plan.strategy;
        }
      }
    }
  }
}

}  // namespace
}  // namespace npu::tiling
