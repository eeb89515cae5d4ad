#include "server/tiling/types.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

// Sizes come from one table of bits; bytes are derived, packed for counts.
TEST(DataTypeTest, SizesAreBitsFirst) {
  EXPECT_EQ(DataTypeBits(DataType::kFloat16), 16u);
  EXPECT_EQ(DataTypeBits(DataType::kBFloat16), 16u);
  EXPECT_EQ(DataTypeBits(DataType::kFloat32), 32u);
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    EXPECT_EQ(DataTypeBytes(dtype) * 8, DataTypeBits(dtype));
    EXPECT_EQ(DataTypeBytesOf(dtype, 0), 0u);
    EXPECT_EQ(DataTypeBytesOf(dtype, 7), 7 * DataTypeBytes(dtype));
  }
}

TEST(TilingKeyTest, EncodesCannExamples) {
  TilingKey stream_k{ApiLevel::kTensor,  false, true, 0, KernelModel::kStreamK, FullLoad::kNone,
                     L0cToOut::kOnTheFly};
  EXPECT_EQ(stream_k.Encode(), 4162u);  // 0x1042
  TilingKey fixpipe{
      ApiLevel::kTensor,       false, false, 0, KernelModel::kStreamK, FullLoad::kNone,
      L0cToOut::kNdFixpipe1To2};
  EXPECT_EQ(fixpipe.Encode(), 2101250u);  // 0x201002
  TilingKey to_mul{ApiLevel::kBasic,   false, false, 0, KernelModel::kToMul, FullLoad::kNone,
                   L0cToOut::kOnTheFly};
  EXPECT_EQ(to_mul.Encode(), 12289u);  // 0x3001
}

