// GroupedMatmul's quant path (CANN's gmm/grouped_matmul arch35 tiling of
// int8, hifloat8, fp8 and fp4 experts on DAV_3510): the request as CANN's
// tiling context holds it, the problem after CANN's parse and checks, and
// the calculators' result. The parse (gqmm_parse.h) makes a GqmmFacts from a
// GqmmRequest; the block and L1 calculators (gqmm_tiling.h) read it and the
// chip. Nothing here is shared with QuantBatchMatmulV3's calculators: CANN
// keeps its own copies of them for this operator, and they differ in places.
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_GROUPED_QUANT_GQMM_FACTS_H_
#define NPU_SERVER_TILING_GROUPED_QUANT_GQMM_FACTS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "server/tiling/types.h"

namespace npu::tiling::grouped::quant {

// GE's dtype numbers (metadef's ge::DataType), as CANN's checks compare them.
enum class GeType : uint32_t {
  kFloat = 0,
  kFloat16 = 1,
  kInt8 = 2,
  kInt32 = 3,
  kUint8 = 4,
  kInt64 = 9,
  kUint64 = 10,
  kBFloat16 = 27,
  kInt4 = 29,
  kHiFloat8 = 34,
  kFloat8E5M2 = 35,
  kFloat8E4M3 = 36,
  kFloat8E8M0 = 37,
  kFloat4E2M1 = 40,
  kFloat4E1M2 = 41,
};

// GE's spelling of `type` without the DT_ prefix ("FLOAT8_E4M3FN").
std::string_view GeTypeName(GeType type);

// ge::GetSizeByDataType: bytes per element, and for the sub-byte types
// metadef's 1000 + bits (1004 for int4 and float4), which CANN's L1 model
// multiplies with where it does not treat 4-bit types apart.
uint64_t GeSize(GeType type);

// int4, float4_e2m1 or float4_e1m2: the types CANN sizes at half a byte.
bool IsFourBit(GeType type);
bool IsFp4(GeType type);  // float4_e2m1 or float4_e1m2

// One IR input (or the output y) of GroupedMatmul, viewed where the problem
// holds it: its instances (none: the input is absent, and the tiling sees
// neither a description nor a shape), each with its origin and storage
// shape, and the dtype and format all of them share.
struct GqmmTensor {
  absl::Span<const GroupedShape> instances;
  GeType dtype = GeType::kFloat;
  bool nz = false;  // FRACTAL_NZ storage

