// TransposeBatchMatMul's and TransposeQuantBatchMatMul's BASE: the keys of
// every perm, batch split and precision mode, the decode shape's rebalanced
// block, hf32 and the INT8 output, the MXFP8 scale factors, CANN's faults
// (a batch of 0 on the decode shape; an L1 smaller than one stage) and the
// advisor's fixed-block plans. Expected words are CANN's
// (transpose_batch_mat_mul_asw_tiling.cpp and
// transpose_quant_batch_mat_mul_asw_tiling.cpp), checked against its
// compiled host tiling.
#include "server/tiling/strategies/transpose_batch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "server/tiling/cann_fault.h"
#include "server/tiling/custom_plans.h"
#include "server/tiling/transpose/transpose_parse.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::DecideBuiltin;
using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

MatmulProblem Tbmm(int64_t m, int64_t n, int64_t k, int64_t batch,
                   std::vector<int64_t> perm_x1 = {1, 0, 2},
                   std::vector<int64_t> perm_x2 = {0, 1, 2}, DataType dtype = DataType::kFloat16) {
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

MatmulProblem Tqbmm(int64_t m, int64_t n, int64_t k, int64_t batch, DataType x, DataType y) {
  MatmulProblem p = Tbmm(m, n, k, batch);
  p.op = MatmulOp::kTransposeQuantBatchMatMul;
  p.dtype_a = p.dtype_b = x;
  p.dtype_c = y;
  return p;
}

MatmulProblem MxFp8(int64_t m, int64_t n, int64_t k, int64_t batch) {
  MatmulProblem p = Tqbmm(m, n, k, batch, DataType::kFloat8E4M3, DataType::kBFloat16);
  const int64_t g = transpose::MxScalePairs(k);
  p.quant.pertoken = {true, DataType::kFloat8E8M0, {m, batch, g, 2}};
  p.quant.scale = {true, DataType::kFloat8E8M0, {batch, g, n, 2}};
  p.quant.group_size_k = 32;
  return p;
}

TEST(TransposeBatchTest, KeysOfEveryPermAndSplit) {
  struct Case {
    std::vector<int64_t> x1, x2;
    int64_t split;
    uint64_t key;
  };
  for (const Case& c :
       {Case{{0, 1, 2}, {0, 1, 2}, 1, 0x2000}, Case{{1, 0, 2}, {0, 1, 2}, 1, 0x2001},
        Case{{0, 1, 2}, {0, 2, 1}, 1, 0x2010}, Case{{1, 0, 2}, {0, 2, 1}, 1, 0x2011},
        Case{{1, 0, 2}, {0, 2, 1}, 2, 0x2111}, Case{{0, 1, 2}, {0, 1, 2}, 4, 0x2100}}) {
    MatmulProblem p = Tbmm(64, 256, 128, 8, c.x1, c.x2);
    p.transpose.batch_split_factor = c.split;
    absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
    ASSERT_THAT(d, IsOk());
    EXPECT_EQ(d->plan.strategy, "BASE");
    EXPECT_EQ(d->plan.key.Encode(), c.key);
    EXPECT_EQ(d->plan.block_dim, 32u);
    EXPECT_EQ(d->plan.workspace_bytes, 20971520u);
  }
}

// m <= 16, n = 1024, k = 4096 with fewer batches than cores: the block is
// rebalanced across the cores (16 x 256 here); with B transposed CANN's
// rebalance keeps 256 x 256.
TEST(TransposeBatchTest, DecodeShapeRebalancesTheBlock) {
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Tbmm(16, 1024, 4096, 8));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.Encode(), 8193u);
  EXPECT_THAT(d->plan.data.RawWords(),
              ElementsAreArray({32, 16, 1024, 4096, 4096,     16, 256,    4096,  16, 256, 64, 8, 8,
                                1,  1,  0,    0,    0,        0,  393216, 16384, 0,  1,   1,  1, 1,
                                4,  4,  0,    0,    2,        2,  1,      0,     0,  0,   0,  0, 0,
                                0,  0,  0,    0,    0,        0,  0,      0,     0,  0,   0,  1, 1,
                                1,  1,  1,    0,    0,        0,  4,      0,     8,  8,   8,  1, 1,
                                1,  1,  1,    1,    1,        1,  1,      1,     8,  8,   8,  0, 1,
                                1,  16, 256,  256,  16843264, 16, 1,      0,     1,  1,   4,  4}));
  d = DecideBuiltin(Tbmm(16, 1024, 4096, 8, {1, 0, 2}, {0, 2, 1}));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.Encode(), 8209u);
  EXPECT_EQ(d->plan.data.RawWords()[8], 256u);  // baseM
  EXPECT_EQ(d->plan.data.RawWords()[9], 256u);  // baseN
}

