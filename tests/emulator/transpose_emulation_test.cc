// TransposeBatchMatMul and TransposeQuantBatchMatMul on the emulator: the
// engine's plan for every perm combination, batch split and quant mode run
// on random operands stored through the perms, against the fp64 / exact
// reference; the layouts the kernels read and write; the cost of their
// strided transfers in the timing.
#include "emulator/transpose_emulation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "emulator/accuracy.h"
#include "emulator/emulator.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/transpose/transpose_parse.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
using tiling::DataType;
using tiling::MatmulOp;
using tiling::MatmulProblem;

const tiling::ChipSpec& Chip950() { return tiling::BuiltinPlatforms().front(); }

MatmulProblem Tbmm(int64_t m, int64_t n, int64_t k, int64_t batch, std::vector<int64_t> perm_x1,
                   std::vector<int64_t> perm_x2, DataType dtype = DataType::kFloat16) {
  MatmulProblem p;
  p.op = MatmulOp::kTransposeBatchMatMul;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_b = p.dtype_c = dtype;
  p.transpose.perm_x1 = std::move(perm_x1);
  p.transpose.perm_x2 = std::move(perm_x2);
  p.transpose.perm_y = {1, 0, 2};
  p.transpose.batch = batch;
  return p;
}

// The engine's plan of `p`, emulated on seeded inputs and checked against
// the reference.
absl::StatusOr<AccuracyReport> RunAndCheck(const MatmulProblem& p, uint64_t seed = 7,
                                           EmulationResult* out = nullptr, int threads = 1) {
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  absl::StatusOr<tiling::TilingDecision> decision = registry.Decide(p, Chip950());
  if (!decision.ok()) return decision.status();
  const Tensors inputs = RandomInputs(p, seed);
  EmulatorOptions options;
  options.threads = threads;
  absl::StatusOr<EmulationResult> result = Emulate(decision->plan, p, Chip950(), inputs, options);
  if (!result.ok()) return result.status();
  absl::StatusOr<AccuracyReport> report = CompareWithReference(p, inputs, result->c, 1, nullptr);
  if (out != nullptr) *out = *std::move(result);
  return report;
}

struct PermCase {
  std::vector<int64_t> perm_x1, perm_x2;
  int64_t split;
};

class TransposeBatchPermTest : public ::testing::TestWithParam<PermCase> {};

// Every accepted perm combination, with and without a batch split, computes
// the logical matmul within the fp32 accumulation bound.
TEST_P(TransposeBatchPermTest, MatchesReference) {
  const PermCase& c = GetParam();
  MatmulProblem p = Tbmm(40, 72, 96, 4, c.perm_x1, c.perm_x2);
  p.transpose.batch_split_factor = c.split;
  absl::StatusOr<AccuracyReport> report = RunAndCheck(p);
  ASSERT_THAT(report.status(), IsOk());
  EXPECT_TRUE(report->passed) << "worst " << report->worst_bound_ratio;
}

INSTANTIATE_TEST_SUITE_P(
    Perms, TransposeBatchPermTest,
    ::testing::Values(PermCase{{0, 1, 2}, {0, 1, 2}, 1}, PermCase{{1, 0, 2}, {0, 1, 2}, 1},
                      PermCase{{0, 1, 2}, {0, 2, 1}, 1}, PermCase{{1, 0, 2}, {0, 2, 1}, 1},
                      PermCase{{0, 1, 2}, {0, 1, 2}, 2}, PermCase{{1, 0, 2}, {0, 1, 2}, 4},
                      PermCase{{0, 1, 2}, {0, 2, 1}, 2}, PermCase{{1, 0, 2}, {0, 2, 1}, 2}),
    [](const ::testing::TestParamInfo<PermCase>& info) {
      return absl::StrCat("x1_", info.param.perm_x1[0], info.param.perm_x1[1],
                          info.param.perm_x1[2], "_x2_", info.param.perm_x2[0],
                          info.param.perm_x2[1], info.param.perm_x2[2], "_split", info.param.split);
    });

