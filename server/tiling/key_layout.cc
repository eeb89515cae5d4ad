#include "server/tiling/key_layout.h"

#include <iterator>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace npu::tiling {
namespace {

// The fields both layouts share, at the same places (CANN's
// GET_TPL_TILING_KEY order of mat_mul_v3 and batch_mat_mul_v3).
constexpr KeyFieldSpec kApiLevel = {
    "api_level",
    0,
    4,
    2,
    "api_level above 2",
    [](const TilingKey& k) { return static_cast<uint64_t>(k.api_level); },
    [](TilingKey& k, uint64_t v) { k.api_level = static_cast<ApiLevel>(v); }};
constexpr KeyFieldSpec kBatchModel = {
    "batch_model",
    8,
    4,
    7,
    "batch_model above 7",
    [](const TilingKey& k) { return static_cast<uint64_t>(k.batch_model); },
    [](TilingKey& k, uint64_t v) { k.batch_model = static_cast<uint8_t>(v); }};
constexpr KeyFieldSpec kModel = {
    "model",
    12,
    4,
    7,
    "model above 7",
    [](const TilingKey& k) { return static_cast<uint64_t>(k.model); },
    [](TilingKey& k, uint64_t v) { k.model = static_cast<KernelModel>(v); }};
constexpr KeyFieldSpec kFullLoad = {
    "full_load",
    16,
    4,
    3,
    "full_load above 3",
    [](const TilingKey& k) { return static_cast<uint64_t>(k.full_load); },
    [](TilingKey& k, uint64_t v) { k.full_load = static_cast<FullLoad>(v); }};
constexpr KeyFieldSpec kL0cToOut = {
    "l0c2out",
    20,
    4,
    2,
    "l0c2out above 2",
    [](const TilingKey& k) { return static_cast<uint64_t>(k.l0c2out); },
    [](TilingKey& k, uint64_t v) { k.l0c2out = static_cast<L0cToOut>(v); }};

// MatMulV3 and BatchMatMulV3: one bit per transpose, at 4 and 6.
constexpr KeyFieldSpec kMatMulFields[] = {
    kApiLevel,
    kBatchModel,
    kModel,
    kFullLoad,
    kL0cToOut,
    {"trans_a", 4, 1, 1, "bad transpose bits",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.trans_a); },
     [](TilingKey& k, uint64_t v) { k.trans_a = v != 0; }},
    {"trans_b", 6, 1, 1, "bad transpose bits",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.trans_b); },
     [](TilingKey& k, uint64_t v) { k.trans_b = v != 0; }},
};

// FusedMatMul: both transposes as one number (a + 2 b), then the epilogue
// and the inner precision.
constexpr KeyFieldSpec kFusedFields[] = {
    kApiLevel,
    kBatchModel,
    kModel,
    kFullLoad,
    kL0cToOut,
    {"trans", 4, 4, 3, "transpose field above 3",
     [](const TilingKey& k) {
       return static_cast<uint64_t>(k.trans_a) + 2 * static_cast<uint64_t>(k.trans_b);
     },
     [](TilingKey& k, uint64_t v) {
       k.trans_a = (v & 1) != 0;
       k.trans_b = (v & 2) != 0;
     }},
    {"fused_op", 24, 4, static_cast<uint64_t>(FusedOp::kCast16To32), "fused op type above 6",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.fused_op); },
     [](TilingKey& k, uint64_t v) { k.fused_op = static_cast<FusedOp>(v); }},
    {"inner_precise", 28, 2, 3, "inner_precise above 3",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.inner_precise); },
     [](TilingKey& k, uint64_t v) { k.inner_precise = static_cast<uint8_t>(v); }},
};

