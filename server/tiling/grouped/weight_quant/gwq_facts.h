// GroupedMatmul's weight-quant path (x and weight of different dtypes:
// A16W8, A16W4, A16-MXFP4, A8W4, MX-A8W4) as CANN's DAV_3510 tiling sees it
// after its checks and its parse (gmm/grouped_matmul/op_host/op_tiling/
// arch35/grouped_weight_quant_batch_matmul_tiling.cpp: AnalyzeAttr), and the
// facts its one strategy computes with: the antiquant forms, the shape lists,
// the 33-bit tiling key. These are GroupedMatmul's own copies; they share no
// code with WeightQuantBatchMatmulV2's (server/tiling/weight_quant/). Part of
// `npu_tiling`.
#ifndef NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_FACTS_H_
#define NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_FACTS_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "server/tiling/types.h"

namespace npu::tiling::grouped::weight_quant {

// The tensor-list capacity of the tiling data's gmmArray (CANN's
// MAX_TENSOR_CONT): per-group m / k / n of at most 128 groups.
inline constexpr int kGwqMaxTensors = 128;

// CANN's group_type attribute values.
inline constexpr int64_t kGroupNoSplit = -1;
inline constexpr int64_t kGroupSplitM = 0;
inline constexpr int64_t kGroupSplitK = 2;

// The antiquant (weight) and quant (output) types as the key's W_QUANT_TYPE
// and C_QUANT_TYPE carry them (CANN's QuantType; the value is also the
// index in the key's declared list).
enum class GwqQuantType : uint8_t {
  kNone = 0,
  kPerTensor = 1,
  kPerChannel = 2,
  kPerGroup = 3,
  kMx = 4,
};
// "NONE", "PER_TENSOR", "PER_CHANNEL", "PER_GROUP", "MX".
std::string_view GwqQuantTypeName(GwqQuantType type);

// The kernel's UB staging of the weight (CANN's Mte2Configuration), the
// key's TEMPLATE_CUSTOM; the key holds its index in the declared list
// (0-6, and 15 at index 7).
enum class GwqMte2Config : uint8_t {
  kInner512Buf2 = 0,
  kInner512Buf4 = 1,
  kInner1024Buf2 = 2,
  kInner256Buf4 = 3,
  kInner512Default = 4,    // A8W4
  kInner384Buf3 = 5,       // A8W4 with group size 192
  kInner256Buf2 = 6,       // A16W4 ND per-group
  kInnerDynamicBuf4 = 15,  // MX-A8W4: the K length adapts
};
std::string_view GwqMte2ConfigName(GwqMte2Config config);
// The index of `config` in TEMPLATE_CUSTOM's declared list.
uint64_t GwqMte2ConfigIndex(GwqMte2Config config);

// ge::GetSizeByDataType: bytes per element; a sub-byte type reports 1000 +
// its bits (so no sub-byte type is "2 bytes").
constexpr int GwqGeSize(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kFloat32:
    case DataType::kInt32:
      return 4;
    case DataType::kInt8:
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
    case DataType::kHiFloat8:
    case DataType::kFloat8E8M0:
      return 1;
    case DataType::kInt64:
    case DataType::kUint64:
      return 8;
    case DataType::kInt4:
    case DataType::kFloat4E2M1:
    case DataType::kFloat4E1M2:
      return 1004;
  }
  return -1;
}

