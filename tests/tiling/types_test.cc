#include "server/tiling/types.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

TEST(TilingKeyTest, EncodesCannExamples) {
  TilingKey stream_k{ApiLevel::kTensor, false, true, 0, KernelModel::kStreamK, FullLoad::kNone,
                     L0cToOut::kOnTheFly};
  EXPECT_EQ(stream_k.Encode(), 4162u);  // 0x1042
  TilingKey fixpipe{ApiLevel::kTensor, false, false, 0, KernelModel::kStreamK, FullLoad::kNone,
                    L0cToOut::kNdFixpipe1To2};
  EXPECT_EQ(fixpipe.Encode(), 2101250u);  // 0x201002
  TilingKey to_mul{ApiLevel::kBasic, false, false, 0, KernelModel::kToMul, FullLoad::kNone,
                   L0cToOut::kOnTheFly};
  EXPECT_EQ(to_mul.Encode(), 12289u);  // 0x3001
}

TEST(TilingKeyTest, DecodeInvertsEncodeForEveryField) {
  for (int level = 0; level <= 2; ++level) {
    for (int model = 0; model <= 7; ++model) {
      for (int full = 0; full <= 3; ++full) {
        for (int out = 0; out <= 2; ++out) {
          TilingKey key{static_cast<ApiLevel>(level), model % 2 == 0, full % 2 == 1, 0,
                        static_cast<KernelModel>(model), static_cast<FullLoad>(full),
                        static_cast<L0cToOut>(out)};
          absl::StatusOr<TilingKey> decoded = TilingKey::Decode(key.Encode());
          ASSERT_THAT(decoded, IsOk());
          EXPECT_EQ(decoded->Encode(), key.Encode());
          EXPECT_EQ(decoded->model, key.model);
          EXPECT_EQ(decoded->trans_a, key.trans_a);
        }
      }
    }
  }
}

TEST(TilingKeyTest, DecodeRejectsOutOfRangeFields) {
  EXPECT_THAT(TilingKey::Decode(3), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(TilingKey::Decode(0x8000), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(TilingKey::Decode(0x300000), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(TilingKey::Decode(0x20), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(TilingDataTest, RawWordsPackEightBitFieldsLowByteFirst) {
  TilingData data;
  data.fields = {{"a", 7, 32}, {"p", 1, 8}, {"q", 2, 8}, {"r", 3, 8}, {"s", 4, 8}, {"b", 9, 32}};
  EXPECT_THAT(data.RawWords(), ::testing::ElementsAre(7u, 0x04030201u, 9u));
  EXPECT_EQ(data.Get("q"), 2u);
  EXPECT_EQ(data.Get("missing"), std::nullopt);
}

TEST(PlatformTest, DefaultIsAscend950pr) {
  ASSERT_FALSE(BuiltinPlatforms().empty());
  const ChipSpec& chip = BuiltinPlatforms().front();
  EXPECT_EQ(chip.name, "ascend950pr");
  EXPECT_EQ(chip.aic_num, 32u);
  EXPECT_EQ(chip.aiv_num, 64u);
  EXPECT_EQ(chip.l1_bytes, 512u * 1024);
  EXPECT_EQ(chip.l0c_bytes, 256u * 1024);
  EXPECT_EQ(chip.ub_bytes, 248u * 1024);
  EXPECT_EQ(chip.l2_bytes, 128ull * 1024 * 1024);
  EXPECT_THAT(ValidateChip(chip), IsOk());
}

TEST(PlatformTest, UnknownNameIsNotFound) {
  EXPECT_THAT(FindPlatform("ascend999"), StatusIs(absl::StatusCode::kNotFound,
                                                  HasSubstr("ascend999")));
}

TEST(PlatformTest, ValidateChipNamesTheField) {
  ChipSpec chip = *FindPlatform(kDefaultPlatform);
  chip.aic_num = 0;
  EXPECT_THAT(ValidateChip(chip),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("aic_num=0")));
  chip = *FindPlatform(kDefaultPlatform);
  chip.l0a_bytes = 1024;
  EXPECT_THAT(ValidateChip(chip),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("l0a_bytes")));
}

TEST(NamesTest, ParseRoundTrips) {
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    EXPECT_EQ(*ParseDataType(DataTypeName(dtype)), dtype);
  }
  EXPECT_THAT(ParseDataType("int8"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(*ParseFormat("FRACTAL_NZ"), Format::kFractalNz);
  EXPECT_EQ(KernelModelName(KernelModel::kStreamKSplitK), "SK_SPLIT_K");
  EXPECT_EQ(L0cToOutName(L0cToOut::kNdFixpipe1To1), "ND_FIXPIPE_1_1");
}

}  // namespace
}  // namespace npu::tiling