// QuantBatchMatmulV3 (CANN's ASCENDC_TPL_ARGS_DECL of the quant kernel,
// quant_batch_matmul_v3_apt_tiling_key.h): ATRANS 2 bits, BTRANS 2, the
// batch mode 4, the kernel type 8 and the API level 2, from the low bits up.
constexpr std::string_view kQuantBatchModes[] = {"WITH_BATCH", "WITHOUT_BATCH"};
constexpr std::string_view kQuantKernels[] = {
    "NO_VEC_EPILOGUE_WITH_MMAPI",
    "NO_VEC_EPILOGUE_CUSTOM_GMTOAL1_WITH_MMAPI",
    "VEC_EPILOGUE_WITH_MMAPI",
    "VEC_EPILOGUE_CUSTOM_GMTOAL1_WITH_MMAPI",
    "VEC_EPILOGUE_WITH_CUSTOM_MM",
    "VEC_EPILOGUE_CUSTOM_GMTOABL1_WITH_MMAPI",
    "NO_VEC_EPILOGUE_WITH_BMMAPI",
    "VEC_EPILOGUE_WITH_BMMAPI",
    "NO_VEC_EPILOGUE_CUSTOM_GMTOBL1_WITH_MMAPI",
    "NO_VEC_EPILOGUE_WITH_MMAPI_MX_L0C_PINGPONG",
    "NO_VEC_EPILOGUE_CUSTOM_GMTOAL1_WITH_MMAPI_MX_L0C_PINGPONG",
    "VEC_EPILOGUE_STREAMK"};
constexpr std::string_view kQuantApiLevels[] = {"HIGH", "BASIC", "BLAZE"};

constexpr KeyFieldSpec kQuantFields[] = {
    {"trans_a", 0, 2, 1, "ATRANS above 1",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.trans_a); },
     [](TilingKey& k, uint64_t v) { k.trans_a = v != 0; }},
    {"trans_b", 2, 2, 1, "BTRANS above 1",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.trans_b); },
     [](TilingKey& k, uint64_t v) { k.trans_b = v != 0; }},
    {"batch_mode", 4, 4, 1, "BATCHMODE above 1",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.batch_model); },
     [](TilingKey& k, uint64_t v) { k.batch_model = static_cast<uint8_t>(v); }, kQuantBatchModes},
    {"kernel_type", 8, 8, 11, "KERNELTYPE above 11",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.quant_kernel); },
     [](TilingKey& k, uint64_t v) { k.quant_kernel = static_cast<uint8_t>(v); }, kQuantKernels},
    {"api_level", 16, 2, 2, "APILEVEL above 2",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.api_level); },
     [](TilingKey& k, uint64_t v) { k.api_level = static_cast<ApiLevel>(v); }, kQuantApiLevels},
};

// WeightQuantBatchMatmulV2 on DAV_3510 (CANN's ASCENDC_TPL_ARGS_DECL of
// op_kernel/arch35/weight_quant_batch_matmul_v2_arch35_tiling_key.h), 36
// bits from the low bits up. Every list field holds the index of its value
// in the declared list, which here equals the value (QUANT_TYPE declares
// NOT_USE and PER_TENSOR as the same 1). The key travels whole in
// TilingKey::weight_quant_bits; each field reads its bits from there.
template <int kShift, int kBits>
constexpr uint64_t WqGet(const TilingKey& k) {
  return (k.weight_quant_bits >> kShift) & ((uint64_t{1} << kBits) - 1);
}
template <int kShift, int kBits>
constexpr void WqSet(TilingKey& k, uint64_t v) {
  const uint64_t mask = ((uint64_t{1} << kBits) - 1) << kShift;
  k.weight_quant_bits = (k.weight_quant_bits & ~mask) | ((v << kShift) & mask);
}
constexpr std::string_view kWqSocTypes[] = {
    "RESERVED",          "SUPPORT_L0C_TO_OUT", "SUPPORT_L1_TO_BT_BF16",
    "SUPPORT_MMAD_S8S4", "PLACEHOLDER_4",      "ASCEND910_55"};
constexpr std::string_view kWqAlgorithms[] = {"VECTOR_ANTIQUANT", "MULTI_SCALE_DEQUANT",
                                              "FIXPIPE_ANTIQUANT"};
constexpr std::string_view kWqSubAlgorithms[] = {"VDEFAULT",
                                                 "SPLIT_K",
                                                 "N_FIRST_TAIL_RESPLIT",
                                                 "N_FIRST_BASIC_BLOCK",
                                                 "ASW",
                                                 "ANTI_REG_SCSC",
                                                 "ITERATE_BATCH",
                                                 "CUSTOM_BACKWARD_COMPATIBLE",
                                                 "ITERATE_BATCH_NO_BATCH_OUT"};
