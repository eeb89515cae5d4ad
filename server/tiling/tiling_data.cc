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

namespace {

// Every struct, indexed by the KernelId that reads it.
constexpr TilingStructSpec kStructs[] = {
    {KernelId::kUnstructured, "", {}}, StructOfField(BasicField{}),
    StructOfField(KEqZeroField{}),     StructOfField(ToMulField{}),
    StructOfField(ToVectorField{}),    StructOfField(BatchBasicField{}),
    StructOfField(IterBatchField{}),   StructOfField(MergeBatchField{}),
    StructOfField(BatchToMulField{}),  StructOfField(HighLevelBatchField{}),
};
static_assert(std::size(kStructs) == kKernelCount);

constexpr bool IndexedByKernel() {
  for (size_t i = 0; i < std::size(kStructs); ++i) {
    if (static_cast<size_t>(kStructs[i].kernel) != i) return false;
  }
  return true;
}
static_assert(IndexedByKernel());

}  // namespace

std::string_view TilingData::struct_name() const { return TilingStructOf(kernel).name; }

const TilingStructSpec& TilingStructOf(KernelId kernel) {
  return kStructs[static_cast<size_t>(kernel)];
}

std::optional<KernelId> KernelOfStruct(std::string_view struct_name) {
  if (struct_name.empty()) return std::nullopt;
  for (const TilingStructSpec& spec : kStructs) {
    if (spec.name == struct_name) return spec.kernel;
  }
  return std::nullopt;
}

KernelId MatMulKernelOf(KernelModel model) {
  switch (model) {
    case KernelModel::kKEqualZero:
      return KernelId::kMatMulZeroK;
    case KernelModel::kToMul:
      return KernelId::kMatMulToMul;
    case KernelModel::kToMultiMul:
      return KernelId::kMatMulToVector;
    case KernelModel::kBasic:
    case KernelModel::kStreamK:
    case KernelModel::kSlice:
    case KernelModel::kBasicSplitK:
    case KernelModel::kStreamKSplitK:
      return KernelId::kMatMulCube;
  }
  return KernelId::kMatMulCube;
}

}  // namespace npu::tiling