// CANN's load balance divides the core count by the batch: with a batch of 0
// its host process dies; the engine names the division.
TEST(TransposeBatchTest, DecodeShapeWithNoBatchIsCannsDivisionByZero) {
  const absl::StatusOr<TilingDecision> d = DecideBuiltin(Tbmm(16, 1024, 4096, 0));
  EXPECT_THAT(d.status(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                   HasSubstr("BaseLoadBalance divides the AI core count by the "
                                             "batch, which is 0")));
  EXPECT_TRUE(IsCannFault(d.status()));
  // Elsewhere a batch of 0 gets a plan, as from CANN.
  EXPECT_THAT(DecideBuiltin(Tbmm(32, 1024, 4096, 0)), IsOk());
}

TEST(TransposeBatchTest, Int8OutputAndHf32WithSplit) {
  MatmulProblem int8 = Tbmm(32, 512, 128, 8, {0, 1, 2}, {0, 2, 1});
  int8.dtype_c = DataType::kInt8;
  int8.transpose.scale = {true, DataType::kInt64, {8 * 512}};
  absl::StatusOr<TilingDecision> d = DecideBuiltin(int8);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.Encode(), 8208u);
  EXPECT_THAT(
      d->plan.data.RawWords(),
      ElementsAreArray({32, 32, 512, 128, 128,   256,  256, 128,      256, 256, 64, 4, 4, 1, 1,
                        0,  0,  0,   0,   12288, 2048, 0,   1,        1,   1,   1,  2, 2, 0, 0,
                        2,  2,  1,   0,   0,     0,    0,   0,        0,   0,   0,  0, 0, 0, 0,
                        0,  0,  0,   0,   0,     1,    1,   1,        1,   1,   0,  0, 0, 4, 0,
                        8,  8,  8,   1,   1,     1,    1,   1,        1,   1,   1,  1, 1, 8, 8,
                        8,  0,  1,   1,   32,    256,  128, 16843264, 256, 1,   0,  1, 1, 4, 4}));

  MatmulProblem hf32 = Tbmm(100, 300, 700, 6, {1, 0, 2}, {0, 1, 2}, DataType::kFloat32);
  hf32.hf32 = true;
  hf32.transpose.batch_split_factor = 3;
  d = DecideBuiltin(hf32);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.Encode(), 8449u);
  EXPECT_THAT(
      d->plan.data.RawWords(),
      ElementsAreArray(
          {32, 100,    300,   700, 700, 256, 256, 700, 256, 256, 32,       8,   8, 1, 1, 0, 0, 0,
           0,  176128, 16384, 0,   1,   1,   1,   1,   4,   4,   0,        0,   2, 2, 1, 0, 0, 0,
           0,  0,      0,     0,   0,   0,   0,   0,   0,   0,   0,        0,   0, 0, 1, 1, 1, 1,
           1,  0,      0,     1,   4,   0,   6,   6,   6,   1,   1,        1,   1, 1, 1, 1, 1, 1,
           1,  6,      6,     6,   0,   1,   3,   112, 256, 128, 16843265, 256, 1, 0, 1, 1, 4, 4}));
}

TEST(TransposeQuantBatchTest, MxFp8ScaleFactors) {
  absl::StatusOr<TilingDecision> d = DecideBuiltin(MxFp8(128, 512, 4096, 16));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.Encode(), 1025u);  // PERM_X1_1_0_2, MXFP8
  EXPECT_EQ(d->plan.workspace_bytes, 0u);
  // mxTypePara 0x01011010: scaleFactorA and scaleFactorB 16.
  EXPECT_THAT(
      d->plan.data.RawWords(),
      ElementsAreArray({32, 128, 512, 4096, 4096,     256, 256,    4096,  256, 256, 128,      4, 4,
                        1,  1,   0,   0,    0,        0,   327680, 16384, 0,   1,   1,        1, 1,
                        2,  2,   0,   0,    2,        2,   1,      0,     0,   0,   0,        0, 0,
                        0,  0,   0,   0,    0,        0,   0,      0,     0,   0,   16846864, 1, 1,
                        1,  1,   1,   0,    0,        0,   4,      0,     16,  16,  16,       1, 1,
                        1,  1,   1,   1,    1,        1,   1,      1,     16,  16,  16,       0, 1,
                        1,  128, 256, 256,  16843264, 256, 1,      0,     1,   1,   4,        4}));
}

