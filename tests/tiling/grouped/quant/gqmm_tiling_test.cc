// The block and L1 calculators of GroupedMatmul's two quant strategies
// (server/tiling/grouped/quant/gqmm_tiling.h): CANN's plans of named
// problems field by field, the refusals that depend on L1, and the
// problems on which CANN's own code divides by zero or never ends.
#include "server/tiling/grouped/quant/gqmm_tiling.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "server/tiling/cann_fault.h"
#include "server/tiling/grouped/quant/gqmm_parse.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling::grouped::quant {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

// A tensor list whose instances have `shapes` as origin and storage; the
// shapes live as long as the test binary.
GqmmTensor Tensor(GeType dtype, std::vector<std::vector<int64_t>> shapes) {
  static auto* const kShapes = new std::deque<std::vector<GroupedShape>>();
  std::vector<GroupedShape>& list = kShapes->emplace_back();
  for (auto& s : shapes) list.push_back({s, s});
  return {list, dtype, false};
}

// The unit tests' platform: 32 cores, L1 512 KiB, L0C 128 KiB.
constexpr GqmmPlatform kPlatform{32, 524288, 131072};

// MX x of `dtype` [m, k], weight [E, k, n], split M.
GqmmFacts MxSplitM(GeType dtype, int64_t m, int64_t k, int64_t n, int64_t e, bool trans_b) {
  const int64_t sk = (k + 63) / 64;
  GqmmRequest r;
  r.x = Tensor(dtype, {{m, k}});
  r.weight = Tensor(dtype, {trans_b ? std::vector<int64_t>{e, n, k} : std::vector<int64_t>{e, k, n}});
  r.scale = Tensor(GeType::kFloat8E8M0,
                   {trans_b ? std::vector<int64_t>{e, n, sk, 2} : std::vector<int64_t>{e, sk, n, 2}});
  r.per_token_scale = Tensor(GeType::kFloat8E8M0, {{m, sk, 2}});
  r.group_list = Tensor(GeType::kInt64, {{e}});
  r.y = Tensor(GeType::kFloat16, {{m, n}});
  r.transpose_weight = trans_b;
  r.split_item = 3;
  absl::StatusOr<GqmmFacts> f = ParseGroupedQuant(r, 32, 64);
  EXPECT_THAT(f, IsOk());
  return f.value_or(GqmmFacts{});
}

// int8 x [m, k] (x transposed for split K), weight [E, k, n], per-channel
// FLOAT scale and per-token scale, bf16 y.
GqmmFacts Int8(int64_t m, int64_t k, int64_t n, int64_t e, bool split_k = false) {
  GqmmRequest r;
  r.x = Tensor(GeType::kInt8, {split_k ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}});
  r.weight = Tensor(GeType::kInt8, {{e, k, n}});
  r.scale = Tensor(GeType::kFloat, {{e, n}});
  r.per_token_scale = Tensor(GeType::kFloat, {{m}});
  r.group_list = Tensor(GeType::kInt64, {{e}});
  r.y = Tensor(GeType::kBFloat16, {{m, n}});
  r.group_type = split_k ? 2 : 0;
  r.transpose_x = split_k;
  r.split_item = 3;
  absl::StatusOr<GqmmFacts> f = ParseGroupedQuant(r, 32, 64);
  EXPECT_THAT(f, IsOk());
  return f.value_or(GqmmFacts{});
}

TEST(GqmmTilingTest, MxBasicApiTransposedWeightUnalignedK) {
  // CANN's golden mxfp8_basic_api_nd_transw_unaligned_k: 16 rows of x make
  // a 64 KiB load only at a deep stage of A (32 base blocks of k).
  const GqmmFacts f = MxSplitM(GeType::kFloat8E4M3, 16, 7177, 6751, 2, true);
  absl::StatusOr<GqmmBlock> b = MxBasicApiTiling(f, kPlatform);
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(b->base_m, 16u);
  EXPECT_EQ(b->base_n, 256u);
  EXPECT_EQ(b->base_k, 128u);
  EXPECT_EQ(b->step_ka * b->base_k, 4096u);  // kAL1
  EXPECT_EQ(b->step_kb * b->base_k, 512u);   // kBL1
  EXPECT_EQ(MxScaleKL1(f, *b), 4096u);
  EXPECT_EQ(b->db_l0c, 2u);
}

TEST(GqmmTilingTest, MxBasicApiSplitK) {
  // CANN's golden mxfp8_basic_api_splitk_transx_success: [18, .., 2] scales
  // of k / 64 + E.
  GqmmRequest r;
  r.x = Tensor(GeType::kFloat8E4M3, {{1024, 128}});
  r.weight = Tensor(GeType::kFloat8E4M3, {{2, 1024, 768}});
  r.scale = Tensor(GeType::kFloat8E8M0, {{18, 768, 2}});
  r.per_token_scale = Tensor(GeType::kFloat8E8M0, {{18, 128, 2}});
  r.group_list = Tensor(GeType::kInt64, {{2}});
  r.y = Tensor(GeType::kBFloat16, {{128, 768}});
  r.group_type = 2;
  r.transpose_x = true;
  r.split_item = 3;
  absl::StatusOr<GqmmFacts> f = ParseGroupedQuant(r, 32, 64);
  ASSERT_THAT(f, IsOk());
  absl::StatusOr<GqmmBlock> b = MxBasicApiTiling(*f, kPlatform);
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(b->base_m, 128u);
  EXPECT_EQ(b->base_n, 256u);
  EXPECT_EQ(b->base_k, 128u);
  EXPECT_EQ(b->step_ka * b->base_k, 512u);
  EXPECT_EQ(b->step_kb * b->base_k, 256u);
  EXPECT_EQ(MxScaleKL1(*f, *b), 1024u);
  EXPECT_EQ(b->db_l0c, 1u);  // 128 x 256 floats twice pass L0C's 128 KiB
}

