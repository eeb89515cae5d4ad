#include "server/tiling/tiling_data.h"

#include <iterator>

#include "absl/strings/str_cat.h"

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

// TCubeTiling's 50 members are the start of BatchMatMulV3TilingData, in the
// order TCubeField names them.
constexpr bool CubeFieldsMatchHighLevel() {
  for (size_t i = 0; i < kTCubeFieldCount; ++i) {
    if (kGmmCubeFields[i].name.substr(sizeof("mmTilingData.") - 1) !=
        kHighLevelBatchFields[i].name) {
      return false;
    }
  }
  return true;
}
static_assert(CubeFieldsMatchHighLevel());
static_assert(std::size(kGmmNoQuantFields) == 62);
static_assert(std::size(kGmmQuantBasicApiFields) == 25);
static_assert(std::size(kGmmQuantFields) == 11 + 384 + 50);
static_assert(std::size(kGmmWeightQuantFields) == 19 + 384 + 50);
static_assert(kGmmArrayNames.text[383][0] == 'g' && kGmmArrayNames.size[383] == 19);

}  // namespace

namespace {

// Every struct, indexed by the KernelId that reads it.
constexpr TilingStructSpec kStructs[] = {
    {KernelId::kUnstructured, "", {}},
    StructOfField(BasicField{}),
    StructOfField(KEqZeroField{}),
    StructOfField(ToMulField{}),
    StructOfField(ToVectorField{}),
    StructOfField(BatchBasicField{}),
    StructOfField(IterBatchField{}),
    StructOfField(MergeBatchField{}),
    StructOfField(BatchToMulField{}),
    StructOfField(HighLevelBatchField{}),
    {KernelId::kQuantBasic, "QuantBatchMatmulV3BasicAPITilingData", kQuantBasicFields},
    {KernelId::kQuantStreamK, "QuantBatchMatmulV3StreamKBasicAPITilingData", kQuantStreamKFields},
    {KernelId::kQuantWithoutBatch, "QuantBatchMatmulV3TensorAPIWithoutBatchTilingData",
     kQuantWithoutBatchFields},
    {KernelId::kQuantHighLevel, "QuantBatchMatmulV3TilingDataParams", kQuantHighLevelFields},
    StructOfField(WqAsField{}),
    StructOfField(WqRegBaseField{}),
    StructOfField(WqCustomField{}),
    // The transposed batch matmuls' kernels read BatchMatMulV3's struct.
    {KernelId::kTransposeBatch, "BatchMatMulV3TilingData", kHighLevelBatchFields},
    {KernelId::kTransposeQuantBatch, "BatchMatMulV3TilingData", kHighLevelBatchFields},
    StructOfField(GmmNoQuantField{}),
    StructOfField(GmmQuantBasicApiField{}),
    StructOfField(GmmQuantField{}),
    StructOfField(GmmWeightQuantField{}),
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

absl::StatusOr<TilingData> TilingDataFromWords(KernelId kernel, absl::Span<const uint32_t> words) {
  const TilingStructSpec& spec = TilingStructOf(kernel);
  TilingData data;
  data.kernel = kernel;
  data.fields.reserve(spec.fields.size());
  size_t word = 0;
  int bit = 0;  // bits of `words[word]` taken by packed members so far
  for (const TilingFieldSpec& field : spec.fields) {
    if (field.bits >= 32 && bit != 0) {
      ++word;
      bit = 0;
    }
    if (word >= words.size()) break;
    if (field.bits == 64) {  // two words, the low one first
      if (word + 1 >= words.size()) break;
      data.fields.push_back(
          {field.name, words[word] | (uint64_t{words[word + 1]} << 32), field.bits});
      word += 2;
      continue;
    }
    const uint64_t mask = field.bits == 32 ? 0xFFFFFFFFu : (uint64_t{1} << field.bits) - 1;
    data.fields.push_back({field.name, (words[word] >> bit) & mask, field.bits});
    bit += field.bits;
    if (bit == 32) {
      ++word;
      bit = 0;
    }
  }
  if (bit != 0) ++word;
  if (data.fields.size() != spec.fields.size() || word != words.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(spec.name), " has ", StructWords(spec), " words, got ", words.size()));
  }
  return data;
}

size_t StructWords(const TilingStructSpec& spec) {
  size_t bits = 0;
  for (const TilingFieldSpec& field : spec.fields) {
    // A 32- or 64-bit member starts a new word.
    if (field.bits >= 32) bits = (bits + 31) / 32 * 32;
    bits += field.bits;
  }
  return (bits + 31) / 32;
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