TEST(TransposeQuantBatchTest, HiFp8AndFp8) {
  MatmulProblem hif8 = Tqbmm(128, 512, 4096, 16, DataType::kHiFloat8, DataType::kFloat16);
  hif8.transpose.perm_x2 = {0, 2, 1};
  hif8.quant.scale = {true, DataType::kUint64, {512}};
  hif8.quant.pertoken = {true, DataType::kUint64, {1}};
  absl::StatusOr<TilingDecision> d = DecideBuiltin(hif8);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.Encode(), 2065u);  // PERM_X1_1_0_2, PERM_X2_0_2_1, HIFP8
  EXPECT_THAT(d->plan.data.RawWords(),
              ElementsAreArray(
                  {32, 128, 512, 4096, 4096,   256,  256, 4096,     256, 256, 128, 4, 4, 1,  1,
                   0,  0,   0,   0,    393216, 8192, 0,   1,        1,   1,   1,   2, 2, 0,  0,
                   2,  2,   1,   0,    0,      0,    0,   0,        0,   0,   0,   0, 0, 0,  0,
                   0,  0,   0,   0,    0,      1,    1,   1,        1,   1,   0,   0, 0, 4,  0,
                   16, 16,  16,  1,    1,      1,    1,   1,        1,   1,   1,   1, 1, 16, 16,
                   16, 0,   1,   1,    128,    256,  256, 16843264, 256, 1,   0,   1, 1, 4,  4}));

  MatmulProblem fp8 = Tqbmm(128, 128, 512, 16, DataType::kFloat8E4M3, DataType::kBFloat16);
  fp8.dtype_b = DataType::kFloat8E5M2;
  fp8.quant.scale = {true, DataType::kFloat32, {128}};
  fp8.quant.pertoken = {true, DataType::kFloat32, {128}};
  d = DecideBuiltin(fp8);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.Encode(), 1u);
  EXPECT_THAT(
      d->plan.data.RawWords(),
      ElementsAreArray(
          {32, 128,   128,  512, 512, 256, 256, 512, 256, 256, 128,      8,   8, 1, 1, 0, 0, 0,
           0,  32768, 4096, 0,   1,   1,   1,   1,   4,   4,   0,        0,   2, 2, 1, 0, 0, 0,
           0,  0,     0,    0,   0,   0,   0,   0,   0,   0,   0,        0,   0, 0, 1, 1, 1, 1,
           1,  0,     0,    0,   4,   0,   16,  16,  16,  1,   1,        1,   1, 1, 1, 1, 1, 1,
           1,  16,    16,   16,  0,   1,   1,   128, 128, 512, 16843264, 256, 1, 0, 1, 1, 4, 4}));
  // The vector cores dequantize FP8: two per cube core or no strategy.
  EXPECT_THAT(DecideBuiltin(fp8, Chip950(32, 32)).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// On an L1 smaller than one stage of 256 x 256 x 128-byte blocks and their
// MX scales (67584 bytes) CANN's depth search never ends; the engine says
// so and ends the walk.
TEST(TransposeQuantBatchTest, SmallL1IsCannsNeverEndingSearch) {
  ChipSpec chip = Chip950();
  chip.l1_bytes = 65536;
  const absl::StatusOr<TilingDecision> d = DecideBuiltin(MxFp8(64, 256, 512, 4), chip);
  EXPECT_THAT(d.status(), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("never ends")));
  EXPECT_TRUE(IsCannFault(d.status()));
  chip.l1_bytes = 131072;
  EXPECT_THAT(DecideBuiltin(MxFp8(64, 256, 512, 4), chip), IsOk());
}

TEST(TransposePlanWithBlockTest, RunsTheOpsOwnStagingOnAnotherBlock) {
  const MatmulProblem p = Tbmm(64, 512, 128, 128);
  absl::StatusOr<TilingPlan> plan = TransposePlanWithBlock(p, Chip950(), 64, 256);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->strategy, "BASE");
  EXPECT_EQ(plan->key.Encode(), 8193u);
  const std::vector<uint32_t> words = plan->data.RawWords();
  EXPECT_EQ(words[8], 64u);   // baseM
  EXPECT_EQ(words[9], 256u);  // baseN
  // base_k: the largest multiple of 16 elements of which the block's longer
  // side fits half of L0A (32 KiB / 2 bytes / 256), at most K.
  EXPECT_EQ(words[10], 64u);

  plan = TransposePlanWithBlock(MxFp8(128, 512, 4096, 16), Chip950(), 128, 256);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->key.Encode(), 1025u);
  EXPECT_EQ(plan->data.RawWords()[8], 128u);

  EXPECT_THAT(TransposePlanWithBlock(p, Chip950(), 65536, 256).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no room")));
  MatmulProblem bmm = p;
  bmm.op = MatmulOp::kBatchMatMulV3;
  EXPECT_THAT(TransposePlanWithBlock(bmm, Chip950(), 64, 256).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace npu::tiling
