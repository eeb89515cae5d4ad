#include "server/tiling/strategies/fused_data_parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::testing::HasSubstr;

// Expected words are CANN's own answers for the same problems (DAV_3510,
// 32 AIC / 64 AIV, the 950's buffers).

MatmulProblem Fused(FusedOp op, int64_t m, int64_t n, int64_t k,
                    DataType dtype = DataType::kFloat16) {
  MatmulProblem p = Problem(m, n, k, dtype);
  p.op = MatmulOp::kFusedMatMul;
  p.fused.op = op;
  return p;
}

TilingPlan Decide(const MatmulProblem& p) {
  absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(p, Chip950());
  EXPECT_THAT(d, IsOk());
  return d.ok() ? d->plan : TilingPlan{};
}

TEST(FusedDataParallelStrategyTest, OneToOneFixpipeIsWrittenOnTheFly) {
  // MatMulV3 chooses ND_FIXPIPE_1_1 here; the fused key says ON_THE_FLY and
  // the data keep MatMulV3's plan.
  const TilingPlan fused = Decide(Fused(FusedOp::kRelu, 4096, 1000, 128));
  const TilingPlan mm = Decide(Problem(4096, 1000, 128));
  EXPECT_EQ(mm.key.Encode(), 0x100002u);
  EXPECT_EQ(fused.strategy, "BASIC_ASWT_INHERITED_FROM_MMV3");
  EXPECT_EQ(fused.key.Encode(), 0x5000001u);
  EXPECT_EQ(fused.kernel_type, KernelType::kAicOnly);
  EXPECT_EQ(fused.data.RawWords(), mm.data.RawWords());
}

TEST(FusedDataParallelStrategyTest, SplitKModelNeverReachesTheKey) {
  // MatMulV3: BASIC_SPLIT_K (0x6002); FusedMatMul: BASIC, same words.
  const MatmulProblem fp32 = Fused(FusedOp::kNone, 256, 256, 65536, DataType::kFloat32);
  const TilingPlan fused = Decide(fp32);
  const TilingPlan mm = Decide(Problem(256, 256, 65536, DataType::kFloat32));
  EXPECT_EQ(mm.key.Encode(), 0x6002u);
  EXPECT_EQ(fused.key.Encode(), 0x1u);
  EXPECT_EQ(
      fused.data.RawWords(),
      (std::vector<uint32_t>{32, 256, 256, 65536, 64, 32,         512, 64, 32, 128,   65536, 1,
                             1,  1,   1,   0,     0,  0x02020200, 0,   64, 1,  65536, 0}));
}

TEST(FusedDataParallelStrategyTest, AddWithNarrowNWidensBlocksAroundResidentB) {
  MatmulProblem add = Fused(FusedOp::kAdd, 20000, 17, 1280);
  add.trans_b = true;
  const TilingPlan plan = Decide(add);
  EXPECT_EQ(plan.key.Encode(), 0x1020021u);  // B_FULL_LOAD, ADD
  EXPECT_EQ(plan.block_dim, 20u);
  EXPECT_EQ(plan.kernel_type, KernelType::kMixed1To2);
  EXPECT_EQ(
      plan.data.RawWords(),
      (std::vector<uint32_t>{20, 20000, 17, 1280, 1024, 32,         64, 1024, 32, 16,   1280, 1,
                             1,  1,     1,  0,    0,    0x02020200, 0,  1024, 1,  1280, 0}));
}

TEST(FusedDataParallelStrategyTest, GeluWithNarrowNNeedsAnOutputWorkspace) {
  const TilingPlan plan = Decide(Fused(FusedOp::kGeluErf, 4096, 8, 256));
  EXPECT_EQ(plan.key.Encode(), 0x3000001u);
  EXPECT_EQ(plan.block_dim, 8u);
  EXPECT_EQ(plan.workspace_bytes, 20u * 1024 * 1024 + 4096 * 8 * 4);
  EXPECT_EQ(plan.data.RawWords(),
            (std::vector<uint32_t>{8, 4096, 8, 256, 512, 16,         128, 512, 16, 32,  256, 1,
                                   1, 1,    1, 0,   0,   0x02020200, 0,   512, 1,  256, 0}));
}

