// Tests of server/tiling/batch_shape.h: the slots, the broadcast, CANN's
// merge of A's batch into M and the operand batch each C batch reads.
#include "server/tiling/batch_shape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

MatmulProblem Batched(MatmulOp op) {
  MatmulProblem p = Problem(8, 8, 8);
  p.op = op;
  return p;
}

TEST(BatchShapeTest, SlotsAreRightAligned) {
  EXPECT_EQ(RightAligned({}), (BatchSlots{1, 1, 1, 1}));
  EXPECT_EQ(RightAligned({2, 3}), (BatchSlots{1, 1, 2, 3}));
  EXPECT_EQ(RightAligned({5, 2, 3, 4, 6}), (BatchSlots{2, 3, 4, 6}));  // the innermost four
  EXPECT_EQ(SlotProduct({1, 2, 3, 4}), 24);
  EXPECT_EQ(SlotsText({1, 1, 2, 3}), "[1,1,2,3]");
}

TEST(BatchShapeTest, OutputDimsKeepTheLargerRank) {
  MatmulProblem p = Batched(MatmulOp::kBatchMatMulV3);
  p.batch.a = {2, 1, 5};
  p.batch.b = {3, 1};
  EXPECT_EQ(OutputBatchDims(p), (std::vector<int64_t>{2, 3, 5}));
  p.batch.c = {2, 3, 5};
  EXPECT_EQ(OutputBatchDims(p), p.batch.c);
}

TEST(BatchShapeTest, BroadcastsAndMergesAsCannDoes) {
  MatmulProblem p = Batched(MatmulOp::kBatchMatMulV3);
  p.batch.a = {2, 1};
  p.batch.b = {3};
  absl::StatusOr<BatchShape> shape = BatchShapeOf(p);
  ASSERT_THAT(shape.status(), IsOk());
  EXPECT_EQ(shape->batch, 6u);
  EXPECT_EQ(shape->c, (BatchSlots{1, 1, 2, 3}));
  EXPECT_FALSE(shape->merged_into_m);
  EXPECT_FALSE(MergesBatchIntoM(p));
  // C batch (i, j) reads A batch i and B batch j.
  EXPECT_EQ(shape->ABatch(4), 1u);
  EXPECT_EQ(shape->BBatch(4), 1u);
  EXPECT_EQ(shape->BBatch(5), 2u);
  EXPECT_EQ(shape->OperandBatch(std::vector<int64_t>{3}, 5), 2u);

  p.batch.b.clear();  // B without batch, A not transposed: A's batch joins M
  EXPECT_TRUE(MergesBatchIntoM(p));
  shape = BatchShapeOf(p);
  ASSERT_THAT(shape.status(), IsOk());
  EXPECT_TRUE(shape->merged_into_m);
  EXPECT_EQ(shape->rows, 16u);
  EXPECT_EQ(shape->batch, 1u);
  EXPECT_EQ(shape->a, (BatchSlots{1, 1, 1, 1}));
  p.trans_a = true;  // a transposed A is not merged
  EXPECT_FALSE(MergesBatchIntoM(p));
  EXPECT_EQ(BatchShapeOf(p)->batch, 2u);
  p.trans_a = false;
  p.op = MatmulOp::kMatMulV3;  // an operator without batch dims never merges
  EXPECT_FALSE(MergesBatchIntoM(p));
}

TEST(BatchShapeTest, RefusesWhatDoesNotBroadcast) {
  MatmulProblem p = Batched(MatmulOp::kBatchMatMulV3);
  p.batch.a = {3};
  p.batch.b = {4};
  EXPECT_THAT(BatchShapeOf(p).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("do not broadcast")));
  p.batch.b = {3};
  p.batch.c = {4};
  EXPECT_THAT(BatchShapeOf(p).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("batch_c [4] is not the broadcast [1,1,1,3]")));
  p.batch.c.clear();
  p.batch.a = {1, 1, 1, 1, 3};
  EXPECT_THAT(BatchShapeOf(p).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("exceed 4 dims")));
  p.batch.a = {0};
  EXPECT_THAT(BatchShapeOf(p).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be positive")));
}

}  // namespace
}  // namespace npu::tiling
