// Tests of server/tiling/block_heuristics.cc, the cube-side steps that the Stream-K, swizzled
// data-parallel and batched strategies share. The small rules are checked on values worked out by
// hand from the rule; the search (ResetBase, RebalanceBlock, SplitTailRound, the fixpipe choice)
// on MatMulV3 golden cases of CANN's own unit test whose plans take its blocks unchanged, against
// the words CANN's test expects.
#include "server/tiling/block_heuristics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/testing/problems.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Problem;

ChipSpec Ascend950() {
  absl::StatusOr<ChipSpec> chip = FindPlatform(kDefaultPlatform);
  EXPECT_TRUE(chip.ok());
  return *chip;
}

class BlockHeuristicsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The figures below are worked out for the 950PR's buffers.
    ASSERT_EQ(chip_.aic_num, 32u);
    ASSERT_EQ(chip_.aiv_num, 64u);
    ASSERT_EQ(chip_.l1_bytes, 524288u);
    ASSERT_EQ(chip_.l0a_bytes, 65536u);
    ASSERT_EQ(chip_.l0c_bytes, 262144u);
  }
  ChipSpec chip_ = Ascend950();
};

TEST_F(BlockHeuristicsTest, CannBaseKTakesTheWholeKWhenItFitsTheL0aHalf) {
  // fp16 256x256: 65536 / 2 / 2 bytes / 256 = 64 elements of K per half.
  const MatmulProblem p = Problem(512, 512, 48);
  EXPECT_EQ(CannBaseK(p, DeriveFacts(p), chip_, 256, 256), 48u);
  const MatmulProblem q = Problem(512, 512, 50);  // aligned up to 64, still fits
  EXPECT_EQ(CannBaseK(q, DeriveFacts(q), chip_, 256, 256), 64u);
}

TEST_F(BlockHeuristicsTest, CannBaseKAlignsALongKTo256Bytes) {
  const MatmulProblem p = Problem(4096, 4096, 4096);
  const ProblemFacts facts = DeriveFacts(p);
  // 128x128: 128 elements = 256 bytes fit, a 256-byte multiple.
  EXPECT_EQ(CannBaseK(p, facts, chip_, 128, 128), 128u);
  // 96x96: 170 elements fit; the largest 256-byte (128-element) multiple is 128.
  EXPECT_EQ(CannBaseK(p, facts, chip_, 96, 96), 128u);
  // 256x256: 64 elements (128 bytes) are less than 256 bytes: the largest of 128/64/32/16.
  EXPECT_EQ(CannBaseK(p, facts, chip_, 256, 256), 64u);
}

TEST_F(BlockHeuristicsTest, CannBaseKOfATransposedAloneAlignsTo16Elements) {
  MatmulProblem p = Problem(4096, 4096, 4096);
  p.trans_a = true;
  // 96x96: 170 elements fit, floored to a multiple of 16.
  EXPECT_EQ(CannBaseK(p, DeriveFacts(p), chip_, 96, 96), 160u);
  p.trans_b = true;  // both transposed: the 256-byte rule again
  EXPECT_EQ(CannBaseK(p, DeriveFacts(p), chip_, 96, 96), 128u);
}

TEST_F(BlockHeuristicsTest, CannBaseKOfFp32AndOfATinyL0a) {
  const MatmulProblem fp32 = Problem(4096, 4096, 4096, DataType::kFloat32);
  // 65536 / 2 / 4 bytes / 256 = 32 elements (128 bytes).
  EXPECT_EQ(CannBaseK(fp32, DeriveFacts(fp32), chip_, 256, 256), 32u);
  ChipSpec tiny = chip_;
  tiny.l0a_bytes = 4096;  // 4 elements of fp16 K at 256 rows: not even 16
  const MatmulProblem p = Problem(4096, 4096, 4096);
  EXPECT_EQ(CannBaseK(p, DeriveFacts(p), tiny, 256, 256), 0u);
}