constexpr std::string_view kWqTemplates[] = {
    "MTE2_INNER_SIZE_512_BUF_NUM_2",       "MTE2_INNER_SIZE_512_BUF_NUM_4",
    "MTE2_INNER_SIZE_1024_BUF_NUM_2",      "MTE2_INNER_SIZE_256_BUF_NUM_4",
    "MTE2_INNER_SIZE_512_BUF_NUM_DEFAULT", "MTE2_INNER_SIZE_256_BUF_NUM_2",
    "MTE2_INNER_SIZE_1024_BUF_NUM_4"};
constexpr std::string_view kWqAntiquantTypes[] = {"NONE", "PER_TENSOR", "PER_CHANNEL", "PER_GROUP",
                                                  "MX"};
constexpr std::string_view kWqQuantTypes[] = {"NONE", "NOT_USE/PER_TENSOR", "PER_CHANNEL",
                                              "PER_GROUP", "MX"};

#define NPU_WQ_FIELD(name, shift, bits, max, names)                                            \
  KeyFieldSpec {                                                                               \
    name, shift, bits, max, name " above " #max, WqGet<shift, bits>, WqSet<shift, bits>, names \
  }
constexpr KeyFieldSpec kWeightQuantFields[] = {
    NPU_WQ_FIELD("soc_version_type", 0, 4, 5, kWqSocTypes),
    NPU_WQ_FIELD("sub_soc_version_type", 4, 2, 0, {}),
    NPU_WQ_FIELD("antiquant_scenario", 6, 2, 0, {}),
    NPU_WQ_FIELD("algorithm", 8, 4, 2, kWqAlgorithms),
    NPU_WQ_FIELD("sub_algorithm", 12, 4, 8, kWqSubAlgorithms),
    NPU_WQ_FIELD("template_custom", 16, 4, 6, kWqTemplates),
    NPU_WQ_FIELD("api_constexpr", 20, 2, 0, {}),
    {"trans_a", 22, 1, 1, "trans_a above 1", WqGet<22, 1>,
     [](TilingKey& k, uint64_t v) {
       WqSet<22, 1>(k, v);
       k.trans_a = v != 0;
     }},
    {"trans_b", 23, 1, 1, "trans_b above 1", WqGet<23, 1>,
     [](TilingKey& k, uint64_t v) {
       WqSet<23, 1>(k, v);
       k.trans_b = v != 0;
     }},
    NPU_WQ_FIELD("antiquant_type", 24, 4, 4, kWqAntiquantTypes),
    NPU_WQ_FIELD("quant_type", 28, 4, 4, kWqQuantTypes),
    NPU_WQ_FIELD("has_antiquant_offset", 32, 1, 1, {}),
    NPU_WQ_FIELD("has_bias", 33, 1, 1, {}),
    NPU_WQ_FIELD("is_bias_fp32", 34, 1, 1, {}),
    NPU_WQ_FIELD("is_weight_nz", 35, 1, 1, {}),
};
#undef NPU_WQ_FIELD
// TransposeBatchMatMul and TransposeQuantBatchMatMul (CANN's
// ASCENDC_TPL_ARGS_DECL of their kernels, transpose_batch_mat_mul_tiling_key.h
// and transpose_quant_batch_mat_mul_tiling_key.h): PERM_X1 4 bits, PERM_X2 4,
// BATCH_SPLIT 4 (the quantized op's: 2), then API_LEVEL 4 (the quantized
// op's PRECISION_MODE 4), from the low bits up.
constexpr std::string_view kPermX1Names[] = {"PERM_X1_0_1_2", "PERM_X1_1_0_2"};
constexpr std::string_view kPermX2Names[] = {"PERM_X2_0_1_2", "PERM_X2_0_2_1"};
constexpr std::string_view kBatchSplitNames[] = {"BATCH_SPLIT_FALSE", "BATCH_SPLIT_TRUE"};
constexpr std::string_view kTransposeApiLevels[] = {"HIGH_LEVEL", "BASIC_LEVEL", "TENSOR_LEVEL"};
constexpr std::string_view kPrecisionModes[] = {"FP8", "MXFP8", "HIFP8"};