// y element (b, i, j) is the dot product of x1's row (b, i) and x2's column
// (b, j), found through the layouts' offsets: the kernels' strided reads
// and writes, checked by hand on a small problem.
TEST(TransposeEmulationTest, ElementsSitWhereThePermsPutThem) {
  MatmulProblem p = Tbmm(5, 6, 16, 3, {1, 0, 2}, {0, 2, 1}, DataType::kFloat32);
  EmulationResult result;
  ASSERT_THAT(RunAndCheck(p, 11, &result).status(), IsOk());
  const Tensors inputs = RandomInputs(p, 11);
  const tiling::transpose::TransposeLayout layout = tiling::transpose::TransposeLayoutOf(p);
  EXPECT_EQ(result.c.shape, (std::vector<int64_t>{5, 3, 6}));  // [m, batch, n]
  for (uint64_t b = 0; b < 3; ++b) {
    for (uint64_t i = 0; i < 5; ++i) {
      for (uint64_t j = 0; j < 6; ++j) {
        double dot = 0;
        for (uint64_t q = 0; q < 16; ++q) {
          dot += static_cast<double>(inputs.a.Get(layout.X1Offset(b, i, q))) *
                 inputs.b.Get(layout.X2Offset(b, q, j));
        }
        EXPECT_NEAR(result.c.Get(layout.YOffset(b, i, j)), dot, 1e-5) << b << " " << i << " " << j;
      }
    }
  }
}

// A batch split writes y as [f, m, batch / f * n].
TEST(TransposeEmulationTest, BatchSplitShapesY) {
  MatmulProblem p = Tbmm(8, 16, 32, 6, {0, 1, 2}, {0, 1, 2});
  p.transpose.batch_split_factor = 3;
  EXPECT_EQ(ShapesOf(p).c, (std::vector<int64_t>{3, 8, 32}));
  EXPECT_EQ(ShapesOf(p).a, (std::vector<int64_t>{6, 8, 32}));
  p.transpose.perm_x1 = {1, 0, 2};
  EXPECT_EQ(ShapesOf(p).a, (std::vector<int64_t>{8, 6, 32}));
}

TEST(TransposeEmulationTest, Bf16NzX2AndHf32) {
  MatmulProblem bf16 = Tbmm(48, 80, 128, 2, {1, 0, 2}, {0, 2, 1}, DataType::kBFloat16);
  bf16.format_b = tiling::Format::kFractalNz;
  absl::StatusOr<AccuracyReport> report = RunAndCheck(bf16);
  ASSERT_THAT(report.status(), IsOk());
  EXPECT_TRUE(report->passed);
  MatmulProblem fp32 = Tbmm(33, 40, 70, 3, {1, 0, 2}, {0, 1, 2}, DataType::kFloat32);
  fp32.hf32 = true;
  report = RunAndCheck(fp32);
  ASSERT_THAT(report.status(), IsOk());
  EXPECT_TRUE(report->passed);
}

// The int8 y: the fixpipe's dequantization word per (batch, n) column.
TEST(TransposeEmulationTest, Int8OutputWithScale) {
  MatmulProblem p = Tbmm(24, 40, 256, 3, {1, 0, 2}, {0, 1, 2});
  p.dtype_c = DataType::kInt8;
  p.transpose.scale = {true, DataType::kInt64, {3 * 40}};
  absl::StatusOr<AccuracyReport> report = RunAndCheck(p);
  ASSERT_THAT(report.status(), IsOk());
  EXPECT_TRUE(report->passed);
  EXPECT_THAT(report->bound_rule, HasSubstr("int8 y"));
}

MatmulProblem Tqbmm(int64_t m, int64_t n, int64_t k, int64_t batch, DataType x, DataType y) {
  MatmulProblem p;
  p.op = MatmulOp::kTransposeQuantBatchMatMul;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_b = x;
  p.dtype_c = y;
  p.transpose.perm_x1 = {1, 0, 2};
  p.transpose.perm_x2 = {0, 1, 2};
  p.transpose.perm_y = {1, 0, 2};
  p.transpose.batch = batch;
  return p;
}

// FP8: per-token x1 scale [m] times per-channel x2 scale [n] on the vector
// cores.
TEST(TransposeEmulationTest, Fp8PerTokenPerChannel) {
  MatmulProblem p = Tqbmm(40, 128, 512, 3, DataType::kFloat8E4M3, DataType::kBFloat16);
  p.dtype_b = DataType::kFloat8E5M2;
  p.quant.pertoken = {true, DataType::kFloat32, {40}};
  p.quant.scale = {true, DataType::kFloat32, {128}};
  absl::StatusOr<AccuracyReport> report = RunAndCheck(p);
  ASSERT_THAT(report.status(), IsOk());
  EXPECT_TRUE(report->passed);
  EXPECT_THAT(report->bound_rule, HasSubstr("vector_epilogue"));
}

