// GroupedMatmul's op-level rules (server/tiling/grouped/gmm_path.h) and its
// no-quant path (server/tiling/grouped/no_quant/): the path CANN's dispatch
// picks, every refusal named by field and rule, CANN's divisions by zero and
// wrapped plans, and the plan's key, kernel type, words and launch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/custom_plans.h"
#include "server/tiling/grouped/gmm_path.h"
#include "server/tiling/grouped/no_quant/no_quant_tiling.h"
#include "server/tiling/problem_key.h"
#include "server/tiling/tiling_data.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

GroupedTensorList ListOf(DataType dtype, std::vector<std::vector<int64_t>> shapes,
                         Format format = Format::kNd) {
  GroupedTensorList list;
  list.dtype = dtype;
  list.format = format;
  for (std::vector<int64_t>& shape : shapes) list.instances.push_back({shape, shape});
  return list;
}

// Split M, s-s-s: x [m, k], weight [groups, k, n], y [m, n], group_list [groups].
MatmulProblem SplitM(int64_t m, int64_t k, int64_t n, int64_t groups,
                     DataType dtype = DataType::kFloat16) {
  MatmulProblem p;
  p.op = MatmulOp::kGroupedMatmul;
  GroupedInputs& g = p.grouped;
  g[GroupedTensor::kX] = ListOf(dtype, {{m, k}});
  g[GroupedTensor::kWeight] = ListOf(dtype, {{groups, k, n}});
  g[GroupedTensor::kY] = ListOf(dtype, {{m, n}});
  g[GroupedTensor::kGroupList] = ListOf(DataType::kInt64, {{groups}});
  g.group_type = kGroupTypeSplitM;
  g.split_item = 3;
  g.tuning_config = {0};
  return p;
}

ChipSpec Chip() { return *FindPlatform(kDefaultPlatform); }

absl::StatusOr<TilingDecision> Decide(const MatmulProblem& p, const ChipSpec& chip = Chip()) {
  return MakeBuiltinRegistry().Decide(p, chip);
}

TEST(GmmPathTest, DispatchFollowsXAndWeightDtypes) {
  const auto path = [](DataType x, DataType w) {
    GroupedInputs g;
    g[GroupedTensor::kX].dtype = x;
    g[GroupedTensor::kWeight].dtype = w;
    return grouped::PathOf(g);
  };
  using grouped::GmmPath;
  EXPECT_EQ(path(DataType::kFloat16, DataType::kFloat16), GmmPath::kNoQuant);
  EXPECT_EQ(path(DataType::kBFloat16, DataType::kBFloat16), GmmPath::kNoQuant);
  EXPECT_EQ(path(DataType::kFloat32, DataType::kFloat32), GmmPath::kNoQuant);
  EXPECT_EQ(path(DataType::kInt8, DataType::kInt8), GmmPath::kQuant);
  EXPECT_EQ(path(DataType::kFloat8E4M3, DataType::kHiFloat8), GmmPath::kQuant);
  EXPECT_EQ(path(DataType::kInt4, DataType::kInt4), GmmPath::kQuant);
  EXPECT_EQ(path(DataType::kFloat4E1M2, DataType::kFloat4E2M1), GmmPath::kQuant);
  // A 4-bit weight under an 8-bit x is not two 1-byte types: weight-quant.
  EXPECT_EQ(path(DataType::kInt8, DataType::kInt4), GmmPath::kWeightQuant);
  EXPECT_EQ(path(DataType::kFloat8E4M3, DataType::kFloat4E2M1), GmmPath::kWeightQuant);
  EXPECT_EQ(path(DataType::kBFloat16, DataType::kInt4), GmmPath::kWeightQuant);
  EXPECT_EQ(path(DataType::kFloat16, DataType::kBFloat16), GmmPath::kWeightQuant);
  EXPECT_EQ(path(DataType::kInt32, DataType::kInt32), GmmPath::kPreArch35);
}