TEST_F(BlockHeuristicsTest, L0cDoubleBuffersWhenTwoFp32BlocksFit) {
  EXPECT_EQ(L0cDoubleBuffer(chip_, 256, 256), 1u);  // 2 * 256 KiB > 256 KiB
  EXPECT_EQ(L0cDoubleBuffer(chip_, 128, 256), 2u);  // exactly 256 KiB
  EXPECT_EQ(L0cDoubleBuffer(chip_, 144, 256), 1u);
}

TEST_F(BlockHeuristicsTest, Fp32SplitKNeedsFp32NdOperandsAndKOfAtLeast2048) {
  MatmulProblem p = Problem(1024, 1024, 2048, DataType::kFloat32);
  EXPECT_TRUE(UsesFp32SplitK(p, DeriveFacts(p)));
  p.k = 2047;
  EXPECT_FALSE(UsesFp32SplitK(p, DeriveFacts(p)));
  p.k = 8192;
  p.hf32 = true;
  EXPECT_FALSE(UsesFp32SplitK(p, DeriveFacts(p)));
  const MatmulProblem fp16 = Problem(1024, 1024, 8192);
  EXPECT_FALSE(UsesFp32SplitK(fp16, DeriveFacts(fp16)));
}

TEST_F(BlockHeuristicsTest, StreamedL1StagesSplitL1BetweenDoubleBufferedAAndB) {
  MatmulProblem p = Problem(4096, 4096, 8192);
  CubeRunState state;
  state.base_m = state.base_n = 256;
  state.base_k = 64;
  // 524288 / 2 / ((256 + 256) * 64) / 2 bytes = 4 slices per stage.
  ASSERT_TRUE(StageStreamedL1(p, DeriveFacts(p), chip_, state));
  EXPECT_EQ(state.step_ka, 4u);
  EXPECT_EQ(state.step_kb, 4u);
  EXPECT_EQ(state.depth_a1, 8u);
  EXPECT_EQ(state.depth_b1, 8u);
  // A bias keeps 1 KiB of L1: (524288 - 1024) / 2 / 32768 / 2 = 3 (floored).
  p.has_bias = true;
  ASSERT_TRUE(StageStreamedL1(p, DeriveFacts(p), chip_, state));
  EXPECT_EQ(state.step_ka, 3u);
  ChipSpec tiny = chip_;
  tiny.l1_bytes = 65536;  // not one slice of each, twice
  CubeRunState untouched = state;
  EXPECT_FALSE(StageStreamedL1(p, DeriveFacts(p), tiny, untouched));
  EXPECT_EQ(untouched.step_ka, 3u);
}

TEST_F(BlockHeuristicsTest, TailRoundSplitsFillTheIdleCores) {
  const MatmulProblem p = Problem(1536, 1536, 1024);
  CubeRunState state;
  state.base_m = state.base_n = 256;
  // 6 x 6 = 36 blocks: a tail round of 4 on 32 cores. M pieces grow first, N after each:
  // (2,1) -> (2,2) -> (3,2) -> (4,2); 5 x 2 x 4 = 40 pieces would not fit.
  SplitTailRound(p, DeriveFacts(p), chip_, state);
  EXPECT_EQ(state.tail_m_cnt, 4u);
  EXPECT_EQ(state.tail_n_cnt, 2u);
  // 5 x 5 = 25 blocks: one round, nothing to split.
  const MatmulProblem whole = Problem(1280, 1280, 1024);
  SplitTailRound(whole, DeriveFacts(whole), chip_, state);
  EXPECT_EQ(state.tail_m_cnt, 1u);
  EXPECT_EQ(state.tail_n_cnt, 1u);
}

