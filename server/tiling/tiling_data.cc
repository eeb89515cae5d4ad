#include "server/tiling/tiling_data.h"

#include <iterator>

namespace npu::tiling {
namespace {

// BatchMatMulV3BasicTilingData starts with MatMulV3BasicTilingData's fields,
// which WriteBlockFields() and ReadBlockFields() rely on.
constexpr bool BatchBasicExtendsBasic() {
  for (size_t i = 0; i < std::size(kBasicFields); ++i) {
    if (kBasicFields[i].name != kBatchBasicFields[i].name ||
        kBasicFields[i].bits != kBatchBasicFields[i].bits) {
      return false;
    }
  }
  return std::size(kBatchBasicFields) == std::size(kBasicFields) + 2;
}
static_assert(BatchBasicExtendsBasic());

}  // namespace

absl::Span<const TilingFieldSpec> TilingStructFields(std::string_view struct_name) {
  if (struct_name == TilingStruct<BasicField>::kName) return TilingStruct<BasicField>::kFields;
  if (struct_name == TilingStruct<KEqZeroField>::kName) return TilingStruct<KEqZeroField>::kFields;
  if (struct_name == TilingStruct<ToMulField>::kName) return TilingStruct<ToMulField>::kFields;
  if (struct_name == TilingStruct<ToVectorField>::kName) {
    return TilingStruct<ToVectorField>::kFields;
  }
  if (struct_name == TilingStruct<BatchBasicField>::kName) {
    return TilingStruct<BatchBasicField>::kFields;
  }
  if (struct_name == TilingStruct<IterBatchField>::kName) {
    return TilingStruct<IterBatchField>::kFields;
  }
  if (struct_name == TilingStruct<MergeBatchField>::kName) {
    return TilingStruct<MergeBatchField>::kFields;
  }
  if (struct_name == TilingStruct<BatchToMulField>::kName) {
    return TilingStruct<BatchToMulField>::kFields;
  }
  if (struct_name == TilingStruct<HighLevelBatchField>::kName) {
    return TilingStruct<HighLevelBatchField>::kFields;
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

}  // namespace npu::tiling