TEST(GmmPathTest, OpLevelChecksNameTheField) {
  MatmulProblem p = SplitM(256, 1024, 512, 4);
  p.grouped[GroupedTensor::kWeight].instances.clear();
  EXPECT_THAT(Decide(p), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("field grouped.weight has no instance")));
  p = SplitM(256, 1024, 512, 4);
  p.grouped[GroupedTensor::kX].instances.clear();
  EXPECT_THAT(Decide(p), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("field grouped.x has no instance")));
  p = SplitM(256, 1024, 512, 4);
  p.m = 256;
  EXPECT_THAT(Decide(p), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("field m is not read by GroupedMatmul")));
  p = SplitM(256, 1024, 512, 4, DataType::kInt32);
  EXPECT_THAT(Decide(p), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pre-arch35")));
  p = SplitM(256, 1024, 512, 4);
  p.grouped[GroupedTensor::kX].instances[0].storage = {256, -1};
  EXPECT_THAT(Decide(p), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("grouped.x[0].storage=[256, -1] has a dim outside")));
  p = SplitM(256, 1024, 512, 4);
  p.grouped[GroupedTensor::kBias].instances.resize(1025);
  EXPECT_THAT(Decide(p), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("grouped.bias has 1025 instances; at most 1024")));
  // The grouped group on another operator.
  MatmulProblem other;
  other.m = other.n = other.k = 16;
  other.grouped.split_item = 3;
  EXPECT_THAT(MakeBuiltinRegistry().Decide(other, Chip()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field grouped is only valid for GroupedMatmul")));
}

TEST(GmmNoQuantTest, RefusalsNameTheFieldAndTheRule) {
  struct Case {
    const char* name;
    void (*edit)(MatmulProblem&);
    const char* message;
  };
  const Case kCases[] = {
      {"sparse group list", [](MatmulProblem& p) { p.grouped.group_list_type = 2; },
       "field grouped.group_list_type=2 (sparse)"},
      {"1-D x",
       [](MatmulProblem& p) { p.grouped[GroupedTensor::kX] = ListOf(DataType::kFloat16, {{256}}); },
       "must each have at least 2 dims"},
      {"group type 1", [](MatmulProblem& p) { p.grouped.group_type = 1; },
       "field grouped.group_type=1 must be -1 (no split), 0 (split M) or 2 (split K)"},
      {"split M single-single-multi", [](MatmulProblem& p) { p.grouped.split_item = 0; },
       "x, weight, y = single-single-multi is not a split M form"},
      {"split K single-multi-single",
       [](MatmulProblem& p) {
         p.grouped.group_type = kGroupTypeSplitK;
         p.grouped[GroupedTensor::kWeight] = ListOf(DataType::kFloat16, {{1024, 512}, {1024, 512}});
       },
       "x, weight, y = single-multi-single is not a split K form"},
      {"split K without group_list",
       [](MatmulProblem& p) {
         p.grouped.group_type = kGroupTypeSplitK;
         p.grouped[GroupedTensor::kGroupList].instances.clear();
       },
       "field grouped.group_list has no instance"},
      {"1025 groups",
       [](MatmulProblem& p) { p.grouped[GroupedTensor::kWeight].instances[0].origin[0] = 1025; },
       "the group count 1025 (s-s-s) must be in [1, 1024]"},
      {"K of 0", [](MatmulProblem& p) { p.grouped[GroupedTensor::kX].instances[0].storage[1] = 0; },
       "K of x is 0"},
      {"NZ weight with K off 32 bytes",
       [](MatmulProblem& p) {
         p.grouped[GroupedTensor::kWeight] =
             ListOf(DataType::kFloat16, {{4, 1000, 512}}, Format::kFractalNz);
       },
       "a FRACTAL_NZ weight's K and N must be multiples of 16"},
      {"an x of the list without K",
       [](MatmulProblem& p) {
         p.grouped.group_type = kGroupTypeNone;
         p.grouped.split_item = 0;
         p.grouped[GroupedTensor::kX] = ListOf(DataType::kFloat16, {{256, 1024}, {256}});
         p.grouped[GroupedTensor::kWeight] = ListOf(DataType::kFloat16, {{1024, 512}, {1024, 512}});
       },
       "field grouped.x[1].storage=[256] has 1 dims, but the no-quant path reads its dim 1"},
  };
  for (const Case& c : kCases) {
    MatmulProblem p = SplitM(256, 1024, 512, 4);
    c.edit(p);
    EXPECT_THAT(Decide(p), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.name;
  }
}

TEST(GmmNoQuantTest, CannsDivisionsByZeroAreFailedPreconditions) {
  // One group re-forms the block over the cores: an M or N of 0 makes a
  // block count of 0 that CANN divides by.
  for (const auto& [m, n, what] : {std::tuple{0, 512, "mCnt"}, std::tuple{256, 0, "nCnt"}}) {
    absl::StatusOr<TilingDecision> d = Decide(SplitM(m, 1024, n, 1));
    EXPECT_THAT(d, StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr(what)));
    EXPECT_TRUE(IsCannFault(d.status())) << d.status();
  }
  // Several groups of split M never re-form the block: CANN answers m = 0.
  EXPECT_TRUE(Decide(SplitM(0, 1024, 512, 4)).ok());
  // Split K with one group and K = 0: baseK 0 in the L1 depths.
  MatmulProblem k0 = SplitM(256, 0, 512, 1);
  k0.grouped.group_type = kGroupTypeSplitK;
  k0.grouped[GroupedTensor::kX] = ListOf(DataType::kFloat16, {{0, 256}});
  k0.grouped.transpose_x = true;
  absl::StatusOr<TilingDecision> d = Decide(k0);
  EXPECT_THAT(d, StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("baseK")));
  EXPECT_TRUE(IsCannFault(d.status()));
}