TEST_F(BlockHeuristicsTest, FixpipeOutputGoesThroughTheVectorCoresOnlyWhenItIsTheBound) {
  CubeRunState state;
  state.single_core_m = state.single_core_n = 256;
  // Short K, tall M, several rounds, rows of 2000 bytes (not a multiple of 128).
  MatmulProblem p = Problem(8192, 1000, 128);
  EXPECT_EQ(ChooseFixpipeOutput(p, DeriveFacts(p), chip_, state), L0cToOut::kNdFixpipe1To1);
  MatmulProblem fp32 = Problem(8192, 1000, 128, DataType::kFloat32);
  EXPECT_EQ(ChooseFixpipeOutput(fp32, DeriveFacts(fp32), chip_, state), L0cToOut::kNdFixpipe1To2);
  p.n = 1024;  // 2048-byte rows are aligned
  EXPECT_EQ(ChooseFixpipeOutput(p, DeriveFacts(p), chip_, state), L0cToOut::kOnTheFly);
  p = Problem(8192, 1000, 512);  // K too long
  EXPECT_EQ(ChooseFixpipeOutput(p, DeriveFacts(p), chip_, state), L0cToOut::kOnTheFly);
  ChipSpec odd = chip_;
  odd.aiv_num = 32;  // the AIV-assisted output needs two vector cores per cube core
  p = Problem(8192, 1000, 128);
  EXPECT_EQ(ChooseFixpipeOutput(p, DeriveFacts(p), odd, state), L0cToOut::kOnTheFly);
}

// A MatMulV3 golden case whose plan (BASIC, no full load, no bias) keeps the searched blocks:
// the problem and what CANN's unit test expects of them.
struct SearchCase {
  const char* name;  // the case of tests/data/cann950/cases.json
  int64_t m, n, k;
  DataType dtype;
  bool trans_a, trans_b;
  uint64_t base_m, base_n, base_k, tail_m_cnt, tail_n_cnt;
  L0cToOut out;
};

class BlockSearchTest : public BlockHeuristicsTest,
                        public ::testing::WithParamInterface<SearchCase> {};

TEST_P(BlockSearchTest, SearchGivesCannsBlocks) {
  const SearchCase& c = GetParam();
  MatmulProblem p = Problem(c.m, c.n, c.k, c.dtype);
  p.trans_a = c.trans_a;
  p.trans_b = c.trans_b;
  const ProblemFacts facts = DeriveFacts(p);
  CubeRunState state;
  ResetBase(facts, chip_, state);
  RebalanceBlock(p, facts, chip_, state);
  SplitTailRound(p, facts, chip_, state);
  EXPECT_EQ(state.base_m, c.base_m);
  EXPECT_EQ(state.base_n, c.base_n);
  EXPECT_EQ(state.base_k, c.base_k);
  EXPECT_EQ(state.tail_m_cnt, c.tail_m_cnt);
  EXPECT_EQ(state.tail_n_cnt, c.tail_n_cnt);
  EXPECT_EQ(ChooseFixpipeOutput(p, facts, chip_, state), c.out);
}

INSTANTIATE_TEST_SUITE_P(
    Golden, BlockSearchTest,
    ::testing::Values(SearchCase{"MatMulV3_950_fixpipe_opti_01", 1024, 4090, 128,
                                 DataType::kFloat16, false, true, 256, 256, 64, 1, 1,
                                 L0cToOut::kNdFixpipe1To1},
                      SearchCase{"MatMulV3_950_fixpipe_opti_02", 10256, 720, 32, DataType::kFloat32,
                                 false, false, 224, 256, 32, 3, 1, L0cToOut::kNdFixpipe1To2},
                      SearchCase{"MatMulV3_950_abl1_full_load_04", 304, 3152, 112,
                                 DataType::kFloat16, false, true, 160, 208, 64, 1, 1,
                                 L0cToOut::kOnTheFly},
                      SearchCase{"MatMulV3_950_bl1_full_load_26", 560, 80, 953, DataType::kFloat16,
                                 false, true, 64, 32, 256, 1, 1, L0cToOut::kOnTheFly}),
    [](const ::testing::TestParamInfo<SearchCase>& info) {
      std::string name = info.param.name;
      return name.substr(name.rfind("950_") + 4);
    });

}  // namespace
}  // namespace npu::tiling
