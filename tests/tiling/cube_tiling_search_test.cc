// Tests of server/tiling/cube_tiling_search.h: the high-level API's TCubeTiling
// search and the BatchMatMulV3TilingData built around it. The expected words
// are asc-devkit's MultiCoreMatmulTiling::GetTiling output for the same
// calls InitTCubeTilingData makes (checked against the compiled library).
#include "server/tiling/cube_tiling_search.h"

#include <array>
#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using Words = std::array<uint32_t, kCubeTilingWords>;

ChipSpec Chip(uint32_t aic, uint64_t l1, uint64_t l0c, uint64_t ub) {
  ChipSpec chip;
  chip.aic_num = aic;
  chip.l1_bytes = l1;
  chip.l0c_bytes = l0c;
  chip.ub_bytes = ub;
  return chip;
}

// The Ascend 950PR figures CANN's compile info reports (L1 512 KiB, L0C
// 256 KiB, UB 248 KiB).
ChipSpec Ascend950(uint32_t aic = 32) { return Chip(aic, 524288, 262144, 253952); }

CubeTilingSearchInput Input(DataType in, DataType out, int64_t m, int64_t n, int64_t k) {
  CubeTilingSearchInput input;
  input.a_dtype = in;
  input.b_dtype = in;
  input.c_dtype = out;
  input.m = m;
  input.n = n;
  input.k = k;
  return input;
}

Words Search(const CubeTilingSearchInput& input, const ChipSpec& chip) {
  absl::StatusOr<CubeTiling> tiling = SearchCubeTiling(input, chip);
  EXPECT_TRUE(tiling.ok()) << tiling.status();
  return tiling.ok() ? CubeTilingWords(*tiling) : Words{};
}

// The words after the 33rd are layout and batch words the callers never set:
// zero in every answer.
Words WithZeroTail(std::array<uint32_t, 33> head) {
  Words words{};
  for (size_t i = 0; i < head.size(); ++i) words[i] = head[i];
  return words;
}