  bool present() const { return !instances.empty(); }
};

// A GroupedMatmul request as CANN's tiling context holds it: the IR inputs
// this path reads (x, weight, bias, scale, offset, group_list,
// per_token_scale), the output y and the attributes, each as the context
// carries it (the int64 attributes before CANN narrows them). A view: the
// shapes stay where the problem keeps them.
struct GqmmRequest {
  GqmmTensor x, weight, bias, scale, offset, group_list, per_token_scale, y;
  int64_t split_item = 0;
  bool transpose_weight = false;
  bool transpose_x = false;
  int64_t group_type = 0;       // -1 no split, 0 split M, 2 split K
  int64_t group_list_type = 0;  // 0 cumulative, 1 counts, 2 sparse
  int64_t act_type = 0;
};

// CANN's quant modes of one side (x: the per-token scale, the weight: the
// scale); the values are the aQuantMode / bQuantMode words.
enum GqmmQuantMode : uint32_t {
  kModeDefault = 0,
  kModePerTensor = 1,
  kModePerChannel = 2,
  kModePerToken = 4,
  kModeMx = 8,
  kModePerGroup = 16,
  kModePerBlock = 32,
};

// "DEFAULT", "PERTENSOR", "PERCHANNEL", "PERTOKEN", "MX", "PERGROUP",
// "PERBLOCK".
std::string_view QuantModeName(uint32_t mode);

// The key's KERNEL_TYPE: which dequantization kernel runs.
enum class GqmmKernelType : uint8_t {
  kFixpipeDequant = 0,  // cube only, dequantized in the fixpipe (also MX)
  kVectorDequant = 1,   // mix 1:2, the vector cores dequantize
  kPerGroupBlock = 2,   // mix 1:2, per-group x / per-block weight scales
};

// "DEQUANT_FIXP", "DEQUANT_VECTOR", "PERGROUP_PERBLOCK".
std::string_view KernelTypeName(GqmmKernelType type);

// CANN's split of the group list.
inline constexpr int8_t kGroupSplitM = 0;
inline constexpr int8_t kGroupSplitK = 2;

// The most tensors of a list CANN counts, and the length of each of the
// mList / kList / nList arrays of GMMQuantTilingData.
inline constexpr uint32_t kGqmmMaxTensors = 128;

// The problem after CANN's parse (GroupedQmmTiling::GetShapeAttrsInfo:
// AnalyzeDtype, AnalyzeAttrs, AnalyzeInputs): sizes from x[0] and weight[0],
// the group count from group_list's shape, the dtypes as CANN reads them
// (defaults where an input is absent), the attributes narrowed to CANN's
// int8 members and the quant modes and kernel type it infers.
struct GqmmFacts {
  uint64_t m = 0, k = 0, n = 0;
  uint64_t group_num = 0;
  GeType a = GeType::kInt8, b = GeType::kInt8, c = GeType::kFloat16;
  bool has_bias = false;
  GeType bias = GeType::kInt32;          // INT32 unless a bias with elements
  GeType scale = GeType::kUint64;        // UINT64 when absent or y is INT32
  GeType per_token = GeType::kFloat;     // FLOAT when absent
  bool trans_a = false, trans_b = false;
  bool weight_nz = false;
  int8_t group_type = kGroupSplitM;
  int8_t group_list_type = 0;
  int8_t split_item = 0;
  int8_t act_type = 0;
  bool single_x = false, single_w = false, single_y = false;
  uint32_t a_mode = kModeDefault;
  uint32_t b_mode = kModeDefault;
  GqmmKernelType kernel_type = GqmmKernelType::kFixpipeDequant;
  // Split M with one x and y and an NZ weight given per group, [k, n]
  // each (CANN's single-multi-single weight-NZ layout): the logical n of
  // each weight tensor, in order (at most kGqmmMaxTensors).
  bool nz_weight_list = false;
  std::vector<uint64_t> weight_n;

  bool mx() const { return b_mode == kModeMx; }
  bool group_block() const { return a_mode == kModePerGroup && b_mode == kModePerBlock; }
};

// The block and L1 tiling of one strategy (CANN's GQmmBasicTiling), before
// its words are laid out.
struct GqmmBlock {
  uint64_t single_core_m = 1, single_core_n = 1, single_core_k = 1;
  uint64_t base_m = 1, base_n = 1, base_k = 1;
  uint64_t step_ka = 1, step_kb = 1;
  uint64_t depth_a1 = 1, depth_b1 = 1;
  uint64_t step_m = 1, step_n = 1;
  uint32_t iterate_order = 0;
  uint32_t db_l0c = 1;
  uint32_t scale_factor_a = 1, scale_factor_b = 1;
};

// The key (gqmm_tiling_key.h): QUANT_B_TRANS in bits 1:0, QUANT_A_TRANS in
// 3:2, KERNEL_TYPE in 7:4, each the index of its value in its list.
struct GqmmKey {
  bool trans_b = false;
  bool trans_a = false;
  GqmmKernelType kernel_type = GqmmKernelType::kFixpipeDequant;

  uint64_t Encode() const {
    return uint64_t{trans_b} | uint64_t{trans_a} << 2 | static_cast<uint64_t>(kernel_type) << 4;
  }
};

// The workspace every quant kernel asks for: the library's 16 MiB system
// workspace, nothing of its own.
inline constexpr uint64_t kGqmmWorkspaceBytes = 16ull * 1024 * 1024;

}  // namespace npu::tiling::grouped::quant

#endif  // NPU_SERVER_TILING_GROUPED_QUANT_GQMM_FACTS_H_
