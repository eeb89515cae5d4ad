// WeightQuantBatchMatmulV2 on the emulator (emulator/weight_quant_emulation.h):
// for each strategy and each antiquant mode, CANN's plan runs along its
// schedule, C passes the fp64 reference under the mode's bound, the same C
// comes out of 1 and 4 host threads, and a wrong element is caught.
#include "emulator/weight_quant_emulation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator/emulator.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/schedule.h"

namespace npu::emu {
namespace {

using tiling::DataType;
using tiling::Format;
using tiling::MatmulProblem;

struct Case {
  const char* name;
  const char* strategy;  // CANN's template that must take it
  const char* mode;      // the antiquant mode the answer names
  MatmulProblem problem;
};

MatmulProblem Problem(int64_t m, int64_t n, int64_t k, DataType x, DataType w, bool trans_b,
                      DataType scale, std::vector<int64_t> scale_shape, int64_t group = 0) {
  MatmulProblem p;
  p.op = tiling::MatmulOp::kWeightQuantBatchMatmulV2;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_c = x;
  p.dtype_b = w;
  p.trans_b = trans_b;
  p.quant.antiquant_scale = {true, scale, std::move(scale_shape)};
  p.quant.group_size = group;
  return p;
}

MatmulProblem WithOffset(MatmulProblem p) {
  p.quant.antiquant_offset = p.quant.antiquant_scale;
  p.quant.antiquant_offset.dtype = p.dtype_a;
  return p;
}

MatmulProblem WithBias(MatmulProblem p, DataType dtype) {
  p.has_bias = true;
  p.dtype_bias = dtype;
  return p;
}

MatmulProblem Nz(MatmulProblem p, int64_t c0) {
  p.format_b = Format::kFractalNz;
  const int64_t rows = p.trans_b ? p.n : p.k, cols = p.trans_b ? p.k : p.n;
  p.storage_shape_b = {(cols + c0) / c0, (rows + 16) / 16, 16, c0};
  return p;
}

std::vector<Case> Cases() {
  constexpr DataType kF16 = DataType::kFloat16, kBf16 = DataType::kBFloat16;
  return {
      {"Int4PerTensor", "ADAPTIVE_SPLIT", "PER_TENSOR",
       Problem(24, 512, 256, kF16, DataType::kInt4, false, kF16, {1})},
      {"Int8PerChannelTransposedBias", "ADAPTIVE_SPLIT", "PER_CHANNEL",
       WithBias(WithOffset(Problem(40, 384, 320, kBf16, DataType::kInt8, true, kBf16, {384})),
                DataType::kFloat32)},
      {"Fp8PerChannel", "ADAPTIVE_SPLIT", "PER_CHANNEL",
       Problem(16, 256, 192, kBf16, DataType::kFloat8E4M3, true, kBf16, {256})},
      {"HiF8PerChannel", "ADAPTIVE_SPLIT", "PER_CHANNEL",
       Problem(8, 128, 256, kF16, DataType::kHiFloat8, true, kF16, {128})},
      {"Fp4Mx", "ADAPTIVE_SPLIT", "MX",
       Problem(4, 256, 256, kF16, DataType::kFloat4E2M1, true, DataType::kFloat8E8M0, {256, 8},
               32)},
      {"Int4NzPerGroup", "ADAPTIVE_SPLIT", "PER_GROUP",
       Nz(WithOffset(Problem(20, 256, 512, kF16, DataType::kInt4, false, kF16, {4, 256}, 128)),
          16)},
      {"Int4PerGroup", "ANTI_REG", "PER_GROUP",
       WithOffset(Problem(48, 320, 512, kBf16, DataType::kInt4, true, kBf16, {320, 8}, 64))},
      {"Int8PerGroup", "ANTI_REG", "PER_GROUP",
       WithBias(Problem(32, 256, 384, kF16, DataType::kInt8, false, kF16, {3, 256}, 128), kF16)},
      {"Fp4PerGroupNz", "ANTI_REG", "PER_GROUP",
       Nz(Problem(16, 256, 256, kF16, DataType::kFloat4E2M1, false, kF16, {8, 256}, 32), 16)},
      {"PackedInt4PerGroup", "ANTI_REG", "PER_GROUP",
       Problem(16, 256, 256, kF16, DataType::kInt32, true, kF16, {256, 4}, 64)},
      {"Int8NzPerChannel", "CUSTOM_DEPRECATED", "PER_CHANNEL",
       Nz(WithOffset(Problem(16, 1024, 960, kF16, DataType::kInt8, false, kF16, {1024})), 32)},
      {"Int8NzPerGroup", "CUSTOM_DEPRECATED", "PER_GROUP",
       Nz(Problem(16, 1024, 960, kBf16, DataType::kInt8, false, kBf16, {15, 1024}, 64), 32)},
  };
}

class WeightQuantEmulationTest : public ::testing::TestWithParam<Case> {};

TEST_P(WeightQuantEmulationTest, MatchesTheReferenceUnderTheModeBound) {
  const Case& c = GetParam();
  const tiling::ChipSpec chip = *tiling::FindPlatform(tiling::kDefaultPlatform);
  absl::StatusOr<tiling::TilingDecision> decision =
      tiling::MakeBuiltinRegistry().Decide(c.problem, chip);
  ASSERT_TRUE(decision.ok()) << decision.status();
  const tiling::TilingPlan& plan = decision->plan;
  EXPECT_EQ(plan.strategy, c.strategy);
  EXPECT_EQ(plan.quant_mode, c.mode);
  absl::StatusOr<tiling::Schedule> schedule = tiling::ExpandSchedule(plan, c.problem, chip);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  const Tensors inputs = RandomWeightQuantInputs(c.problem, 7);
  ThreadPool one(1), four(4);
  absl::StatusOr<HostTensor> y = RunWeightQuantNumerics(*schedule, c.problem, inputs, one, nullptr);
  ASSERT_TRUE(y.ok()) << y.status();
  absl::StatusOr<HostTensor> y4 =
      RunWeightQuantNumerics(*schedule, c.problem, inputs, four, nullptr);
  ASSERT_TRUE(y4.ok()) << y4.status();
  EXPECT_EQ(y->bytes, y4->bytes) << "C depends on the thread count";
  absl::StatusOr<AccuracyReport> report = CheckWeightQuantAccuracy(c.problem, inputs, *y);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->passed) << report->worst_bound_ratio << " at " << report->worst_index;
  EXPECT_NE(report->bound_rule.find(c.mode), std::string::npos) << report->bound_rule;
  // A wrong element is caught.
  HostTensor wrong = *y;
  wrong.Set(0, wrong.Get(0) * 2.0f + 8.0f);
  absl::StatusOr<AccuracyReport> caught = CheckWeightQuantAccuracy(c.problem, inputs, wrong);
  ASSERT_TRUE(caught.ok());
  EXPECT_FALSE(caught->passed);
}

TEST_P(WeightQuantEmulationTest, EmulateRunsThePlan) {
  const Case& c = GetParam();
  const tiling::ChipSpec chip = *tiling::FindPlatform(tiling::kDefaultPlatform);
  absl::StatusOr<tiling::TilingDecision> decision =
      tiling::MakeBuiltinRegistry().Decide(c.problem, chip);
  ASSERT_TRUE(decision.ok()) << decision.status();
  const Tensors inputs = RandomInputs(c.problem, 3);
  EmulatorOptions options;
  options.threads = 2;
  absl::StatusOr<EmulationResult> result =
      Emulate(decision->plan, c.problem, chip, inputs, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GT(result->stats.total_cycles, 0u);
  absl::StatusOr<AccuracyReport> report =
      CompareWithReference(c.problem, inputs, result->c, 1, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->passed);
}

INSTANTIATE_TEST_SUITE_P(EveryStrategyAndMode, WeightQuantEmulationTest,
                         ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name);
                         });

TEST(WeightQuantEmulationCheckTest, RefusesAMisshapenScale) {
  MatmulProblem p =
      Problem(8, 128, 256, DataType::kFloat16, DataType::kInt8, true, DataType::kFloat16, {128});
  Tensors inputs = RandomWeightQuantInputs(p, 1);
  inputs.scale->shape = {1, 128};
  absl::Status status = CheckWeightQuantInputs(p, inputs);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("antiquant_scale"), std::string::npos) << status;
}

}  // namespace
}  // namespace npu::emu