TEST(CubeTilingSearchTest, Fp16SplitsCoresAndFillsL1) {
  const Words expected =
      WithZeroTail({24, 1024, 768,    512,    512, 128, 256, 512, 128, 256, 64, 8, 8, 1, 1, 0, 0,
                    0,  0,    393216, 131072, 0,   1,   1,   1,   1,   8,   8,  0, 0, 2, 2, 1});
  EXPECT_THAT(Search(Input(DataType::kFloat16, DataType::kFloat16, 1024, 768, 512), Ascend950()),
              ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, BiasLimitsTheNBlockAndTakesL1) {
  CubeTilingSearchInput input = Input(DataType::kBFloat16, DataType::kBFloat16, 96, 4000, 200);
  input.bias_dtype = DataType::kFloat32;
  input.trans_a = true;
  const Words expected =
      WithZeroTail({32, 96, 4000,   200,   200, 96, 125, 200, 96, 128, 128, 2, 2, 1, 1, 1, 0,
                    0,  0,  115200, 49152, 0,   1,  1,   1,   1,  2,   2,   0, 0, 2, 2, 1});
  EXPECT_THAT(Search(input, Ascend950()), ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, Fp32NzBAlignsPerCoreNAndEvenK) {
  CubeTilingSearchInput input = Input(DataType::kFloat32, DataType::kFloat32, 300, 500, 700);
  input.b_format = Format::kFractalNz;
  const Words expected =
      WithZeroTail({20, 300, 500,    700,   700, 31, 256, 700, 32, 256, 32, 22, 4, 1, 1, 0, 0,
                    1,  0,   221184, 32768, 0,   1,  1,   1,   1,  22,  2,  0,  0, 2, 2, 1});
  EXPECT_THAT(Search(input, Ascend950()), ElementsAreArray(expected));
}

// An 8-element fp32 K block: B's depth follows its N steps (AdjustFloatL1Factor).
TEST(CubeTilingSearchTest, Fp32EightElementKLoadsBOneStepAtATime) {
  const Words expected =
      WithZeroTail({32, 4000, 4000,  8,      8, 500, 1000, 8, 128, 256, 8, 4, 4, 4, 4, 0, 0,
                    0,  0,    49152, 131072, 0, 1,   1,    1, 1,   1,   1, 0, 0, 2, 2, 1});
  EXPECT_THAT(Search(Input(DataType::kFloat32, DataType::kFloat32, 4000, 4000, 8), Ascend950()),
              ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, Fp32BiasWithTransposedBAndEightElementK) {
  CubeTilingSearchInput input = Input(DataType::kFloat32, DataType::kFloat32, 2048, 2048, 8);
  input.bias_dtype = DataType::kFloat32;
  input.trans_a = true;
  input.trans_b = true;
  const Words expected =
      WithZeroTail({32, 2048, 2048,  8,      8, 256, 512, 8, 128, 256, 8, 2, 2, 2, 2, 1, 0,
                    0,  0,    25600, 131072, 0, 1,   1,   1, 1,   1,   1, 0, 0, 2, 2, 1});
  EXPECT_THAT(Search(input, Ascend950()), ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, MiniShapeStaysOnOneCore) {
  const Words expected =
      WithZeroTail({1, 32, 48,    64,   64, 32, 48, 64, 32, 48, 64, 1, 1, 1, 1, 0, 0,
                    0, 0,  10240, 6144, 0,  1,  1,  1,  1,  1,  1,  0, 0, 2, 2, 1});
  EXPECT_THAT(Search(Input(DataType::kFloat16, DataType::kFloat16, 32, 48, 64), Ascend950()),
              ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, SingleCoreKeepsTheWholeProblem) {
  CubeTilingSearchInput input = Input(DataType::kFloat16, DataType::kFloat16, 5000, 3000, 1000);
  input.bias_dtype = DataType::kFloat16;
  input.trans_b = true;
  const Words expected =
      WithZeroTail({1, 5000, 3000,   1000,   1000, 5000, 3000, 1000, 128, 256, 64, 4, 8, 1, 1, 1, 0,
                    0, 0,    328192, 131072, 0,    1,    1,    1,    1,   2,   4,  0, 0, 2, 2, 1});
  EXPECT_THAT(Search(input, Ascend950(1)), ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, BufferSpaceWithinTheDefaultsIsUsed) {
  CubeTilingSearchInput input = Input(DataType::kBFloat16, DataType::kFloat32, 2000, 900, 4000);
  input.b_format = Format::kFractalNz;
  input.trans_a = true;

  const Words expected =
      WithZeroTail({24, 2000, 900,   4000,   4000, 256, 384, 4000, 128, 256, 64, 2, 2, 1, 1, 0, 0,
                    0,  0,    98304, 131072, 0,    1,   1,   1,    1,   1,   1,  0, 0, 2, 2, 1});
  EXPECT_THAT(Search(input, Chip(24, 262144, 131072, 196608)), ElementsAreArray(expected));
}

// The 950's L1 exceeds the tiling object's default (512 KiB - 256), so
// SetBufferSpace stores nothing and the search runs on the defaults.
TEST(CubeTilingSearchTest, BufferSpaceBeyondTheDefaultsIsIgnored) {
  const CubeTilingSearchInput input = Input(DataType::kFloat16, DataType::kFloat16, 1024, 768, 512);
  EXPECT_EQ(Search(input, Ascend950()), Search(input, Chip(32, 524032, 131072, 196352)));
  EXPECT_NE(Search(input, Ascend950()), Search(input, Chip(32, 262144, 131072, 196352)));
}

TEST(CubeTilingSearchTest, FailsWhenNoL0BlockFits) {
  CubeTilingSearchInput input = Input(DataType::kFloat16, DataType::kFloat16, 1, 11849, 116);
  input.trans_b = true;
  const absl::StatusOr<CubeTiling> tiling = SearchCubeTiling(input, Chip(49, 178176, 12288, 19456));
  EXPECT_EQ(tiling.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(tiling.status().message()), HasSubstr("ml0/nl0/kl0 is zero"));
}

TEST(CubeTilingSearchTest, FailsWhenTheChosenDepthsOverflowL1) {
  const absl::StatusOr<CubeTiling> tiling = SearchCubeTiling(
      Input(DataType::kBFloat16, DataType::kBFloat16, 5, 5, 37793), Chip(44, 51200, 110592, 89088));
  EXPECT_EQ(tiling.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(tiling.status().message()), HasSubstr("65536/1024/0 bytes"));
}

// CANN's own search divides by zero here (the host process dies); ours fails.
TEST(CubeTilingSearchTest, FailsWhereCannDividesByZero) {
  CubeTilingSearchInput input = Input(DataType::kFloat32, DataType::kFloat32, 10404, 1, 20);
  input.trans_a = true;
  const absl::StatusOr<CubeTiling> tiling =
      SearchCubeTiling(input, Chip(10, 32768, 124928, 185344));
  EXPECT_EQ(tiling.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(tiling.status().message()), HasSubstr("divides by zero"));
}

TEST(CubeTilingSearchTest, FailsOnAnEmptyDimension) {
  const absl::StatusOr<CubeTiling> tiling =
      SearchCubeTiling(Input(DataType::kFloat16, DataType::kFloat16, 0, 5, 5), Ascend950());
  EXPECT_EQ(tiling.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(CubeTilingSearchTest, BatchTilingDataOverlaysThePlanOnTheSearch) {
  CubeTilingSearchInput input = Input(DataType::kFloat16, DataType::kFloat16, 1024, 768, 512);
  input.bias_dtype = DataType::kFloat16;
  const absl::StatusOr<CubeTiling> searched = SearchCubeTiling(input, Ascend950());
  ASSERT_TRUE(searched.ok()) << searched.status();

  HighLevelBatchPlan plan;
  plan.used_core_num = 32;
  plan.single_core_m = 1024;
  plan.single_core_n = 768;
  plan.single_core_k = 512;
  plan.base_m = 256;
  plan.base_n = 256;
  plan.base_k = 64;
  plan.depth_a1 = 16;
  plan.depth_b1 = 16;
  plan.step_m = 1;
  plan.step_n = 1;
  plan.step_ka = 8;
  plan.step_kb = 6;
  plan.iterate_order = 1;
  plan.iter_batch = 3;
  plan.mmad_param = 1;
  plan.l2_cache_disable = 2;
  plan.aic_num = 24;
  plan.batch_a = 4;
  plan.batch_b = 8;
  plan.batch_c = 32;
  plan.a_dims = {1, 1, 4, 1};
  plan.b_dims = {1, 1, 1, 8};
  plan.c_dims = {1, 1, 4, 8};
  plan.m = 1000;
  plan.n = 768;
  plan.slice_m = 256;
  plan.broadcast_axis_a = 3;
  const TilingData data = HighLevelBatchTilingData(*searched, plan);
  ASSERT_EQ(data.struct_name(), "BatchMatMulV3TilingData");
  const std::vector<uint32_t> words = data.RawWords();
  ASSERT_EQ(words.size(), 90u);
  using F = HighLevelBatchField;
  auto word = [&](F field) { return Get(data, field).value_or(~0ull); };
  // The plan replaces the search's split, blocks and depths ...
  EXPECT_EQ(word(F::kUsedCoreNum), 32u);
  EXPECT_EQ(words[0], 32u);
  EXPECT_EQ(word(F::kBaseM), 256u);
  EXPECT_EQ(word(F::kStepKb), 6u);
  EXPECT_EQ(word(F::kDbL0c), 0u);
  EXPECT_EQ(word(F::kBatchNum), 3u);
  // ... the search's own words survive.
  EXPECT_EQ(word(F::kM), 1024u);
  EXPECT_EQ(word(F::kIsBias), 1u);
  EXPECT_EQ(word(F::kShareL1Size), static_cast<uint32_t>(searched->share_l1_size));
  EXPECT_EQ(word(F::kShareL0cSize), static_cast<uint32_t>(searched->share_l0c_size));
  EXPECT_EQ(word(F::kDbL0a), 2u);
  // Derived words: the swizzle window (largest divisor of 24 not above 4.9),
  // L1 extents clipped to the aligned problem, kL1 of at most 4 K blocks.
  EXPECT_EQ(word(F::kAswWindowLen), 4u);
  EXPECT_EQ(word(F::kML1), 256u);
  EXPECT_EQ(word(F::kNL1), 256u);
  EXPECT_EQ(word(F::kKL1), 256u);
  EXPECT_EQ(word(F::kBatchSplitFactor), 1u);
  EXPECT_EQ(word(F::kIterBatch), 3u);
  EXPECT_EQ(word(F::kBBatchDim3), 8u);
  EXPECT_EQ(word(F::kCBatchDim2), 4u);
  // Word 82 packs mmadParam, l1BufferNum, ubDB and l0cDB (never set: 1).
  EXPECT_EQ(words[82], 0x01010201u);
  EXPECT_EQ(word(F::kSliceM), 256u);
  EXPECT_EQ(word(F::kBroadcastAxisA), 3u);
  EXPECT_EQ(word(F::kBroadcastAxisB), 4u);
}

TEST(CubeTilingSearchTest, BatchTilingDataClipsL1ExtentsToSmallProblems) {
  const absl::StatusOr<CubeTiling> searched =
      SearchCubeTiling(Input(DataType::kFloat16, DataType::kFloat16, 40, 20, 64), Ascend950());
  ASSERT_TRUE(searched.ok()) << searched.status();
  HighLevelBatchPlan plan;
  plan.base_m = 256;
  plan.base_n = 256;
  plan.base_k = 64;
  plan.step_m = 2;
  plan.step_n = 2;
  plan.step_ka = 1;
  plan.step_kb = 5;
  plan.m = 40;
  plan.n = 20;
  plan.aic_num = 32;
  const TilingData data = HighLevelBatchTilingData(*searched, plan);
  using F = HighLevelBatchField;
  EXPECT_EQ(Get(data, F::kML1), 48u);
  EXPECT_EQ(Get(data, F::kNL1), 32u);
  EXPECT_EQ(Get(data, F::kKL1), 64u);
  EXPECT_EQ(Get(data, F::kAswWindowLen), 4u);
}

}  // namespace
}  // namespace npu::tiling
