#include "server/tiling/types.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/tiling/chip_fields.h"
#include "server/tiling/operator_table.h"

namespace npu::tiling {

std::string_view DataTypeName(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return "float16";
    case DataType::kBFloat16:
      return "bfloat16";
    case DataType::kFloat32:
      return "float32";
    case DataType::kInt8:
      return "int8";
    case DataType::kInt4:
      return "int4";
    case DataType::kFloat8E4M3:
      return "float8_e4m3fn";
    case DataType::kFloat8E5M2:
      return "float8_e5m2";
    case DataType::kHiFloat8:
      return "hifloat8";
    case DataType::kFloat4E2M1:
      return "float4_e2m1";
    case DataType::kFloat8E8M0:
      return "float8_e8m0";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kUint64:
      return "uint64";
    case DataType::kFloat4E1M2:
      return "float4_e1m2";
  }
  return "?";
}

std::string_view GroupedTensorName(GroupedTensor tensor) {
  switch (tensor) {
    case GroupedTensor::kX:
      return "x";
    case GroupedTensor::kWeight:
      return "weight";
    case GroupedTensor::kBias:
      return "bias";
    case GroupedTensor::kScale:
      return "scale";
    case GroupedTensor::kOffset:
      return "offset";
    case GroupedTensor::kAntiquantScale:
      return "antiquant_scale";
    case GroupedTensor::kAntiquantOffset:
      return "antiquant_offset";
    case GroupedTensor::kGroupList:
      return "group_list";
    case GroupedTensor::kPerTokenScale:
      return "per_token_scale";
    case GroupedTensor::kY:
      return "y";
  }
  return "?";
}

absl::StatusOr<DataType> ParseDataType(std::string_view name) {
  for (DataType dtype : kAllDataTypes) {
    if (name == DataTypeName(dtype)) return dtype;
  }
  std::string names;
  for (DataType dtype : kAllDataTypes) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", std::string(DataTypeName(dtype)));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype \"", std::string(name), "\"; expected one of ", names));
}

std::string_view FormatName(Format format) {
  switch (format) {
    case Format::kNd:
      return "ND";
    case Format::kFractalNz:
      return "FRACTAL_NZ";
  }
  return "?";
}

absl::StatusOr<Format> ParseFormat(std::string_view name) {
  if (name == "ND") return Format::kNd;
  if (name == "FRACTAL_NZ") return Format::kFractalNz;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown format \"", std::string(name), "\"; expected ND or FRACTAL_NZ"));
}

std::string_view NpuArchName(NpuArch arch) {
  switch (arch) {
    case NpuArch::kDav3510:
      return "DAV_3510";
    case NpuArch::kDav2201:
      return "DAV_2201";
  }
  return "?";
}

absl::StatusOr<NpuArch> ParseNpuArch(std::string_view name) {
  for (NpuArch arch : {NpuArch::kDav3510, NpuArch::kDav2201}) {
    if (NpuArchName(arch) == name) return arch;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown NPU architecture \"", std::string(name),
                                                 "\"; expected DAV_3510 or DAV_2201"));
}

const std::vector<ChipSpec>& BuiltinPlatforms() {
  // Ascend 950PR (NpuArch DAV_3510): the figures CANN's platform info reports
  // for the chip; DDR and L2 rates are bytes per cycle per cube core.
  static const auto* const kPlatforms = new std::vector<ChipSpec>{
      {
          .name = std::string(kDefaultPlatform),
          .npu_arch = NpuArch::kDav3510,
          .aic_num = 32,
          .aiv_num = 64,
          .l1_bytes = 512 * 1024,
          .l0a_bytes = 64 * 1024,
          .l0b_bytes = 64 * 1024,
          .l0c_bytes = 256 * 1024,
          .ub_bytes = 248 * 1024,
          .l2_bytes = 128ull * 1024 * 1024,
          .bt_bytes = 4 * 1024,
          .cube_freq_mhz = 1650,
          .ddr_bytes_per_cycle = 31,
          .l2_bytes_per_cycle = 100,
      },
      // Atlas A2 / Ascend 910B1 (NpuArch DAV_2201): 24 AIC / 48 AIV at
      // 1850 MHz, L0C 128 KiB, UB 192 KiB, L2 192 MiB (asc-devkit's
      // matmul_high_performance README and the chip's published facts); HBM
      // 1.8 TB/s and L2 about 5 TB/s, here per cycle per cube core
      // (1.8e12 / (24 x 1.85e9) = 40.5 and 5e12 / (24 x 1.85e9) = 112.6).
      {
          .name = "ascend910b1",
          .npu_arch = NpuArch::kDav2201,
          .aic_num = 24,
          .aiv_num = 48,
          .l1_bytes = 512 * 1024,
          .l0a_bytes = 64 * 1024,
          .l0b_bytes = 64 * 1024,
          .l0c_bytes = 128 * 1024,
          .ub_bytes = 192 * 1024,
          .l2_bytes = 192ull * 1024 * 1024,
          .bt_bytes = 1024,
          .cube_freq_mhz = 1850,
          .ddr_bytes_per_cycle = 41,
          .l2_bytes_per_cycle = 113,
      },
  };
  return *kPlatforms;
}