constexpr KeyFieldSpec kPermX1 = {
    "perm_x1",
    0,
    4,
    1,
    "PERM_X1 above 1",
    [](const TilingKey& k) { return static_cast<uint64_t>(k.perm_x1); },
    [](TilingKey& k, uint64_t v) { k.perm_x1 = static_cast<uint8_t>(v); },
    kPermX1Names};
constexpr KeyFieldSpec kPermX2 = {
    "perm_x2",
    4,
    4,
    1,
    "PERM_X2 above 1",
    [](const TilingKey& k) { return static_cast<uint64_t>(k.perm_x2); },
    [](TilingKey& k, uint64_t v) { k.perm_x2 = static_cast<uint8_t>(v); },
    kPermX2Names};

constexpr KeyFieldSpec kTransposeBatchFields[] = {
    kPermX1,
    kPermX2,
    {"batch_split", 8, 4, 1, "BATCH_SPLIT above 1",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.batch_split); },
     [](TilingKey& k, uint64_t v) { k.batch_split = static_cast<uint8_t>(v); }, kBatchSplitNames},
    {"api_level", 12, 4, 2, "API_LEVEL above 2",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.api_level); },
     [](TilingKey& k, uint64_t v) { k.api_level = static_cast<ApiLevel>(v); },
     kTransposeApiLevels},
};

constexpr KeyFieldSpec kTransposeQuantFields[] = {
    kPermX1,
    kPermX2,
    {"batch_split", 8, 2, 1, "BATCH_SPLIT above 1",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.batch_split); },
     [](TilingKey& k, uint64_t v) { k.batch_split = static_cast<uint8_t>(v); }, kBatchSplitNames},
    {"precision_mode", 10, 4, 2, "PRECISION_MODE above 2",
     [](const TilingKey& k) { return static_cast<uint64_t>(k.precision_mode); },
     [](TilingKey& k, uint64_t v) { k.precision_mode = static_cast<uint8_t>(v); },
     kPrecisionModes},
};

// GroupedMatmul (CANN's ASCENDC_TPL_ARGS_DECL of its arch35 kernels:
// non_quant/grouped_matmul_tiling_key.h, quant_adaptive_sliding_window_templates/
// gqmm_tiling_key.h and weight_quant_basic_block/weight_quant_tiling_key.h).
// Each field holds the index of its value in the declared list, from the low
// bits up; the key travels whole in TilingKey::grouped_bits.
template <int kShift, int kBits>
constexpr uint64_t GroupedGet(const TilingKey& k) {
  return (k.grouped_bits >> kShift) & ((uint64_t{1} << kBits) - 1);
}
template <int kShift, int kBits>
constexpr void GroupedSet(TilingKey& k, uint64_t v) {
  const uint64_t mask = ((uint64_t{1} << kBits) - 1) << kShift;
  k.grouped_bits = (k.grouped_bits & ~mask) | ((v << kShift) & mask);
}
#define NPU_GMM_FIELD(name, shift, bits, max, names)                                               \
  KeyFieldSpec {                                                                                   \
    name, shift, bits, max, name " above " #max, GroupedGet<shift, bits>, GroupedSet<shift, bits>, \
        names                                                                                      \
  }
// The transposes, which TilingKey::trans_a / trans_b mirror.
#define NPU_GMM_TRANS(name, member, shift)                                                   \
  KeyFieldSpec {                                                                             \
    name, shift, 2, 1, name " above 1", GroupedGet<shift, 2>, [](TilingKey& k, uint64_t v) { \
      GroupedSet<shift, 2>(k, v);                                                            \
      k.member = v != 0;                                                                     \
    }                                                                                        \
  }
// No-quant: B_TRANS 2 bits, A_TRANS 2.
constexpr KeyFieldSpec kGroupedNoQuantFields[] = {
    NPU_GMM_TRANS("b_trans", trans_b, 0),
    NPU_GMM_TRANS("a_trans", trans_a, 2),
};
// Quant: B_TRANS 2, A_TRANS 2, KERNEL_TYPE 4.
constexpr std::string_view kGroupedQuantKernels[] = {"DEQUANT_FIXP", "DEQUANT_VECTOR",
                                                     "PERGROUP_PERBLOCK"};
