// GroupedMatmul's groups over the token histogram (server/tiling/grouped/
// gmm_groups.cc): the forms' sizes and blocks, the even spread and its
// note, and the refusals of a histogram that does not fit the problem.
#include "server/tiling/grouped/gmm_groups.h"

#include <gtest/gtest.h>

#include "tests/testing/grouped_problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling::grouped {
namespace {

using ::npu::testing::GroupedProblem;
using ::npu::testing::GroupedSpec;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

TEST(GmmGroupsTest, SplitMTakesTheHistogramsRowsAndTheWeightsExperts) {
  GroupedSpec spec;
  spec.groups = 4;
  spec.m = 100;
  spec.k = 32;
  spec.n = 48;
  spec.histogram = {10, 0, 60, 30};
  absl::StatusOr<GmmGroups> groups = GroupsOf(GroupedProblem(spec).grouped);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_EQ(groups->group_type, kGroupTypeSplitM);
  EXPECT_EQ(groups->source, HistogramSource::kGiven);
  EXPECT_EQ(groups->FormName(), "s-s-s");
  ASSERT_EQ(groups->groups.size(), 4u);
  const GmmGroup& g2 = groups->groups[2];
  EXPECT_EQ(g2.m, 60u);
  EXPECT_EQ(g2.k, 32u);
  EXPECT_EQ(g2.n, 48u);
  EXPECT_EQ(g2.c_row, 10u);
  EXPECT_EQ(g2.x_offset, 10u * 32);       // rows 10.. of x [100, 32]
  EXPECT_EQ(g2.w_offset, 2u * 32 * 48);   // expert 2 of weight [4, 32, 48]
  EXPECT_EQ(g2.y_offset, 10u * 48);       // rows 10.. of y [100, 48]
  EXPECT_FALSE(groups->groups[1].computed());
  EXPECT_EQ(groups->stacked_rows, 100u);
  EXPECT_EQ(groups->GroupOfRow(10), 2u);
  EXPECT_EQ(groups->GroupOfRow(9), 0u);
  EXPECT_EQ(groups->GroupOfRow(99), 3u);
}

TEST(GmmGroupsTest, WithoutAHistogramTheRowsAreSpreadEvenlyAndTheAnswerSaysSo) {
  GroupedSpec spec;
  spec.groups = 3;
  spec.m = 10;
  absl::StatusOr<GmmGroups> groups = GroupsOf(GroupedProblem(spec).grouped);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_EQ(groups->source, HistogramSource::kEven);
  EXPECT_EQ(groups->histogram, (std::vector<int64_t>{4, 3, 3}));
  EXPECT_THAT(groups->Describe(), HasSubstr("spread evenly"));
  EXPECT_THAT(groups->Describe(), HasSubstr("4,3,3"));
}

TEST(GmmGroupsTest, SplitKSplitsXsAndTheWeightsKAndWritesOneYPerGroup) {
  GroupedSpec spec;
  spec.group_type = kGroupTypeSplitK;
  spec.groups = 2;
  spec.m = 16;
  spec.k = 96;
  spec.n = 32;
  spec.histogram = {64, 32};
  absl::StatusOr<GmmGroups> groups = GroupsOf(GroupedProblem(spec).grouped);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_EQ(groups->group_type, kGroupTypeSplitK);
  const GmmGroup& g1 = groups->groups[1];
  EXPECT_EQ(g1.m, 16u);
  EXPECT_EQ(g1.k, 32u);
  EXPECT_EQ(g1.k_offset, 64u);
  EXPECT_EQ(g1.x_offset, 64u * 16);  // rows 64.. of x [96, 16]
  EXPECT_EQ(g1.w_offset, 64u * 32);  // rows 64.. of weight [96, 32]
  EXPECT_EQ(g1.y_offset, 16u * 32);  // y [2, 16, 32]
  EXPECT_EQ(g1.c_row, 16u);
}

TEST(GmmGroupsTest, ListsOfXAreNoSplitWithEachGroupsOwnShape) {
  GroupedSpec spec;
  spec.group_type = kGroupTypeNone;
  spec.groups = 3;
  spec.rows = {5, 0, 7};
  absl::StatusOr<GmmGroups> groups = GroupsOf(GroupedProblem(spec).grouped);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_EQ(groups->group_type, kGroupTypeNone);
  EXPECT_EQ(groups->FormName(), "m-m-m");
  EXPECT_EQ(groups->groups[2].m, 7u);
  EXPECT_EQ(groups->groups[2].x_index, 2u);
  EXPECT_EQ(groups->groups[2].x_offset, 0u);
  EXPECT_EQ(groups->source, HistogramSource::kNone);
}

// A FRACTAL_NZ weight given by its NZ shape (MX-A8W4's transposed (K1, N1,
// N0, K0)) reads as the matrix of its fractals; an NZ weight with an ND
// origin keeps its last two dims.
TEST(GmmGroupsTest, AnNzShapedWeightReadsAsItsFractalsMatrix) {
  GroupedSpec spec;
  spec.groups = 3;
  spec.m = 90;
  spec.trans_w = true;
  spec.weight_nz = true;
  GroupedInputs in = GroupedProblem(spec).grouped;
  // K 256, N 384: [E, K / 32, N / 16, 16, 32].
  in[GroupedTensor::kWeight].instances[0] = npu::testing::Shape({3, 8, 24, 16, 32});
  in[GroupedTensor::kX].instances[0] = npu::testing::Shape({90, 256});
  in[GroupedTensor::kY].instances[0] = npu::testing::Shape({90, 384});
  absl::StatusOr<GmmGroups> groups = GroupsOf(in);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_EQ(groups->groups[1].k, 256u);
  EXPECT_EQ(groups->groups[1].n, 384u);
  EXPECT_EQ(groups->groups[1].w_offset, 256u * 384);
  // Not transposed, one weight per expert: (N1, K1, K0, N0).
  in.transpose_weight = false;
  in[GroupedTensor::kWeight].instances.assign(3, npu::testing::Shape({24, 8, 32, 16}));
  groups = GroupsOf(in);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_EQ(groups->groups[2].k, 256u);
  EXPECT_EQ(groups->groups[2].n, 384u);
  EXPECT_EQ(groups->groups[2].w_index, 2u);
  // The ND origin of an NZ weight.
  GroupedSpec nd = spec;
  nd.k = 64;
  nd.n = 48;
  groups = GroupsOf(GroupedProblem(nd).grouped);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_EQ(groups->groups[0].k, 64u);
  EXPECT_EQ(groups->groups[0].n, 48u);
}

TEST(GmmGroupsTest, RefusesAHistogramOfAnotherLengthNamingTheField) {
  GroupedSpec spec;
  spec.groups = 4;
  spec.m = 100;
  spec.histogram = {50, 50, 0};
  EXPECT_THAT(GroupsOf(GroupedProblem(spec).grouped).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("grouped.token_histogram has 3 entries, but the problem has 4 "
                                 "groups")));
}