TEST(GmmNoQuantTest, SmallBuffersAreFailedPreconditions) {
  ChipSpec chip = Chip();
  chip.l1_bytes = 128 * 1024;  // below CANN's 256 KiB part for one operand
  EXPECT_THAT(Decide(SplitM(256, 1024, 512, 4), chip),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("wraps below zero, so CANN's plan has wrapped stepKa")));
  // One group recomputes its depths from the whole L1: no wrap.
  EXPECT_TRUE(Decide(SplitM(256, 1024, 512, 1), chip).ok());
  chip = Chip();
  chip.l0b_bytes = 8192;  // baseK = 4096 / 512 = 8, aligned down to 16: 0
  EXPECT_THAT(Decide(SplitM(256, 1024, 512, 4), chip),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("CANN's baseK")));
}

TEST(GmmNoQuantTest, PlanCarriesKeyKernelTypeAndWords) {
  MatmulProblem p = SplitM(256, 1024, 512, 4);
  p.grouped.transpose_weight = true;
  p.grouped[GroupedTensor::kWeight].instances[0] = {{4, 512, 1024}, {4, 512, 1024}};
  absl::StatusOr<TilingDecision> d = Decide(p);
  ASSERT_TRUE(d.ok()) << d.status();
  const TilingPlan& plan = d->plan;
  EXPECT_EQ(plan.strategy, "GROUPED_NO_QUANT");
  EXPECT_EQ(plan.key.layout, KeyLayout::kGroupedNoQuant);
  EXPECT_EQ(plan.key.Encode(), 1u);  // B_TRANS
  EXPECT_EQ(plan.kernel_type, KernelType::kAicOnly);
  EXPECT_EQ(plan.workspace_bytes, 32u);
  EXPECT_EQ(plan.block_dim, 32u);
  EXPECT_EQ(plan.data.struct_name(), "GMMNoQuantTilingData");
  EXPECT_EQ(plan.data.RawWords().size(), 62u);
  EXPECT_EQ(Get(plan.data, GmmNoQuantField::kGroupNum), 4u);
  EXPECT_EQ(Get(plan.data, GmmNoQuantCube(TCubeField::kN)), 512u);
  // x transposed: the kernel mixes one AIV per AIC.
  p.grouped.transpose_x = true;
  p.grouped[GroupedTensor::kX].instances[0] = {{1024, 256}, {1024, 256}};
  d = Decide(p);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->plan.key.Encode(), 5u);
  EXPECT_EQ(d->plan.kernel_type, KernelType::kMixed1To1);
  // Multi forms read as no split: groupType -1.
  MatmulProblem multi = SplitM(128, 256, 512, 1);
  multi.grouped.group_type = kGroupTypeNone;
  multi.grouped.split_item = 0;
  multi.grouped[GroupedTensor::kX] = ListOf(DataType::kBFloat16, {{128, 256}, {64, 512}});
  multi.grouped[GroupedTensor::kWeight] = ListOf(DataType::kBFloat16, {{256, 512}, {512, 384}});
  multi.grouped[GroupedTensor::kY] = ListOf(DataType::kBFloat16, {{128, 512}, {64, 384}});
  multi.grouped[GroupedTensor::kGroupList].instances.clear();
  d = Decide(multi);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Get(d->plan.data, GmmNoQuantField::kGroupType), 0xFFFFFFFFu);
  EXPECT_EQ(Get(d->plan.data, GmmNoQuantCube(TCubeField::kM)), 128u);
  EXPECT_EQ(Get(d->plan.data, GmmNoQuantCube(TCubeField::kKa)), 512u);
  EXPECT_EQ(Get(d->plan.data, GmmNoQuantCube(TCubeField::kN)), 512u);
}