constexpr KeyFieldSpec kGroupedQuantFields[] = {
    NPU_GMM_TRANS("b_trans", trans_b, 0),
    NPU_GMM_TRANS("a_trans", trans_a, 2),
    NPU_GMM_FIELD("kernel_type", 4, 4, 2, kGroupedQuantKernels),
};
// Weight-quant: 33 bits.
constexpr std::string_view kGroupedWqWeightTypes[] = {"ND", "FRACTAL_NZ"};
constexpr std::string_view kGroupedWqOffsetOrBias[] = {
    "OFFSET_NO_BIAS_NO",   "OFFSET_NO_BIAS_YES",      "OFFSET_YES_BIAS_NO",
    "OFFSET_YES_BIAS_YES", "OFFSET_NO_BIAS_FP32_YES", "OFFSET_YES_BIAS_FP32_YES"};
constexpr std::string_view kGroupedWqQuantTypes[] = {"NONE", "PER_TENSOR", "PER_CHANNEL",
                                                     "PER_GROUP", "MX"};
constexpr std::string_view kGroupedWqTemplates[] = {
    "MTE2_INNER_SIZE_512_BUF_NUM_2",       "MTE2_INNER_SIZE_512_BUF_NUM_4",
    "MTE2_INNER_SIZE_1024_BUF_NUM_2",      "MTE2_INNER_SIZE_256_BUF_NUM_4",
    "MTE2_INNER_SIZE_512_BUF_NUM_DEFAULT", "MTE2_INNER_SIZE_384_BUF_NUM_3",
    "MTE2_INNER_SIZE_256_BUF_NUM_2",       "MTE2_INNER_SIZE_DYNAMIC_BUF_NUM_4"};
constexpr std::string_view kGroupedWqSubCategories[] = {
    "VDEFAULT", "SPLIT_K", "N_FIRST_TAIL_RESPLIT", "N_FIRST_BASIC_BLOCK"};
constexpr std::string_view kGroupedWqCategories[] = {"VECTOR_ANTIQUANT", "MULTI_SCALE_DEQUANT",
                                                     "CUBE_ANTIQUANT"};
constexpr KeyFieldSpec kGroupedWeightQuantFields[] = {
    NPU_GMM_FIELD("w_type", 0, 4, 1, kGroupedWqWeightTypes),
    NPU_GMM_FIELD("offset_or_bias", 4, 4, 5, kGroupedWqOffsetOrBias),
    NPU_GMM_FIELD("c_quant_type", 8, 4, 4, kGroupedWqQuantTypes),
    NPU_GMM_FIELD("w_quant_type", 12, 4, 4, kGroupedWqQuantTypes),
    NPU_GMM_TRANS("b_trans", trans_b, 16),
    NPU_GMM_TRANS("a_trans", trans_a, 18),
    NPU_GMM_FIELD("template_custom", 20, 4, 7, kGroupedWqTemplates),
    NPU_GMM_FIELD("single_multi_single", 24, 1, 1, {}),
    NPU_GMM_FIELD("algorithm_sub_category", 25, 4, 3, kGroupedWqSubCategories),
    NPU_GMM_FIELD("algorithm_category", 29, 4, 2, kGroupedWqCategories),
};
#undef NPU_GMM_TRANS
#undef NPU_GMM_FIELD

