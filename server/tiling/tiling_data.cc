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

}  // namespace npu::tiling
