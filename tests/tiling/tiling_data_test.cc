// Tests of server/tiling/tiling_data.h: the one definition of each
// tiling-data struct and its typed accessors.
#include "server/tiling/tiling_data.h"

#include <set>
#include <string_view>

#include "gtest/gtest.h"

namespace npu::tiling {
namespace {

template <typename Field>
void ExpectWellFormed() {
  const absl::Span<const TilingFieldSpec> fields = TilingStruct<Field>::kFields;
  EXPECT_EQ(TilingStructOf(TilingStruct<Field>::kKernel).fields.data(), fields.data());
  EXPECT_EQ(KernelOfStruct(TilingStruct<Field>::kName), TilingStruct<Field>::kKernel);
  std::set<std::string_view> names;
  int bytes_in_word = 0;
  for (const TilingFieldSpec& field : fields) {
    EXPECT_TRUE(names.insert(field.name).second) << "duplicate " << field.name;
    EXPECT_TRUE(field.bits == 32 || field.bits == 8) << field.name;
    if (field.bits == 8) {
      bytes_in_word = (bytes_in_word + 1) % 4;
    } else {
      // Packed bytes fill whole words in CANN's structs.
      EXPECT_EQ(bytes_in_word, 0) << "word before " << field.name << " is partly filled";
    }
  }
  EXPECT_EQ(bytes_in_word, 0);
}

TEST(TilingDataTest, EveryStructHasUniqueNamesAndWholeWords) {
  ExpectWellFormed<BasicField>();
  ExpectWellFormed<KEqZeroField>();
  ExpectWellFormed<ToMulField>();
  ExpectWellFormed<ToVectorField>();
  ExpectWellFormed<BatchBasicField>();
  ExpectWellFormed<IterBatchField>();
  ExpectWellFormed<MergeBatchField>();
  ExpectWellFormed<BatchToMulField>();
  ExpectWellFormed<HighLevelBatchField>();
  EXPECT_EQ(KernelOfStruct("NoSuchTilingData"), std::nullopt);
  EXPECT_EQ(KernelOfStruct(""), std::nullopt);
  EXPECT_TRUE(TilingStructOf(KernelId::kUnstructured).fields.empty());
  EXPECT_EQ(TilingData().struct_name(), "");
}

TEST(TilingDataTest, EnumsIndexTheirTables) {
  EXPECT_EQ(FieldSpec(BasicField::kUsedCoreNum).name, "usedCoreNum");
  EXPECT_EQ(FieldSpec(BasicField::kMTailMain).name, "mTailMain");
  EXPECT_EQ(FieldSpec(BasicField::kMmadParam).name, "mmadParam");
  EXPECT_EQ(FieldSpec(BasicField::kMmadParam).bits, 8);
  EXPECT_EQ(FieldSpec(BasicField::kUbDb).name, "ubDB");
  EXPECT_EQ(FieldSpec(BasicField::kInnerBatch).name, "innerBatch");
  EXPECT_EQ(TilingStruct<BasicField>::kFields.size(),
            static_cast<size_t>(BasicField::kInnerBatch) + 1);
  EXPECT_EQ(FieldSpec(KEqZeroField::kAivNum).name, "aivNum");
  EXPECT_EQ(TilingStruct<KEqZeroField>::kFields.size(),
            static_cast<size_t>(KEqZeroField::kAivNum) + 1);
  EXPECT_EQ(FieldSpec(ToMulField::kBaseMN).name, "baseMN");
  EXPECT_EQ(TilingStruct<ToMulField>::kFields.size(),
            static_cast<size_t>(ToMulField::kDataCopyMode) + 1);
  EXPECT_EQ(FieldSpec(ToVectorField::kBaseN).name, "baseN");
  EXPECT_EQ(TilingStruct<ToVectorField>::kFields.size(),
            static_cast<size_t>(ToVectorField::kBaseK) + 1);
}

TEST(TilingDataTest, HighLevelBatchStructHasNinetyWords) {
  const TilingData data = NewTilingData<HighLevelBatchField>();
  EXPECT_EQ(data.struct_name(), "BatchMatMulV3TilingData");
  EXPECT_EQ(data.RawWords().size(), 90u);
  EXPECT_EQ(FieldSpec(HighLevelBatchField::kMxTypePara).name, "mxTypePara");
  EXPECT_EQ(static_cast<int>(HighLevelBatchField::kMTailCnt), 50);
  EXPECT_EQ(static_cast<int>(HighLevelBatchField::kABatchDimAll), 60);
  EXPECT_EQ(FieldSpec(HighLevelBatchField::kL0cDb).bits, 8);
  EXPECT_EQ(FieldSpec(HighLevelBatchField::kBroadcastAxisB).name, "broadcastAxisB");
  EXPECT_EQ(TilingStruct<HighLevelBatchField>::kFields.size(),
            static_cast<size_t>(HighLevelBatchField::kBroadcastAxisB) + 1);
}

TEST(TilingDataTest, ModelsReadTheirStruct) {
  EXPECT_EQ(TilingStructOf(MatMulKernelOf(KernelModel::kBasic)).name, "MatMulV3BasicTilingData");
  EXPECT_EQ(TilingStructOf(MatMulKernelOf(KernelModel::kStreamKSplitK)).name,
            "MatMulV3BasicTilingData");
  EXPECT_EQ(TilingStructOf(MatMulKernelOf(KernelModel::kKEqualZero)).name,
            "MatMulV3KEqZeroBasicTilingData");
  EXPECT_EQ(TilingStructOf(MatMulKernelOf(KernelModel::kToMul)).name, "MatMulToMulBasicTilingData");
  EXPECT_EQ(TilingStructOf(MatMulKernelOf(KernelModel::kToMultiMul)).name,
            "MatMulToVectorBasicTilingData");
}

TEST(TilingDataTest, SetAndGetAreTypedByStruct) {
  TilingData data = NewTilingData<ToMulField>();
  EXPECT_EQ(data.struct_name(), "MatMulToMulBasicTilingData");
  ASSERT_EQ(data.fields.size(), 11u);
  Set(data, ToMulField::kBaseMN, 64);
  EXPECT_EQ(Get(data, ToMulField::kBaseMN), 64u);
  EXPECT_EQ(data.Get("baseMN"), 64u);
  EXPECT_EQ(Get(data, ToMulField::kTileNum), 0u);
  // A field of another struct is absent, and setting it changes nothing.
  EXPECT_EQ(Get(data, ToVectorField::kUsedCoreNum), std::nullopt);
  Set(data, ToVectorField::kUsedCoreNum, 7);
  EXPECT_EQ(Get(data, ToMulField::kUsedCoreNum), 0u);
  // An incomplete struct (a plan built by hand) has no typed fields.
  TilingData partial;
  partial.kernel = KernelId::kMatMulCube;
  partial.fields = {{"usedCoreNum", 5, 32}};
  EXPECT_EQ(Get(partial, BasicField::kUsedCoreNum), 5u);
  EXPECT_EQ(Get(partial, BasicField::kM), std::nullopt);
}

TEST(TilingDataTest, BlockFieldsRoundTrip) {
  BlockTiling block;
  block.base_m = 128;
  block.base_n = 256;
  block.base_k = 64;
  block.m_l1 = 128;
  block.n_l1 = 256;
  block.k_l1 = 256;
  block.single_core_k = 4096;
  block.m_tail_cnt = 2;
  block.n_tail_cnt = 3;
  block.l1_buffer_num = 4;
  block.l0c_db = 2;
  block.ub_db = 1;
  block.step_m = 9;  // not a struct field
  TilingData data = NewTilingData<BasicField>();
  WriteBlockFields(block, data);
  EXPECT_EQ(data.Get("baseN"), 256u);
  EXPECT_EQ(data.Get("skSingleCoreK"), 4096u);
  EXPECT_EQ(data.Get("nTailCnt"), 3u);
  EXPECT_EQ(data.Get("l1BufferNum"), 4u);
  EXPECT_EQ(Get(data, BasicField::kM), 0u);  // not a block member
  BlockTiling back;
  ReadBlockFields(data, back);
  EXPECT_EQ(back.base_m, 128u);
  EXPECT_EQ(back.k_l1, 256u);
  EXPECT_EQ(back.single_core_k, 4096u);
  EXPECT_EQ(back.m_tail_cnt, 2u);
  EXPECT_EQ(back.l0c_db, 2u);
  EXPECT_EQ(back.step_m, 1u);  // untouched
}

}  // namespace
}  // namespace npu::tiling