TEST(GmmNoQuantTest, OneGroupSpreadsItsBlocksOverTheCores) {
  // 256 x 512 is two 256 x 256 blocks; re-formed, it fills the 32 cores.
  absl::StatusOr<grouped::NoQuantTiling> t =
      grouped::TileNoQuant(SplitM(256, 1024, 512, 1).grouped, Chip());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->formulated);
  EXPECT_EQ(t->used_core_num, 32u);
  EXPECT_EQ(t->base_m * t->base_n * 32 >= 256u * 512u, true);
  // Several groups of split M keep the default block and every core.
  t = grouped::TileNoQuant(SplitM(256, 1024, 512, 8).grouped, Chip());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->formulated);
  EXPECT_EQ(t->base_m, 256u);
  EXPECT_EQ(t->base_n, 256u);
  EXPECT_EQ(t->used_core_num, 32u);
}

TEST(GmmNoQuantTest, TheHistogramChangesNeitherThePlanNorTheCacheKey) {
  MatmulProblem even = SplitM(256, 1024, 512, 4);
  MatmulProblem skewed = even;
  skewed.grouped.token_histogram = {250, 2, 2, 2};
  std::string even_key, skewed_key;
  AppendProblemKey(even, even_key);
  AppendProblemKey(skewed, skewed_key);
  EXPECT_EQ(even_key, skewed_key);
  EXPECT_TRUE(even.grouped.SameTiling(skewed.grouped));
  EXPECT_NE(even.grouped, skewed.grouped);
  absl::StatusOr<TilingDecision> a = Decide(even), b = Decide(skewed);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->plan.data.RawWords(), b->plan.data.RawWords());
  skewed.grouped.token_histogram = {-1};
  EXPECT_THAT(Decide(skewed), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("grouped.token_histogram has an entry -1")));
}

// The advisor's re-blocked plans: CANN's own block gives CANN's words
// (several groups of split M, one group re-formed over the cores); another
// block derives baseK, the core count and the L1 steps by the same rules;
// a block the kernel cannot hold is refused naming it.
TEST(GmmNoQuantTest, ReblockedPlansFollowCannsRules) {
  for (const MatmulProblem& p : {SplitM(4096, 7168, 2048, 8), SplitM(8192, 4096, 1408, 64),
                                 SplitM(256, 1024, 512, 1), SplitM(300, 96, 200, 6)}) {
    absl::StatusOr<TilingDecision> cann = Decide(p);
    ASSERT_TRUE(cann.ok()) << cann.status();
    absl::StatusOr<TilingPlan> same =
        GroupedNoQuantPlanWithBlock(p, Chip(), cann->plan.block.base_m, cann->plan.block.base_n);
    ASSERT_TRUE(same.ok()) << same.status();
    EXPECT_EQ(same->data.RawWords(), cann->plan.data.RawWords())
        << cann->plan.block.base_m << "x" << cann->plan.block.base_n;
    EXPECT_EQ(same->key.Encode(), cann->plan.key.Encode());
    EXPECT_EQ(same->block_dim, cann->plan.block_dim);
  }
  const MatmulProblem p = SplitM(4096, 7168, 2048, 8);
  absl::StatusOr<TilingPlan> small = GroupedNoQuantPlanWithBlock(p, Chip(), 128, 256);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->block.base_m, 128u);
  EXPECT_EQ(small->block.base_n, 256u);
  EXPECT_EQ(small->block.base_k, 64u);  // L0B's double buffer at baseN 256, fp16
  EXPECT_EQ(Get(small->data, GmmNoQuantCube(TCubeField::kBaseM)), 128u);
  // Half of L1 less A's 256 KiB part for B, the smaller step a divisor.
  EXPECT_EQ(small->block.step_ka % small->block.step_kb == 0 ||
                small->block.step_kb % small->block.step_ka == 0,
            true);
  EXPECT_THAT(GroupedNoQuantPlanWithBlock(p, Chip(), 24, 256),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("block 24x256: baseM and baseN must be positive multiples of 16")));
  EXPECT_THAT(GroupedNoQuantPlanWithBlock(p, Chip(), 256, 512),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("l0c_bytes")));
  MatmulProblem quant = p;
  quant.grouped[GroupedTensor::kX].dtype = DataType::kInt8;
  quant.grouped[GroupedTensor::kWeight].dtype = DataType::kInt8;
  EXPECT_THAT(GroupedNoQuantPlanWithBlock(quant, Chip(), 128, 128),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no-quant path")));
  // CANN's own refusals come first.
  EXPECT_THAT(GroupedNoQuantPlanWithBlock(SplitM(4096, 64, 64, 1025), Chip(), 128, 128),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the group count 1025")));
}

}  // namespace
}  // namespace npu::tiling