constexpr KeyLayoutSpec kLayouts[] = {
    {KeyLayout::kMatMul, "MATMUL", kMatMulFields, /*reserved_mask=*/0xA0, "bad transpose bits",
     /*width=*/24},
    {KeyLayout::kFused, "FUSED", kFusedFields, /*reserved_mask=*/0, "", /*width=*/30},
    {KeyLayout::kQuant, "QUANT", kQuantFields, /*reserved_mask=*/0, "", /*width=*/18,
     /*listed=*/true},
    {KeyLayout::kWeightQuant, "WEIGHT_QUANT", kWeightQuantFields, /*reserved_mask=*/0, "",
     /*width=*/36, /*listed=*/true},
    {KeyLayout::kTransposeBatch, "TRANSPOSE_BATCH", kTransposeBatchFields, /*reserved_mask=*/0, "",
     /*width=*/16, /*listed=*/true},
    {KeyLayout::kTransposeQuant, "TRANSPOSE_QUANT", kTransposeQuantFields, /*reserved_mask=*/0, "",
     /*width=*/14, /*listed=*/true},
    {KeyLayout::kGroupedNoQuant, "GROUPED_NO_QUANT", kGroupedNoQuantFields, /*reserved_mask=*/0, "",
     /*width=*/4, /*listed=*/true},
    {KeyLayout::kGroupedQuant, "GROUPED_QUANT", kGroupedQuantFields, /*reserved_mask=*/0, "",
     /*width=*/8, /*listed=*/true},
    {KeyLayout::kGroupedWeightQuant, "GROUPED_WEIGHT_QUANT", kGroupedWeightQuantFields,
     /*reserved_mask=*/0, "", /*width=*/33, /*listed=*/true},
};

constexpr bool InLayoutOrder() {
  for (size_t i = 0; i < std::size(kLayouts); ++i) {
    if (static_cast<size_t>(kLayouts[i].layout) != i) return false;
  }
  return true;
}
static_assert(InLayoutOrder(), "kLayouts must be in KeyLayout order");

// The key's fields packed by the table `kFields`, unrolled at compile time
// so that each field is a constant accessor, shift and or.
template <const auto& kFields, size_t... kIndex>
uint64_t PackFields(const TilingKey& key, std::index_sequence<kIndex...>) {
  return ((kFields[kIndex].get(key) << kFields[kIndex].shift) | ...);
}
template <const auto& kFields>
uint64_t Pack(const TilingKey& key) {
  return PackFields<kFields>(key, std::make_index_sequence<std::size(kFields)>());
}

}  // namespace

std::string_view KeyValueName(const KeyFieldSpec& field, uint64_t value) {
  return value < field.value_names.size() ? field.value_names[value] : std::string_view();
}

const KeyLayoutSpec& KeyLayoutSpecOf(KeyLayout layout) {
  return kLayouts[static_cast<size_t>(layout)];
}

uint64_t TilingKey::Encode() const {
  switch (layout) {
    case KeyLayout::kMatMul:
      break;
    case KeyLayout::kFused:
      return Pack<kFusedFields>(*this);
    case KeyLayout::kQuant:
      return Pack<kQuantFields>(*this);
    case KeyLayout::kWeightQuant:
      return Pack<kWeightQuantFields>(*this);
    case KeyLayout::kTransposeBatch:
      return Pack<kTransposeBatchFields>(*this);
    case KeyLayout::kTransposeQuant:
      return Pack<kTransposeQuantFields>(*this);
    case KeyLayout::kGroupedNoQuant:
      return Pack<kGroupedNoQuantFields>(*this);
    case KeyLayout::kGroupedQuant:
      return Pack<kGroupedQuantFields>(*this);
    case KeyLayout::kGroupedWeightQuant:
      return Pack<kGroupedWeightQuantFields>(*this);
  }
  return Pack<kMatMulFields>(*this);
}

absl::StatusOr<TilingKey> TilingKey::Decode(uint64_t key, KeyLayout layout) {
  const KeyLayoutSpec& spec = KeyLayoutSpecOf(layout);
  TilingKey out;
  out.layout = layout;
  for (const KeyFieldSpec& field : spec.fields) {
    const uint64_t value = (key >> field.shift) & ((uint64_t{1} << field.bits) - 1);
    if (value > field.max_value) {
      return absl::InvalidArgumentError(
          absl::StrCat("tiling key: ", std::string(field.range_error)));
    }
    field.set(out, value);
  }
  if ((key & spec.reserved_mask) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tiling key: ", std::string(spec.reserved_error)));
  }
  if (spec.width < 64 && (key >> spec.width) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tiling key: bits above ", spec.width - 1, " set"));
  }
  return out;
}

}  // namespace npu::tiling