// MXFP8 with either x2 layout, the x1 scale [m, batch, g, 2] read through
// perm_x1.
TEST(TransposeEmulationTest, MxFp8BothX2Perms) {
  for (const bool transposed : {false, true}) {
    MatmulProblem p = Tqbmm(35, 72, 192, 4, DataType::kFloat8E4M3, DataType::kFloat16);
    const int64_t g = tiling::transpose::MxScalePairs(192);
    p.quant.pertoken = {true, DataType::kFloat8E8M0, {35, 4, g, 2}};
    if (transposed) {
      p.transpose.perm_x2 = {0, 2, 1};
      p.quant.scale = {true, DataType::kFloat8E8M0, {4, 72, g, 2}};
    } else {
      p.quant.scale = {true, DataType::kFloat8E8M0, {4, g, 72, 2}};
    }
    p.quant.group_size_k = 32;
    absl::StatusOr<AccuracyReport> report = RunAndCheck(p);
    ASSERT_THAT(report.status(), IsOk()) << transposed;
    EXPECT_TRUE(report->passed) << transposed;
    EXPECT_THAT(report->bound_rule, HasSubstr("mx")) << transposed;
  }
}

// HIFP8: x2's uint64 scale on the fixpipe; x1's optional scale is not read.
TEST(TransposeEmulationTest, HiFp8Fixpipe) {
  MatmulProblem p = Tqbmm(30, 64, 256, 2, DataType::kHiFloat8, DataType::kFloat16);
  p.transpose.perm_x2 = {0, 2, 1};
  p.quant.scale = {true, DataType::kUint64, {64}};
  p.quant.pertoken = {true, DataType::kUint64, {1}};
  absl::StatusOr<AccuracyReport> report = RunAndCheck(p);
  ASSERT_THAT(report.status(), IsOk());
  EXPECT_TRUE(report->passed);
  EXPECT_THAT(report->bound_rule, HasSubstr("fixpipe"));
  // A hifloat8 y is not among QuantBatchMatmulV3's modelled outputs.
  p.dtype_c = DataType::kHiFloat8;
  EXPECT_THAT(RunAndCheck(p).status(), StatusIs(absl::StatusCode::kUnimplemented));
}

TEST(TransposeEmulationTest, BatchZeroHasNothingToRun) {
  EXPECT_THAT(RunAndCheck(Tbmm(16, 32, 64, 0, {1, 0, 2}, {0, 1, 2})).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty output")));
}

// C is bit-identical for any thread count.
TEST(TransposeEmulationTest, ThreadCountDoesNotChangeC) {
  const MatmulProblem p = Tbmm(96, 64, 64, 5, {1, 0, 2}, {0, 2, 1});
  EmulationResult one, four;
  ASSERT_THAT(RunAndCheck(p, 3, &one, 1).status(), IsOk());
  ASSERT_THAT(RunAndCheck(p, 3, &four, 4).status(), IsOk());
  EXPECT_EQ(one.c.bytes, four.c.bytes);
  EXPECT_EQ(one.stats.total_cycles, four.stats.total_cycles);
}

// The strided transfers cost what they cost: with the whole K in one L1
// stage, a [batch, m, k] x1 tile is one contiguous run and a [m, batch, k]
// one a run per row, so its MTE2 is busier; a y whose rows start off a
// 32-byte boundary costs FIXPIPE its unaligned-row cycles.
TEST(TransposeEmulationTest, StridedTransfersCostMore) {
  EmulationResult contiguous, strided;
  ASSERT_THAT(RunAndCheck(Tbmm(256, 256, 128, 8, {0, 1, 2}, {0, 1, 2}), 1, &contiguous).status(),
              IsOk());
  ASSERT_THAT(RunAndCheck(Tbmm(256, 256, 128, 8, {1, 0, 2}, {0, 1, 2}), 1, &strided).status(),
              IsOk());
  const int mte2 = static_cast<int>(Pipe::kMte2);
  EXPECT_GT(strided.stats.pipe_busy_cycles[mte2], contiguous.stats.pipe_busy_cycles[mte2]);
  // n = 24 float16: each batch's y rows sit 48 bytes into a 32-byte-aligned
  // pitch for odd batches only; n = 32 keeps every row aligned.
  EmulationResult aligned, unaligned;
  ASSERT_THAT(RunAndCheck(Tbmm(64, 32, 64, 4, {1, 0, 2}, {0, 1, 2}), 1, &aligned).status(), IsOk());
  ASSERT_THAT(RunAndCheck(Tbmm(64, 24, 64, 4, {1, 0, 2}, {0, 1, 2}), 1, &unaligned).status(),
              IsOk());
  const int fixpipe = static_cast<int>(Pipe::kFixpipe);
  EXPECT_GT(unaligned.stats.pipe_busy_cycles[fixpipe], aligned.stats.pipe_busy_cycles[fixpipe]);
}

}  // namespace
}  // namespace npu::emu