// The problem after AnalyzeAttr: its checks passed, SetShapeList read the
// shape lists, SetAntiquantGroupSize the group size.
struct GwqFacts {
  // Compile info: cube and vector core counts.
  uint32_t aic_num = 0;
  uint32_t aiv_num = 0;
  // Attributes.
  bool trans_a = false;  // transpose_x (refused when true)
  bool trans_b = false;  // transpose_weight
  int64_t group_type = kGroupSplitM;
  int64_t group_list_type = 0;
  int64_t split_item = 0;
  // The forms: one tensor or a list of x, weight and y. single-multi-single
  // is MX-A8W4's one x, per-expert weights and one y.
  bool single_x = true;
  bool single_weight = true;
  bool single_y = true;
  bool single_multi_single = false;
  // Dtypes. `weight` is the element type after SetShapeList (a packed INT32
  // / FLOAT32 weight of eight int4 / float4_e2m1 reads as its element type
  // in the single-x forms; the multi-tensor form keeps the packed type);
  // `weight_input` is the input's own dtype.
  DataType x = DataType::kFloat16;
  DataType weight = DataType::kInt4;
  DataType weight_input = DataType::kInt4;
  DataType antiquant_scale = DataType::kFloat16;
  bool has_bias = false;
  DataType bias = DataType::kFloat16;
  bool has_antiquant_offset = false;
  bool weight_nz = false;
  // IsA16W4ND: a 2-byte x with an int4 / packed-int32 ND weight.
  bool a16w4_nd = false;
  // IsMxA8W4: float8_e4m3fn x, float4_e2m1 / packed-float32 weight, E8M0
  // antiquant scale.
  bool mx_a8w4 = false;
  // Shapes: the largest m, k and n of the groups (m of one x: its first
  // dim), n after unpacking; n_ori is what the kernel writes per row of y
  // (y's last dim for an NZ weight).
  uint64_t m = 0;
  uint64_t k = 0;
  uint64_t n = 0;
  uint64_t n_ori = 0;
  uint32_t group_num = 0;
  // K elements per antiquant scale; 0 for per-channel.
  uint32_t group_size = 0;
  // gmmArray: per group m (-1 when one x holds every group), k and n.
  std::array<int32_t, kGwqMaxTensors> m_list{};
  std::array<int32_t, kGwqMaxTensors> k_list{};
  std::array<int32_t, kGwqMaxTensors> n_list{};

  // IsA16W4NDPergroup.
  bool A16W4NdPerGroup() const { return a16w4_nd && group_size > 0; }
  // An int8 x with an int4 weight (after unpacking): A8W4.
  bool A8W4() const { return x == DataType::kInt8 && weight == DataType::kInt4; }
  // The MX-A8W4 kernel's dtypes (after unpacking).
  bool MxA8W4Kernel() const {
    return x == DataType::kFloat8E4M3 && weight == DataType::kFloat4E2M1 &&
           antiquant_scale == DataType::kFloat8E8M0;
  }
  // Every tensor a list: x, weight and y.
  bool MultiMultiMulti() const { return !single_x && !single_weight && !single_y; }
};

// The key's fields (op_kernel/arch35/weight_quant_basic_block/
// weight_quant_tiling_key.h): each template argument's index in its declared
// list, low bits first: W_TYPE[3:0], OFFSET_OR_BIAS[7:4], C_QUANT_TYPE[11:8],
// W_QUANT_TYPE[15:12], B_TRANS[17:16], A_TRANS[19:18], TEMPLATE_CUSTOM[23:20],
// IS_SINGLE_MULTI_SINGLE[24], ALGORITHM_SUB_CATEGORY[28:25],
// ALGORITHM_CATEGORY[32:29].
struct GwqKey {
  uint64_t w_type = 0;          // 0 ND, 1 FRACTAL_NZ
  uint64_t offset_or_bias = 0;  // 2 with an antiquant offset (the host never sets the bias bit)
  uint64_t c_quant_type = 0;    // NONE
  uint64_t w_quant_type = 0;    // GwqQuantType
  uint64_t b_trans = 0;
  uint64_t a_trans = 0;
  uint64_t template_custom = 0;  // GwqMte2ConfigIndex()
  uint64_t single_multi_single = 0;
  uint64_t algorithm_sub_category = 0;  // 2 N_FIRST_TAIL_RESPLIT, 3 N_FIRST_BASIC_BLOCK
  uint64_t algorithm_category = 0;      // 0 VECTOR_ANTIQUANT

  uint64_t Pack() const {
    return w_type | offset_or_bias << 4 | c_quant_type << 8 | w_quant_type << 12 | b_trans << 16 |
           a_trans << 18 | template_custom << 20 | single_multi_single << 24 |
           algorithm_sub_category << 25 | algorithm_category << 29;
  }
};

// ALGORITHM_SUB_CATEGORY values of the one strategy.
inline constexpr uint64_t kGwqSubTailResplit = 2;
inline constexpr uint64_t kGwqSubBasicBlock = 3;

}  // namespace npu::tiling::grouped::weight_quant

#endif  // NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_FACTS_H_