TEST(GqmmTilingTest, MxBasicApiScalesThatDoNotFitAreRefused) {
  // On 128 KiB of L1 the two stages of A and B take it all, and no stage of
  // scales is left: CANN's scale factor would be 0 and it refuses.
  const GqmmFacts f = MxSplitM(GeType::kFloat8E4M3, 256, 1024, 512, 2, false);
  EXPECT_THAT(MxBasicApiTiling(f, {32, 131072, 131072}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("the MX scales do not fit")));
  EXPECT_THAT(MxBasicApiTiling(f, {32, 100000, 131072}), IsOk());
  EXPECT_THAT(MxBasicApiTiling(f, {32, 66000, 131072}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("L1 space overflow in CalL1Depth")));
}

TEST(GqmmTilingTest, GeneralInt8PerChannel) {
  const GqmmFacts f = Int8(256, 1024, 512, 2);
  absl::StatusOr<GqmmBlock> b = GeneralTiling(f, kPlatform);
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(b->base_m, 256u);
  EXPECT_EQ(b->base_n, 256u);
  EXPECT_EQ(b->base_k, 128u);
  EXPECT_EQ(b->depth_a1, 8u);
  EXPECT_EQ(b->depth_b1, 8u);
  EXPECT_EQ(b->step_ka, 4u);
  EXPECT_EQ(b->step_kb, 4u);
  EXPECT_EQ(b->single_core_k, 1024u);
  EXPECT_EQ(b->db_l0c, 1u);
  EXPECT_EQ(GeneralTiling(f, {32, 524288, 524288})->db_l0c, 2u);
}

TEST(GqmmTilingTest, GeneralPerGroupPerBlockCapsStepK) {
  // Per-group x with per-block weights: 128-element blocks, step K at most 4.
  GqmmFacts f = Int8(512, 8192, 1024, 2);
  f.a = f.b = GeType::kFloat8E4M3;
  f.a_mode = kModePerGroup;
  f.b_mode = kModePerBlock;
  absl::StatusOr<GqmmBlock> b = GeneralTiling(f, kPlatform);
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(b->base_n, 128u);  // m fills more than one 128-row block
  EXPECT_EQ(b->base_k, 128u);
  EXPECT_EQ(b->step_ka, 4u);
  EXPECT_EQ(b->step_kb, 4u);
}

TEST(GqmmTilingTest, GeneralSplitKWithKZeroKeepsUnitDepths) {
  const GqmmFacts f = Int8(16, 0, 512, 2, /*split_k=*/true);
  absl::StatusOr<GqmmBlock> b = GeneralTiling(f, kPlatform);
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(b->base_k, 0u);
  EXPECT_EQ(b->depth_a1, 1u);
  EXPECT_EQ(b->step_ka, 1u);
}

TEST(GqmmTilingTest, SplitKWithNoRowsDividesByZero) {
  // m = 0 makes A's stage empty; CANN divides the L1 left by it.
  absl::StatusOr<GqmmBlock> b = GeneralTiling(Int8(0, 1024, 512, 2, true), kPlatform);
  EXPECT_THAT(b, StatusIs(absl::StatusCode::kFailedPrecondition,
                          HasSubstr("divides by zero on this problem (GetDepthA1B1 divides")));
  EXPECT_TRUE(IsCannFault(b.status()));
}

TEST(GqmmTilingTest, SplitKWithNoRowsOrColumnsNeverEnds) {
  // m = n = 0: every stage is empty, and CANN's depth doubling never stops.
  absl::StatusOr<GqmmBlock> b = GeneralTiling(Int8(0, 1024, 0, 2, true), kPlatform);
  EXPECT_THAT(b, StatusIs(absl::StatusCode::kFailedPrecondition,
                          HasSubstr("never ends on this problem (GetDepthA1B1 doubles")));
  EXPECT_TRUE(IsCannFault(b.status()));
}

TEST(GqmmTilingTest, MxBasicApiWithNoRowsDividesByZero) {
  // m = 0 with MX split K: the bound of A's scale factor divides 64 KiB by
  // its empty block of scales.
  GqmmFacts f = MxSplitM(GeType::kFloat8E4M3, 256, 1024, 512, 2, false);
  f.m = 0;
  f.group_type = kGroupSplitK;
  f.trans_a = true;
  absl::StatusOr<GqmmBlock> b = MxBasicApiTiling(f, kPlatform);
  EXPECT_THAT(b, StatusIs(absl::StatusCode::kFailedPrecondition,
                          HasSubstr("divides 65536 bytes by the bytes of one block of x's MX "
                                    "scales, which is 0")));
}

TEST(GqmmTilingTest, MxScaleFactorsPackIntoMxTypePara) {
  GqmmBlock b;
  b.scale_factor_a = 3;
  b.scale_factor_b = 5;
  EXPECT_EQ(MxTypePara(b), 0x01010503u);
  b.scale_factor_b = 0;  // out of [1, 127]: both become 1
  EXPECT_EQ(MxTypePara(b), 0x01010101u);
}

}  // namespace
}  // namespace npu::tiling::grouped::quant