TEST(GmmGroupsTest, RefusesAHistogramThatDoesNotSumToTheSplitDim) {
  GroupedSpec spec;
  spec.groups = 2;
  spec.m = 100;
  spec.histogram = {50, 49};
  EXPECT_THAT(GroupsOf(GroupedProblem(spec).grouped).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("grouped.token_histogram sums to 99, but x has M = 100")));
  spec.group_type = kGroupTypeSplitK;
  spec.k = 64;
  spec.histogram = {32, 16};
  EXPECT_THAT(GroupsOf(GroupedProblem(spec).grouped).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("grouped.token_histogram sums to 48, but x has K = 64")));
}

TEST(GmmGroupsTest, RefusesAHistogramOfAProblemWithoutSplit) {
  GroupedSpec spec;
  spec.group_type = kGroupTypeNone;
  spec.groups = 2;
  MatmulProblem p = GroupedProblem(spec);
  p.grouped.token_histogram = {1, 2};
  EXPECT_THAT(GroupsOf(p.grouped).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("grouped.token_histogram is given, but the problem has no split")));
}

TEST(GmmGroupsTest, RefusesASplitWithoutGroupListAndASparseGroupList) {
  GroupedSpec spec;
  MatmulProblem p = GroupedProblem(spec);
  p.grouped[GroupedTensor::kGroupList].instances.clear();
  EXPECT_THAT(GroupsOf(p.grouped).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grouped.group_list")));
  p = GroupedProblem(spec);
  p.grouped.group_list_type = kGroupListSparse;
  EXPECT_THAT(GroupsOf(p.grouped).status(),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("group_list_type=2")));
}

TEST(GmmGroupsTest, RefusesAYThatIsNotTheGroupsOutput) {
  GroupedSpec spec;
  MatmulProblem p = GroupedProblem(spec);
  p.grouped[GroupedTensor::kY].instances[0] = ::npu::testing::Shape({spec.m, spec.n + 1});
  EXPECT_THAT(GroupsOf(p.grouped).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grouped.y[0]")));
}

TEST(GmmGroupsTest, EvenHistogramSpreadsTheRemainderOverTheFirstGroups) {
  EXPECT_EQ(EvenHistogram(7, 3), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(EvenHistogram(2, 4), (std::vector<int64_t>{1, 1, 0, 0}));
}

}  // namespace
}  // namespace npu::tiling::grouped
