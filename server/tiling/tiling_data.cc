#include "server/tiling/tiling_data.h"

namespace npu::tiling {

absl::Span<const TilingFieldSpec> TilingStructFields(std::string_view struct_name) {
  if (struct_name == TilingStruct<BasicField>::kName) return TilingStruct<BasicField>::kFields;
  if (struct_name == TilingStruct<KEqZeroField>::kName) return TilingStruct<KEqZeroField>::kFields;
  if (struct_name == TilingStruct<ToMulField>::kName) return TilingStruct<ToMulField>::kFields;
  if (struct_name == TilingStruct<ToVectorField>::kName) {
    return TilingStruct<ToVectorField>::kFields;
  }
  return {};
}

std::string_view TilingStructOf(KernelModel model) {
  switch (model) {
    case KernelModel::kKEqualZero:
      return TilingStruct<KEqZeroField>::kName;
    case KernelModel::kToMul:
      return TilingStruct<ToMulField>::kName;
    case KernelModel::kToMultiMul:
      return TilingStruct<ToVectorField>::kName;
    case KernelModel::kBasic:
    case KernelModel::kStreamK:
    case KernelModel::kSlice:
    case KernelModel::kBasicSplitK:
    case KernelModel::kStreamKSplitK:
      return TilingStruct<BasicField>::kName;
  }
  return TilingStruct<BasicField>::kName;
}

namespace {

// The BlockTiling members a MatMulV3BasicTilingData carries, and where.
struct BlockFieldBinding {
  BasicField field;
  uint64_t BlockTiling::*member;
};
constexpr BlockFieldBinding kBlockFields[] = {
    {BasicField::kML1, &BlockTiling::m_l1},
    {BasicField::kNL1, &BlockTiling::n_l1},
    {BasicField::kKL1, &BlockTiling::k_l1},
    {BasicField::kBaseM, &BlockTiling::base_m},
    {BasicField::kBaseN, &BlockTiling::base_n},
    {BasicField::kBaseK, &BlockTiling::base_k},
    {BasicField::kSkSingleCoreK, &BlockTiling::single_core_k},
    {BasicField::kMTailCnt, &BlockTiling::m_tail_cnt},
    {BasicField::kNTailCnt, &BlockTiling::n_tail_cnt},
    {BasicField::kL1BufferNum, &BlockTiling::l1_buffer_num},
    {BasicField::kL0cDb, &BlockTiling::l0c_db},
    {BasicField::kUbDb, &BlockTiling::ub_db},
};

}  // namespace

void WriteBlockFields(const BlockTiling& block, TilingData& data) {
  for (const BlockFieldBinding& binding : kBlockFields) {
    Set(data, binding.field, block.*binding.member);
  }
}

void ReadBlockFields(const TilingData& data, BlockTiling& block) {
  for (const BlockFieldBinding& binding : kBlockFields) {
    if (std::optional<uint64_t> value = Get(data, binding.field)) block.*binding.member = *value;
  }
}

}  // namespace npu::tiling