absl::StatusOr<ChipSpec> FindPlatform(std::string_view name) {
  for (const ChipSpec& chip : BuiltinPlatforms()) {
    if (chip.name == name) return chip;
  }
  std::string names;
  for (const ChipSpec& chip : BuiltinPlatforms()) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", chip.name);
  }
  return absl::NotFoundError(
      absl::StrCat("unknown platform \"", std::string(name), "\"; built-in: ", names));
}

namespace {

absl::Status CheckRange(std::string_view field, uint64_t value, uint64_t min, uint64_t max) {
  if (value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat("platform field ", std::string(field), "=",
                                                   value, " is outside [", min, ", ", max, "]"));
  }
  return absl::OkStatus();
}

template <size_t... I>
bool ChipInRange(const ChipSpec& chip, std::index_sequence<I...>) {
  return ((kChipFields[I].Get(chip) >= kChipFields[I].min &&
           kChipFields[I].Get(chip) <= kChipFields[I].max) &&
          ...);
}

}  // namespace

absl::Status ValidateChip(const ChipSpec& chip) {
  // Every decision validates its chip: the common case is one inlined pass
  // over the table; the messages are built only for a chip out of range.
  if (ChipInRange(chip, std::make_index_sequence<kChipFieldCount>())) return absl::OkStatus();
  for (const ChipField& field : kChipFields) {
    absl::Status status = CheckRange(field.name, field.Get(chip), field.min, field.max);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

std::string_view ApiLevelName(ApiLevel level) {
  switch (level) {
    case ApiLevel::kHigh:
      return "HIGH_LEVEL";
    case ApiLevel::kBasic:
      return "BASIC_LEVEL";
    case ApiLevel::kTensor:
      return "TENSOR_LEVEL";
  }
  return "?";
}

std::string_view KernelModelName(KernelModel model) {
  switch (model) {
    case KernelModel::kBasic:
      return "BASIC";
    case KernelModel::kStreamK:
      return "STREAM_K";
    case KernelModel::kKEqualZero:
      return "K_EQUAL_ZERO";
    case KernelModel::kToMul:
      return "TO_MUL";
    case KernelModel::kToMultiMul:
      return "TO_MULTI_MUL";
    case KernelModel::kSlice:
      return "SLICE";
    case KernelModel::kBasicSplitK:
      return "BASIC_SPLIT_K";
    case KernelModel::kStreamKSplitK:
      return "SK_SPLIT_K";
  }
  return "?";
}

std::string_view FullLoadName(FullLoad full_load) {
  switch (full_load) {
    case FullLoad::kNone:
      return "NONE";
    case FullLoad::kA:
      return "A_FULL_LOAD";
    case FullLoad::kB:
      return "B_FULL_LOAD";
    case FullLoad::kAB:
      return "AB_FULL_LOAD";
  }
  return "?";
}

std::string_view L0cToOutName(L0cToOut out) {
  switch (out) {
    case L0cToOut::kOnTheFly:
      return "ON_THE_FLY";
    case L0cToOut::kNdFixpipe1To1:
      return "ND_FIXPIPE_1_1";
    case L0cToOut::kNdFixpipe1To2:
      return "ND_FIXPIPE_1_2";
  }
  return "?";
}

std::string_view KernelTypeName(KernelType type) {
  switch (type) {
    case KernelType::kAicOnly:
      return "AIC_ONLY";
    case KernelType::kMixed1To2:
      return "MIX_AIC_1_AIV_2";
    case KernelType::kAivOnly:
      return "AIV_ONLY";
    case KernelType::kMixed1To1:
      return "MIX_AIC_1_AIV_1";
  }
  return "?";
}

std::string_view L1ResidencyName(L1Residency residency) {
  switch (residency) {
    case L1Residency::kStreamed:
      return "STREAMED";
    case L1Residency::kABand:
      return "A_BAND";
    case L1Residency::kBBand:
      return "B_BAND";
  }
  return "?";
}

KeyLayout KeyLayoutOf(MatmulOp op) { return OperatorSpecOf(op).key_layout; }

std::string_view BatchModelName(uint8_t batch_model) {
  switch (static_cast<BatchModel>(batch_model)) {
    case BatchModel::kForBatch:
      return "FOR_BATCH";
    case BatchModel::kIterBatchSingleBias:
      return "ITER_BATCH_SINGLE_BIAS";
    case BatchModel::kBatchMatMulToMul:
      return "BATCH_MATMUL_TO_MUL";
    case BatchModel::kMergeBatch:
      return "MERGE_BATCH";
    case BatchModel::kFusedBatch:
      return "FUSED_BATCH";
    case BatchModel::kBroadcastBatch:
      return "BROADCAST_BATCH";
    case BatchModel::kIterBatchBroadcastA:
      return "ITER_BATCH_BROADCAST_A";
    case BatchModel::kIterBatchBroadcastB:
      return "ITER_BATCH_BROADCAST_B";
  }
  return "?";
}

std::string_view MatmulOpName(MatmulOp op) { return OperatorSpecOf(op).name; }

absl::StatusOr<MatmulOp> ParseMatmulOp(std::string_view name) {
  for (const OperatorSpec& spec : Operators()) {
    if (name == spec.name || name == spec.cli_name || name == spec.folder) return spec.op;
  }
  std::string expected;
  for (size_t i = 0; i < Operators().size(); ++i) {
    const bool last = i + 1 == Operators().size();
    absl::StrAppend(&expected, i == 0 ? "" : (last ? " or " : ", "),
                    std::string(Operators()[i].cli_name));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown op \"", std::string(name), "\"; expected ", expected));
}

namespace {
constexpr FusedOp kAllFusedOps[] = {FusedOp::kNone,      FusedOp::kAdd,      FusedOp::kMul,
                                    FusedOp::kGeluErf,   FusedOp::kGeluTanh, FusedOp::kRelu,
                                    FusedOp::kCast16To32};
}  // namespace

std::string_view FusedOpName(FusedOp op) {
  switch (op) {
    case FusedOp::kNone:
      return "";
    case FusedOp::kAdd:
      return "add";
    case FusedOp::kMul:
      return "mul";
    case FusedOp::kGeluErf:
      return "gelu_erf";
    case FusedOp::kGeluTanh:
      return "gelu_tanh";
    case FusedOp::kRelu:
      return "relu";
    case FusedOp::kCast16To32:
      return "16cast32";
  }
  return "?";
}

std::string_view FusedOpKeyName(FusedOp op) {
  switch (op) {
    case FusedOp::kNone:
      return "NONE";
    case FusedOp::kAdd:
      return "ADD";
    case FusedOp::kMul:
      return "MUL";
    case FusedOp::kGeluErf:
      return "GELU_ERF";
    case FusedOp::kGeluTanh:
      return "GELU_TANH";
    case FusedOp::kRelu:
      return "RELU";
    case FusedOp::kCast16To32:
      return "16CAST32";
  }
  return "?";
}

absl::StatusOr<FusedOp> ParseFusedOp(std::string_view name) {
  if (name == "none") return FusedOp::kNone;
  for (FusedOp op : kAllFusedOps) {
    if (name == FusedOpName(op) || name == FusedOpKeyName(op)) return op;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown fused op \"", std::string(name),
                   "\"; expected none, relu, add, mul, gelu_erf, gelu_tanh or 16cast32"));
}

uint64_t BatchProduct(const std::vector<int64_t>& dims) {
  uint64_t product = 1;
  for (int64_t dim : dims) product *= static_cast<uint64_t>(dim);
  return product;
}

std::optional<uint64_t> TilingData::Get(std::string_view name) const {
  for (const TilingField& field : fields) {
    if (field.name == name) return field.value;
  }
  return std::nullopt;
}

std::vector<uint32_t> TilingData::RawWords() const {
  std::vector<uint32_t> words;
  words.reserve(fields.size());
  ForEachWord([&words](uint32_t word) { words.push_back(word); });
  return words;
}

}  // namespace npu::tiling