TEST(TilingKeyTest, DecodeInvertsEncodeForEveryField) {
  for (int level = 0; level <= 2; ++level) {
    for (int model = 0; model <= 7; ++model) {
      for (int full = 0; full <= 3; ++full) {
        for (int out = 0; out <= 2; ++out) {
          TilingKey key{static_cast<ApiLevel>(level),
                        model % 2 == 0,
                        full % 2 == 1,
                        0,
                        static_cast<KernelModel>(model),
                        static_cast<FullLoad>(full),
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

// Keys of the golden FusedMatMul cases (cann950_ops README, section 3).
TEST(TilingKeyTest, EncodesFusedMatMulExamples) {
  TilingKey gelu{ApiLevel::kBasic,   false, true, 0, KernelModel::kBasic, FullLoad::kNone,
                 L0cToOut::kOnTheFly};
  gelu.layout = KeyLayout::kFused;
  gelu.fused_op = FusedOp::kGeluErf;
  EXPECT_EQ(gelu.Encode(), 0x3000021u);
  TilingKey add_k0{ApiLevel::kBasic,   false, false, 4, KernelModel::kKEqualZero, FullLoad::kNone,
                   L0cToOut::kOnTheFly};
  add_k0.layout = KeyLayout::kFused;
  add_k0.fused_op = FusedOp::kAdd;
  add_k0.inner_precise = 1;
  EXPECT_EQ(add_k0.Encode(), 0x11002401u);
  // Both transposes: a + 2b = 3 in bits 7:4, where the MatMul layout puts 0x50.
  TilingKey both{ApiLevel::kBasic,   true, true, 0, KernelModel::kBasic, FullLoad::kNone,
                 L0cToOut::kOnTheFly};
  EXPECT_EQ(both.Encode(), 0x51u);
  both.layout = KeyLayout::kFused;
  EXPECT_EQ(both.Encode(), 0x31u);
}

TEST(TilingKeyTest, FusedDecodeInvertsEncode) {
  for (int op = 0; op <= 6; ++op) {
    for (int trans = 0; trans <= 3; ++trans) {
      TilingKey key{ApiLevel::kBasic,      (trans & 1) != 0, (trans & 2) != 0,        3,
                    KernelModel::kStreamK, FullLoad::kB,     L0cToOut::kNdFixpipe1To2};
      key.layout = KeyLayout::kFused;
      key.fused_op = static_cast<FusedOp>(op);
      key.inner_precise = static_cast<uint8_t>(op % 2);
      absl::StatusOr<TilingKey> decoded = TilingKey::Decode(key.Encode(), KeyLayout::kFused);
      ASSERT_THAT(decoded, IsOk());
      EXPECT_EQ(decoded->Encode(), key.Encode());
      EXPECT_EQ(decoded->fused_op, key.fused_op);
      EXPECT_EQ(decoded->trans_b, key.trans_b);
    }
  }
  EXPECT_THAT(TilingKey::Decode(0x7000001, KeyLayout::kFused),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fused op")));
  EXPECT_THAT(TilingKey::Decode(0x1000001, KeyLayout::kMatMul),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(MatmulOpTest, NamesParseBack) {
  for (MatmulOp op : kAllMatmulOps) {
    EXPECT_THAT(ParseMatmulOp(MatmulOpName(op)), IsOk());
    EXPECT_EQ(*ParseMatmulOp(MatmulOpName(op)), op);
  }
  EXPECT_EQ(*ParseMatmulOp("batch_matmul_v3"), MatmulOp::kBatchMatMulV3);
  EXPECT_THAT(ParseMatmulOp("gemm"), StatusIs(absl::StatusCode::kInvalidArgument));
  for (int value = 0; value <= 6; ++value) {
    const FusedOp op = static_cast<FusedOp>(value);
    EXPECT_EQ(*ParseFusedOp(FusedOpKeyName(op)), op);
  }
  EXPECT_EQ(*ParseFusedOp("none"), FusedOp::kNone);
  EXPECT_EQ(*ParseFusedOp("16cast32"), FusedOp::kCast16To32);
  EXPECT_THAT(ParseFusedOp("quant"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(EpilogueTraitsTest, EachEpilogueAsCannsFusedMatMulTreatsIt) {
  // x3 is read by add and mul only.
  EXPECT_TRUE(TraitsOf(FusedOp::kAdd).reads_x3);
  EXPECT_TRUE(TraitsOf(FusedOp::kMul).reads_x3);
  EXPECT_FALSE(TraitsOf(FusedOp::kRelu).reads_x3);
  EXPECT_FALSE(TraitsOf(FusedOp::kGeluErf).reads_x3);
  EXPECT_TRUE(TraitsOf(FusedOp::kGeluErf).gelu);
  EXPECT_TRUE(TraitsOf(FusedOp::kGeluTanh).gelu);
  // The batched strategies take none, relu, add and mul.
  EXPECT_TRUE(TraitsOf(FusedOp::kNone).batched);
  EXPECT_TRUE(TraitsOf(FusedOp::kRelu).batched);
  EXPECT_TRUE(TraitsOf(FusedOp::kMul).batched);
  EXPECT_FALSE(TraitsOf(FusedOp::kCast16To32).batched);
  for (FusedOp op : {FusedOp::kNone, FusedOp::kAdd, FusedOp::kMul, FusedOp::kGeluErf,
                     FusedOp::kGeluTanh, FusedOp::kRelu, FusedOp::kCast16To32}) {
    const EpilogueTraits traits = TraitsOf(op);
    // The vector cores run exactly the epilogues that read x3 or compute GELU.
    EXPECT_EQ(traits.on_vector_cores, traits.reads_x3 || traits.gelu) << FusedOpName(op);
    // GELU is a 2-D epilogue.
    if (traits.gelu) {
      EXPECT_FALSE(traits.batched) << FusedOpName(op);
    }
  }
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
  EXPECT_THAT(FindPlatform("ascend999"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("ascend999")));
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
  for (DataType dtype : kAllDataTypes) {
    EXPECT_EQ(*ParseDataType(DataTypeName(dtype)), dtype);
  }
  EXPECT_THAT(ParseDataType("int2"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(*ParseFormat("FRACTAL_NZ"), Format::kFractalNz);
  EXPECT_EQ(KernelModelName(KernelModel::kStreamKSplitK), "SK_SPLIT_K");
  EXPECT_EQ(L0cToOutName(L0cToOut::kNdFixpipe1To1), "ND_FIXPIPE_1_1");
}

}  // namespace
}  // namespace npu::tiling
