// Tests of server/tiling/problem_key.h: every field the engine reads changes
// the key, the fields it ignores do not, and every chip figure counts.
#include "server/tiling/problem_key.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "server/tiling/chip_fields.h"
#include "tests/testing/problems.h"

namespace npu::tiling {
namespace {

std::string KeyOf(const MatmulProblem& p) {
  std::string key;
  AppendProblemKey(p, key);
  return key;
}

TEST(ProblemKeyTest, EveryFieldTheEngineReadsChangesTheKey) {
  const MatmulProblem base = ::npu::testing::Problem(64, 48, 32);
  const std::vector<std::function<void(MatmulProblem&)>> edits = {
      [](MatmulProblem& p) { p.m = 65; },
      [](MatmulProblem& p) { p.n = 49; },
      [](MatmulProblem& p) { p.k = 33; },
      [](MatmulProblem& p) { p.dtype_a = DataType::kBFloat16; },
      [](MatmulProblem& p) { p.dtype_b = DataType::kBFloat16; },
      [](MatmulProblem& p) { p.dtype_c = DataType::kFloat32; },
      [](MatmulProblem& p) { p.has_bias = true; },
      [](MatmulProblem& p) { p.trans_a = true; },
      [](MatmulProblem& p) { p.trans_b = true; },
      [](MatmulProblem& p) { p.format_a = Format::kFractalNz; },
      [](MatmulProblem& p) { p.format_b = Format::kFractalNz; },
      [](MatmulProblem& p) { p.format_c = Format::kFractalNz; },
      [](MatmulProblem& p) {
        p.storage_shape_b = {2, 3, 16, 16};
      },
      [](MatmulProblem& p) { p.hf32 = true; },
      [](MatmulProblem& p) { p.force_grp_acc_fp32 = true; },
      [](MatmulProblem& p) { p.deterministic_level = 2; },
      [](MatmulProblem& p) { p.avoid_tensor_api = true; },
      [](MatmulProblem& p) { p.a_slice.enabled = true; },
      [](MatmulProblem& p) { p.op = MatmulOp::kBatchMatMulV3; },
      [](MatmulProblem& p) { p.batch.a = {2}; },
      [](MatmulProblem& p) { p.batch.b = {2}; },
      [](MatmulProblem& p) { p.batch.c = {2}; },
      [](MatmulProblem& p) { p.batch.bias = {2}; },
      [](MatmulProblem& p) { p.fused.op = FusedOp::kRelu; },
      [](MatmulProblem& p) {
        p.fused.x3_shape = {64, 48};
      },
      [](MatmulProblem& p) { p.fused.inner_precise = 1; },
      [](MatmulProblem& p) { p.batch.a_interleaved = true; },
      [](MatmulProblem& p) { p.batch.b_interleaved = true; },
  };
  const std::string key = KeyOf(base);
  for (size_t i = 0; i < edits.size(); ++i) {
    MatmulProblem edited = base;
    edits[i](edited);
    EXPECT_NE(KeyOf(edited), key) << "edit " << i;
  }
  // Lists are length-prefixed: moving a dim from one list to the next is seen.
  MatmulProblem a = base, b = base;
  a.batch.a = {2, 3};
  b.batch.a = {2};
  b.batch.b = {3};
  EXPECT_NE(KeyOf(a), KeyOf(b));
}

TEST(ProblemKeyTest, FieldsTheEngineIgnoresDoNot) {
  MatmulProblem p = ::npu::testing::Problem(64, 48, 32);
  const std::string key = KeyOf(p);
  p.dtype_bias = DataType::kFloat32;  // no bias
  EXPECT_EQ(KeyOf(p), key);
  p.a_slice.row_stride = 99;  // a disabled view
  EXPECT_EQ(KeyOf(p), key);
  p.has_bias = true;
  EXPECT_NE(KeyOf(p), key);
}

TEST(ProblemKeyTest, EveryChipFigureChangesTheKey) {
  const ChipSpec chip = ::npu::testing::Chip950();
  std::string base;
  AppendChipKey(chip, base);
  for (const ChipField& field : kChipFields) {
    ChipSpec other = chip;
    field.Set(other, field.Get(chip) + 1);
    std::string key;
    AppendChipKey(other, key);
    EXPECT_NE(key, base) << field.name;
  }
  ChipSpec renamed = chip;
  renamed.name += "x";
  std::string key;
  AppendChipKey(renamed, key);
  EXPECT_NE(key, base);
}

// The numbers in a key are 8 bytes, least significant first, on any host:
// a text is its length, then its bytes.
TEST(ProblemKeyTest, NumbersAreLittleEndianWords) {
  std::string key = "x";
  AppendTextKey(std::string(0x0102, 'a'), key);
  ASSERT_EQ(key.size(), 1u + 8u + 0x0102u);
  EXPECT_EQ(key.substr(0, 9), std::string("x\x02\x01\0\0\0\0\0\0", 9));
  EXPECT_EQ(key.substr(9), std::string(0x0102, 'a'));
}

}  // namespace
}  // namespace npu::tiling
