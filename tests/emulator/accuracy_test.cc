// Tests of emulator/accuracy.h: the reference check the Execute RPC reports.
#include "emulator/accuracy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "server/tiling/builtin_strategies.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
using tiling::DataType;
using tiling::MatmulProblem;

MatmulProblem Problem(int64_t m, int64_t n, int64_t k, DataType dtype = DataType::kFloat16) {
  MatmulProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.dtype_a = problem.dtype_b = problem.dtype_c = problem.dtype_bias = dtype;
  return problem;
}

// C as the emulator computes it for the engine's plan.
HostTensor EmulatedC(const MatmulProblem& problem, const Tensors& inputs) {
  const tiling::ChipSpec& chip = tiling::BuiltinPlatforms().front();
  absl::StatusOr<tiling::TilingDecision> decision =
      tiling::MakeBuiltinRegistry().Decide(problem, chip);
  EXPECT_THAT(decision, IsOk());
  EmulatorOptions options;
  options.threads = 2;
  absl::StatusOr<EmulationResult> result = Emulate(decision->plan, problem, chip, inputs, options);
  EXPECT_THAT(result, IsOk());
  return result.ok() ? result->c : HostTensor{};
}

TEST(CompareWithReferenceTest, EmulatedCPassesOnTailShapes) {
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    MatmulProblem problem = Problem(97, 131, 300, dtype);
    problem.has_bias = true;
    problem.trans_b = true;
    const Tensors inputs = RandomInputs(problem, 7);
    const HostTensor c = EmulatedC(problem, inputs);
    absl::StatusOr<AccuracyReport> report = CompareWithReference(problem, inputs, c, 2, nullptr);
    ASSERT_THAT(report, IsOk());
    EXPECT_TRUE(report->passed) << tiling::DataTypeName(dtype);
    EXPECT_EQ(report->elements_over_bound, 0u);
    EXPECT_LE(report->worst_bound_ratio, 1.0);
    EXPECT_GT(report->max_abs_error, 0.0);  // the output cast rounds something
    EXPECT_EQ(report->output_unit_roundoff, UnitRoundoff(dtype));
  }
}

TEST(CompareWithReferenceTest, MaxAbsErrorMatchesTheReferenceMatmul) {
  const MatmulProblem problem = Problem(64, 48, 80);
  const Tensors inputs = RandomInputs(problem, 3);
  const HostTensor c = EmulatedC(problem, inputs);
  const std::vector<double> ref = ReferenceMatmul(problem, inputs);
  double max_abs = 0;
  for (size_t i = 0; i < ref.size(); ++i) max_abs = std::max(max_abs, std::fabs(c.Get(i) - ref[i]));
  absl::StatusOr<AccuracyReport> report = CompareWithReference(problem, inputs, c, 1, nullptr);
  ASSERT_THAT(report, IsOk());
  EXPECT_EQ(report->max_abs_error, max_abs);
}

TEST(CompareWithReferenceTest, ACorruptedElementFailsAndIsLocated) {
  const MatmulProblem problem = Problem(40, 24, 64, DataType::kFloat32);
  const Tensors inputs = RandomInputs(problem, 11);
  HostTensor c = EmulatedC(problem, inputs);
  const uint64_t index = 17 * 24 + 5;
  c.Set(index, c.Get(index) + 0.5f);
  absl::StatusOr<AccuracyReport> report = CompareWithReference(problem, inputs, c, 2, nullptr);
  ASSERT_THAT(report, IsOk());
  EXPECT_FALSE(report->passed);
  EXPECT_EQ(report->elements_over_bound, 1u);
  EXPECT_EQ(report->worst_index, index);
  EXPECT_GT(report->worst_bound_ratio, 1.0);
  EXPECT_NEAR(report->max_abs_error, 0.5, 1e-6);
}

TEST(CompareWithReferenceTest, ReportIsIndependentOfThreads) {
  const MatmulProblem problem = Problem(33, 70, 129);
  const Tensors inputs = RandomInputs(problem, 5);
  const HostTensor c = EmulatedC(problem, inputs);
  absl::StatusOr<AccuracyReport> one = CompareWithReference(problem, inputs, c, 1, nullptr);
  absl::StatusOr<AccuracyReport> many = CompareWithReference(problem, inputs, c, 4, nullptr);
  ASSERT_THAT(one, IsOk());
  ASSERT_THAT(many, IsOk());
  EXPECT_EQ(one->max_abs_error, many->max_abs_error);
  EXPECT_EQ(one->max_rel_error, many->max_rel_error);
  EXPECT_EQ(one->worst_bound_ratio, many->worst_bound_ratio);
  EXPECT_EQ(one->worst_index, many->worst_index);
}

TEST(CompareWithReferenceTest, NanMatchesNanAndOverflowMatchesInfinity) {
  MatmulProblem problem = Problem(1, 2, 1);
  Tensors inputs;
  inputs.a = HostTensor::FromFloats(DataType::kFloat16, {1, 1}, {std::nanf("")});
  inputs.b = HostTensor::FromFloats(DataType::kFloat16, {1, 2}, {1.0f, 2.0f});
  HostTensor c = HostTensor::FromFloats(DataType::kFloat16, {1, 2}, {std::nanf(""), 0.0f});
  absl::StatusOr<AccuracyReport> report = CompareWithReference(problem, inputs, c, 1, nullptr);
  ASSERT_THAT(report, IsOk());
  EXPECT_FALSE(report->passed);  // NaN against a NaN reference passes, 0 does not
  EXPECT_EQ(report->elements_over_bound, 1u);
  EXPECT_EQ(report->worst_index, 1u);

  // 300 * 300 = 90000 overflows float16 to +inf.
  inputs.a = HostTensor::FromFloats(DataType::kFloat16, {1, 1}, {300.0f});
  inputs.b = HostTensor::FromFloats(DataType::kFloat16, {1, 2}, {300.0f, -300.0f});
  const float inf = std::numeric_limits<float>::infinity();
  c = HostTensor::FromFloats(DataType::kFloat16, {1, 2}, {inf, -inf});
  report = CompareWithReference(problem, inputs, c, 1, nullptr);
  ASSERT_THAT(report, IsOk());
  EXPECT_TRUE(report->passed);
  c = HostTensor::FromFloats(DataType::kFloat16, {1, 2}, {inf, inf});
  report = CompareWithReference(problem, inputs, c, 1, nullptr);
  ASSERT_THAT(report, IsOk());
  EXPECT_FALSE(report->passed);
}

TEST(CompareWithReferenceTest, ShapesAreChecked) {
  const MatmulProblem problem = Problem(8, 8, 8);
  const Tensors inputs = RandomInputs(problem, 1);
  const HostTensor c = HostTensor::Zeros(DataType::kFloat16, {8, 7});
  EXPECT_THAT(CompareWithReference(problem, inputs, c, 1, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("C is float16 [8,7]")));
}

TEST(CompareWithReferenceTest, CancellationStopsTheCheck) {
  const MatmulProblem problem = Problem(64, 64, 64);
  const Tensors inputs = RandomInputs(problem, 1);
  const HostTensor c = HostTensor::Zeros(DataType::kFloat16, {64, 64});
  std::atomic<bool> cancelled{true};
  EXPECT_THAT(CompareWithReference(problem, inputs, c, 2, &cancelled),
              StatusIs(absl::StatusCode::kCancelled));
}

}  // namespace
}  // namespace npu::emu
