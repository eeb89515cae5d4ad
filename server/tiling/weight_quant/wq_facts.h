// WeightQuantBatchMatmulV2 (weight-only quantized matmul, y = x @
// antiquant(weight)) as CANN's DAV_3510 tiling sees it after its checks and
// its parse (matmul/weight_quant_batch_matmul_v2/op_host/op_tiling/
// weight_quant_batch_matmul_v2_tiling.cpp: CheckPara, GetShapeAttrsInfo),
// and the facts its three strategies share: the antiquant and quant types,
// the 36-bit tiling key. Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_WEIGHT_QUANT_WQ_FACTS_H_
#define NPU_SERVER_TILING_WEIGHT_QUANT_WQ_FACTS_H_

#include <cstdint>
#include <string_view>

#include "server/tiling/types.h"

namespace npu::tiling::weight_quant {

// CANN's QuantType, as the key's ANTIQUANT_TYPE and QUANT_TYPE fields carry
// it.
enum class QuantType : uint8_t {
  kNone = 0,
  kPerTensor = 1,
  kPerChannel = 2,
  kPerGroup = 3,
  kMx = 4,
};
// "NONE", "PER_TENSOR", "PER_CHANNEL", "PER_GROUP", "MX".
std::string_view QuantTypeName(QuantType type);

// The problem after GetShapeAttrsInfo and its ConfigureReuseScenarios: a
// packed weight (INT32 of eight int4, FLOAT32 of eight float4) reads as its
// element type, and an FP8 / HiF8 per-tensor scale as per-channel.
struct WqFacts {
  uint64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  DataType x = DataType::kFloat16;
  DataType weight = DataType::kInt8;
  DataType y = DataType::kFloat16;
  DataType antiquant_scale = DataType::kFloat16;
  // A bias tensor with elements; its dtype as CANN reads it (float16 when no
  // bias input is wired at all).
  bool has_bias = false;
  DataType bias = DataType::kFloat16;
  bool has_antiquant_offset = false;
  QuantType antiquant = QuantType::kNone;
  QuantType quant = QuantType::kPerTensor;  // no quant scale: PER_TENSOR
  uint64_t group_size = 0;
  bool weight_nz = false;
  uint64_t c0 = 0;  // the NZ weight's last storage dim, in elements
};

// Bytes of one element as GE counts them (ge::GetSizeByDataType) for the
// whole-byte types the strategies size with.
inline uint64_t GeBytes(DataType dtype) {
  return DataTypeBits(dtype) >= 8 ? DataTypeBytes(dtype) : 1;
}

// Bits per element (GetDtypeBits of the tiling tool): 4, 8, 16 or 32.
inline int64_t GeBits(DataType dtype) { return static_cast<int64_t>(DataTypeBits(dtype)); }

// The fields of the 36-bit key (weight_quant_batch_matmul_v2_arch35_tiling_key.h).
struct WqKey {
  uint64_t soc_version_type = 2;  // SUPPORT_L1_TO_BT_BF16 on DAV_3510
  uint64_t sub_algorithm = 0;
  uint64_t template_custom = 0;
  bool trans_a = false, trans_b = false;
  uint64_t antiquant_type = 0;
  uint64_t quant_type = 0;  // the index in QUANT_TYPE's list (= its value)
  bool has_antiquant_offset = false;
  bool has_bias = false;
  bool is_bias_fp32 = false;
  bool is_weight_nz = false;

  uint64_t Pack() const {
    return soc_version_type | sub_algorithm << 12 | template_custom << 16 |
           uint64_t{trans_a} << 22 | uint64_t{trans_b} << 23 | antiquant_type << 24 |
           quant_type << 28 | uint64_t{has_antiquant_offset} << 32 | uint64_t{has_bias} << 33 |
           uint64_t{is_bias_fp32} << 34 | uint64_t{is_weight_nz} << 35;
  }
};

// The key's SUB_ALGORITHM values of the three DAV_3510 strategies.
inline constexpr uint64_t kSubAlgoTailResplit = 2;
inline constexpr uint64_t kSubAlgoBasicBlock = 3;
inline constexpr uint64_t kSubAlgoAntiReg = 5;
inline constexpr uint64_t kSubAlgoCustom = 7;

}  // namespace npu::tiling::weight_quant

#endif  // NPU_SERVER_TILING_WEIGHT_QUANT_WQ_FACTS_H_
