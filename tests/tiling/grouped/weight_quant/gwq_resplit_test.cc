// The N tail re-split of GroupedMatmul's weight-quant kernel
// (server/tiling/grouped/weight_quant/gwq_resplit.h): when it runs, each of
// its three branches on a worked example, and over a sweep of N and core
// counts the invariants its blocks keep (they cover N, stay in [128, 256]
// and are C0-aligned for an NZ weight).
#include "server/tiling/grouped/weight_quant/gwq_resplit.h"

#include <gtest/gtest.h>

namespace npu::tiling::grouped::weight_quant {
namespace {

// A split-M problem whose re-split runs: a transposed ND float16 x weight
// (C0 16), `n` columns over `aic` cores.
GwqFacts Facts(uint64_t n, uint32_t aic, uint32_t groups = 1, bool nz = false) {
  GwqFacts f;
  f.aic_num = aic;
  f.aiv_num = 2 * aic;
  f.x = DataType::kFloat16;
  f.weight = f.weight_input = DataType::kInt8;
  f.trans_b = !nz;
  f.weight_nz = nz;
  f.n = f.n_ori = n;
  f.k = 1024;
  f.m = 256;
  f.group_num = groups;
  return f;
}

TEST(GwqResplitTest, OffForListsAndNonTransposedNdAndTransposedA16W4PerGroup) {
  GwqFacts f = Facts(4096, 32);
  EXPECT_TRUE(GwqTailResplitEnabled(f));
  GwqFacts lists = f;
  lists.single_x = lists.single_weight = lists.single_y = false;
  EXPECT_FALSE(GwqTailResplitEnabled(lists));
  GwqFacts nd = f;
  nd.trans_b = false;
  EXPECT_FALSE(GwqTailResplitEnabled(nd));
  GwqFacts per_group = f;
  per_group.a16w4_nd = true;
  per_group.group_size = 128;
  EXPECT_FALSE(GwqTailResplitEnabled(per_group));
  absl::StatusOr<GwqResplit> r = GwqCalcResplit(nd);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->cube_blocks_n, 0u);
  EXPECT_EQ(r->main_block_size, 0u);
}

TEST(GwqResplitTest, WholeRoundsOfMainBlocks) {
  absl::StatusOr<GwqResplit> r = GwqCalcResplit(Facts(3 * 32 * 256, 32));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->main_block_size, 256u);
  EXPECT_EQ(r->main_block_count, 3u);
  EXPECT_EQ(r->first_count, 0);
  EXPECT_EQ(r->cube_blocks_n, 32u);
}

TEST(GwqResplitTest, TailAboveOneRoundIsCutInTwiceTheCores) {
  // 20000 = 1 round of 8192 + a tail of 11808 > 8192: 64 blocks of 184 / 185.
  absl::StatusOr<GwqResplit> r = GwqCalcResplit(Facts(20000, 32));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->main_block_count, 1u);
  EXPECT_EQ(r->first_size, 184);
  EXPECT_EQ(r->second_size, 185);
  EXPECT_EQ(r->second_count, 11808 % 64);
  EXPECT_EQ(r->first_count, 64 - 11808 % 64);
}

TEST(GwqResplitTest, NzTailIsCutInWholeC0s) {
  // int8 x: C0 32. 4352 columns = 136 C0s on 32 cores: 24 blocks of 4, 8 of 5.
  GwqFacts f = Facts(4352, 32, 2, true);
  f.x = DataType::kInt8;
  absl::StatusOr<GwqResplit> r = GwqCalcResplit(f);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->main_block_count, 0u);
  EXPECT_EQ(r->first_size, 128);
  EXPECT_EQ(r->second_size, 160);
  EXPECT_EQ(r->first_count, 24);
  EXPECT_EQ(r->second_count, 8);
}

TEST(GwqResplitTest, NarrowNWithEnoughGroupsFillsTheCoresWithEvenBlocks) {
  // 1000 columns, 4 blocks of 256 at most; 8 groups x 4 >= 32 cores.
  absl::StatusOr<GwqResplit> r = GwqCalcResplit(Facts(1000, 32, 8));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first_size, 256);  // 250 aligned to C0 16
  EXPECT_EQ(r->first_count, 4);
  EXPECT_EQ(r->second_count, 0);
  EXPECT_EQ(r->cube_blocks_n, 4u);
}

TEST(GwqResplitTest, NarrowNWithFewGroupsLeavesCoresIdle) {
  // 1000 columns, 1 group: 7 blocks of 142 / 143 on 7 of the 32 cores.
  absl::StatusOr<GwqResplit> r = GwqCalcResplit(Facts(1000, 32, 1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->cube_blocks_n, 7u);
  EXPECT_EQ(r->first_size, 142);
  EXPECT_EQ(r->second_size, 143);
  EXPECT_EQ(r->second_count, 1000 % 7);
  EXPECT_EQ(r->first_count, 7 - 1000 % 7);
}

TEST(GwqResplitTest, NonTransposedNzNMustBeAMultipleOfC0) {
  GwqFacts f = Facts(1000, 32, 1, true);
  f.x = DataType::kInt8;  // C0 32
  EXPECT_EQ(GwqCalcResplit(f).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GwqResplitTest, C0IsOneBlockOfX) {
  EXPECT_EQ(GwqC0(DataType::kFloat16), 16u);
  EXPECT_EQ(GwqC0(DataType::kInt8), 32u);
  EXPECT_EQ(GwqC0(DataType::kFloat8E4M3), 32u);
  EXPECT_EQ(GwqC0(DataType::kFloat32), 8u);
  EXPECT_EQ(GwqC0(DataType::kInt64), 4u);
}

// Over N up to 64 rounds of 256 on 1-64 cores, ND and NZ: the blocks cover
// N exactly (the whole-core branches) and each block of a tail lies in
// [128, 256] for N >= 128 (CANN refuses any other, and none arises).
TEST(GwqResplitTest, BlocksCoverNAndStayInRange) {
  for (const bool nz : {false, true}) {
    for (uint32_t aic : {1u, 2u, 3u, 7u, 8u, 20u, 24u, 32u, 48u, 64u}) {
      for (uint64_t n = nz ? 32 : 1; n <= 64 * 256; n += nz ? 32 : 7) {
        for (uint32_t groups : {1u, 64u}) {
          GwqFacts f = Facts(n, aic, groups, nz);
          f.x = DataType::kInt8;  // C0 32
          absl::StatusOr<GwqResplit> r = GwqCalcResplit(f);
          ASSERT_TRUE(r.ok()) << "n=" << n << " aic=" << aic << ": " << r.status();
          const uint64_t covered = r->main_block_count * r->main_block_size * aic +
                                   uint64_t{r->first_size} * r->first_count +
                                   uint64_t{r->second_size} * r->second_count;
          // Every core takes a block (main rounds, or a tail over all of
          // them) when N is more than 128 per core or whole rounds.
          const bool whole_cores =
              n > uint64_t{aic} * kGwqBaseNMin || n % (uint64_t{aic} * 256) == 0;
          if (whole_cores) {
            EXPECT_EQ(covered, n) << "n=" << n << " aic=" << aic << ": " << r->detail;
          } else {
            EXPECT_GE(covered, n) << "n=" << n << " aic=" << aic << ": " << r->detail;
          }
          if (n >= kGwqBaseNMin && r->first_count > 0) {
            EXPECT_GE(r->first_size, kGwqBaseNMin);
            EXPECT_LE(r->first_size, kGwqBaseN);
          }
          if (nz) {
            EXPECT_EQ(r->first_size % 32, 0) << "n=" << n;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace npu::tiling::grouped::weight_quant