TEST(FusedDataParallelStrategyTest, WidenSmallNBlocksSpreadsTheTailOverM) {
  // 4096 x 32 add: 4 tiles of 1024 x 32 on 32 cores, no tail round.
  const MatmulProblem add = Fused(FusedOp::kAdd, 4096, 32, 1024);
  CubeRunState s;
  WidenSmallNBlocks(add, DeriveFacts(add), Chip950(), s);
  EXPECT_EQ(s.base_m, 1024u);
  EXPECT_EQ(s.base_n, 32u);
  EXPECT_EQ(s.base_k, 16u);
  EXPECT_EQ(s.l0c_db, 2u);
  EXPECT_EQ(s.used_core_num, 4u);
  EXPECT_EQ(s.tail_m_cnt, 1u);
  // 70 tiles on 32 cores leave a tail of 6: M splits 5 ways (6*5 <= 32);
  // N stays whole (32/2 = 16 columns would be narrower than 32).
  const MatmulProblem tall = Fused(FusedOp::kAdd, 70 * 1024, 32, 1024);
  CubeRunState t;
  WidenSmallNBlocks(tall, DeriveFacts(tall), Chip950(), t);
  EXPECT_EQ(t.used_core_num, 32u);
  EXPECT_EQ(t.tail_m_cnt, 5u);
  EXPECT_EQ(t.tail_n_cnt, 1u);
  // A block of 1024 x 48 overflows half of L0C: the blocks stay as they were.
  const MatmulProblem wide = Fused(FusedOp::kAdd, 4096, 48, 1024);
  CubeRunState u;
  WidenSmallNBlocks(wide, DeriveFacts(wide), Chip950(), u);
  EXPECT_EQ(u.base_m, CubeRunState{}.base_m);
}

// CANN's batch context (FusedMatMul is always in it) moves 2-D plans away
// from MatMulV3's: the full-load balance block, the tail-less balance rate,
// the 512-byte K unit.
TEST(FusedDataParallelStrategyTest, BatchContextBoundsTheResidentABlockByBuffersOnly) {
  const TilingPlan fused = Decide(Fused(FusedOp::kNone, 64, 65536, 2048));
  EXPECT_EQ(fused.key.Encode(), 0x10001u);
  EXPECT_EQ(fused.data.RawWords(),
            (std::vector<uint32_t>{32, 64, 65536, 2048, 64, 256,        128, 64, 256, 64,   2048, 1,
                                   1,  1,  1,     0,    0,  0x02020400, 2,   64, 1,   2048, 0}));
  EXPECT_NE(Decide(Problem(64, 65536, 2048)).data.RawWords(), fused.data.RawWords());
}

TEST(FusedDataParallelStrategyTest, BatchContextSkipsTheTailRefinedBalance) {
  const TilingPlan fused = Decide(Fused(FusedOp::kNone, 512, 5120, 437, DataType::kFloat32));
  EXPECT_EQ(fused.key.Encode(), 0x1u);
  EXPECT_EQ(fused.data.RawWords(),
            (std::vector<uint32_t>{32, 512, 5120, 437, 256, 176,        128, 256, 176, 32,  437, 1,
                                   1,  1,   1,    0,   0,   0x02010200, 0,   256, 1,   437, 0}));
  EXPECT_NE(Decide(Problem(512, 5120, 437, DataType::kFloat32)).data.RawWords(),
            fused.data.RawWords());
}

TEST(FusedDataParallelStrategyTest, BatchContextBoundsTheResidentBBlockByBuffersOnly) {
  const TilingPlan fused = Decide(Fused(FusedOp::kNone, 131072, 32, 1058));
  EXPECT_EQ(fused.key.Encode(), 0x20001u);
  EXPECT_EQ(
      fused.data.RawWords(),
      (std::vector<uint32_t>{32, 131072, 32, 1058, 256, 32,         128, 256, 32, 64,   1058, 1,
                             1,  1,      1,  0,    0,   0x02020400, 0,   256, 1,  1058, 0}));
}

TEST(FusedDataParallelStrategyTest, NotCapable) {
  FusedDataParallelStrategy strategy;
  const MatmulProblem gelu = Fused(FusedOp::kGeluTanh, 512, 512, 512);
  Capability c = strategy.IsCapable(gelu, DeriveFacts(gelu), Chip950(28, 50));
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("aiv=2*aic"));
  // "" and relu run on the cube alone.
  const MatmulProblem relu = Fused(FusedOp::kRelu, 512, 512, 512);
  EXPECT_TRUE(strategy.IsCapable(relu, DeriveFacts(relu), Chip950(28, 50)).ok);
  MatmulProblem batched = Fused(FusedOp::kNone, 512, 512, 512);
  batched.batch.a = batched.batch.b = {2};
  c = strategy.IsCapable(batched, DeriveFacts(batched), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("batch-axis of y"));
  MatmulProblem nz = Fused(FusedOp::kNone, 512, 512, 512);
  nz.format_b = Format::kFractalNz;
  EXPECT_FALSE(strategy.IsCapable(nz, DeriveFacts(nz), Chip950()).ok);
}

}  // namespace
}  // namespace npu::tiling
