// The high-level matmul API's tiling search (CANN's TCubeTiling), as the
// BatchMatMulV3 strategies ITER_BATCH_BROADCAST_BASICAPI, ITER_BATCH and BASE
// run it.
//
// Those strategies describe the problem to asc-devkit's MultiCoreMatmulTiling
// (`InitTCubeTilingData`, matmul/mat_mul_v3/op_host/op_tiling/arch35/
// matmul_v3_base_tiling_advanced.h) and call GetTiling(), which searches a
// multi-core split, an L0 block and the L1 depths
// (impl/adv_api/tiling/matmul/matmul_tiling_algorithm.cpp, Process()). The
// search can fail, and then the strategy fails; on success it fills the
// 50-word TCubeTiling that heads BatchMatMulV3TilingData, most of which the
// strategy then overwrites with its own plan (HighLevelBatchTilingData below).
//
// Only the part of the search these callers reach is reproduced: inputs in
// GM, in ND or FRACTAL_NZ (BatchMatMulV3 passes A and C in ND),
// fp16/bf16/fp32, an optional bias, any core count; no fixed split, no
// single-core shape, no batch layout, no split K, no sparse/MX/int8 data, no
// L1-resident (TSCM) inputs and no N-buffer schedule.
#ifndef NPU_SERVER_TILING_CUBE_TILING_SEARCH_H_
#define NPU_SERVER_TILING_CUBE_TILING_SEARCH_H_

#include <array>
#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// What InitTCubeTilingData tells the search about one problem. The core
// count and the buffer spaces come from the chip (CANN's compile info).
struct CubeTilingSearchInput {
  DataType a_dtype = DataType::kFloat16;
  DataType b_dtype = DataType::kFloat16;
  DataType c_dtype = DataType::kFloat16;
  std::optional<DataType> bias_dtype;  // set when the matmul has a bias
  Format a_format = Format::kNd;
  Format b_format = Format::kNd;
  Format c_format = Format::kNd;
  bool trans_a = false;
  bool trans_b = false;
  // Shape and original shape alike (CANN sets both to m, n, k). After
  // BatchMatMulV3's merge of A's batch into M.
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  // SetBufferSpace(L1, L0C) without a UB size (WeightQuantBatchMatmulV2's
  // custom tiling): the UB stays the default's, so a chip UB above it does
  // not make the call drop L1 and L0C too.
  bool keep_default_ub = false;
};

// TCubeTiling (asc-devkit include/adv_api/matmul/matmul_tilingdata.h), every
// field by name, in struct order.
struct CubeTiling {
  int32_t used_core_num = 0;
  int32_t m = 0;
  int32_t n = 0;
  int32_t ka = 0;
  int32_t kb = 0;
  int32_t single_core_m = 0;
  int32_t single_core_n = 0;
  int32_t single_core_k = 0;
  int32_t base_m = 0;
  int32_t base_n = 0;
  int32_t base_k = 0;
  int32_t depth_a1 = 0;
  int32_t depth_b1 = 0;
  int32_t step_m = 0;
  int32_t step_n = 0;
  int32_t is_bias = 0;
  int32_t trans_length = 0;
  int32_t iterate_order = 0;
  int32_t share_mode = 0;
  int32_t share_l1_size = 0;
  int32_t share_l0c_size = 0;
  int32_t share_ub_size = 0;
  int32_t batch_m = 0;
  int32_t batch_n = 0;
  int32_t single_batch_m = 0;
  int32_t single_batch_n = 0;
  int32_t step_ka = 0;
  int32_t step_kb = 0;
  int32_t depth_al1_cache_ub = 0;
  int32_t depth_bl1_cache_ub = 0;
  int32_t db_l0a = 0;
  int32_t db_l0b = 0;
  int32_t db_l0c = 0;
  int32_t a_layout_b = 0;
  int32_t a_layout_s = 0;
  int32_t a_layout_n = 0;
  int32_t a_layout_g = 0;
  int32_t a_layout_d = 0;
  int32_t b_layout_b = 0;
  int32_t b_layout_s = 0;
  int32_t b_layout_n = 0;
  int32_t b_layout_g = 0;
  int32_t b_layout_d = 0;
  int32_t c_layout_b = 0;
  int32_t c_layout_s1 = 0;
  int32_t c_layout_n = 0;
  int32_t c_layout_g = 0;
  int32_t c_layout_s2 = 0;
  int32_t batch_num = 0;
  int32_t mx_type_para = 0;
};

// Number of 32-bit words of TCubeTiling.
inline constexpr int kCubeTilingWords = 50;

// The 50 words of `tiling` in struct order (cube_tiling_words.cc, with
// HighLevelBatchTilingData()).
std::array<uint32_t, kCubeTilingWords> CubeTilingWords(const CubeTiling& tiling);

// What a high-level BatchMatMulV3 strategy writes into BatchMatMulV3TilingData
// next to and over the search's words (CANN's runInfo, batch info and args as
// the two GetTilingDataProcess overloads for MatMulV3TilingData and
// BatchMatMulV3TilingData read them, matmul_v3_base_tiling_advanced.h).
// Defaults are CANN's runInfo defaults (matmul_v3_common_advanced.h).
struct HighLevelBatchPlan {
  // Over TCubeTiling's words.
  uint32_t used_core_num = 1;
  uint32_t single_core_m = 1;
  uint32_t single_core_n = 1;
  uint32_t single_core_k = 1;
  uint32_t base_m = 1;
  uint32_t base_n = 1;
  uint32_t base_k = 1;
  uint32_t depth_a1 = 1;
  uint32_t depth_b1 = 1;
  uint32_t step_m = 1;
  uint32_t step_n = 1;
  uint32_t step_ka = 1;
  uint32_t step_kb = 1;
  uint32_t iterate_order = 0;
  uint32_t db_l0c = 0;
  uint32_t iter_batch = 0;  // TCubeTiling's BatchNum and the struct's iterBatch
  // MatMulV3TilingData's words.
  uint32_t m_tail_cnt = 1;
  uint32_t n_tail_cnt = 1;
  uint32_t k_tail_cnt = 1;
  uint32_t m_base_tail_split_cnt = 1;
  uint32_t n_base_tail_split_cnt = 1;
  uint32_t m_tail_main = 0;
  uint32_t n_tail_main = 0;
  uint32_t mmad_param = 0;  // 1 with hf32
  // SetDisableL2cache(baseM * stepM, baseK * stepKa, baseK * stepKb, baseN * stepN).
  uint32_t l2_cache_disable = 0;
  uint32_t aic_num = 1;  // aswWindowLen derives from it
  // Batch dims: products, and the four right-aligned slots (index i = CANN's
  // batchX<i>).
  uint32_t batch_a = 1;
  uint32_t batch_b = 1;
  uint32_t batch_c = 1;
  uint32_t batch_bias = 1;
  std::array<uint32_t, 4> a_dims{1, 1, 1, 1};
  std::array<uint32_t, 4> b_dims{1, 1, 1, 1};
  std::array<uint32_t, 4> c_dims{1, 1, 1, 1};
  uint32_t batch_out_num = 1;
  // M and N of the problem (after the merge of A's batch into M): mL1 and nL1
  // are the per-load extents clipped to them.
  uint64_t m = 0;
  uint64_t n = 0;
  uint32_t l1_buffer_num = 2;
  uint32_t ub_db = 1;
  // GetSliceInfo: baseM and 1 unless A is a sliced view.
  uint32_t slice_m = 1;
  uint32_t src_nd_stride = 1;
  uint32_t inner_batch = 0;
  uint32_t iter_batch_l1 = 1;
  uint32_t iter_batch_l0 = 1;
  uint32_t broadcast_axis_a = 4;
  uint32_t broadcast_axis_b = 4;
};

// The 90-word BatchMatMulV3TilingData (HighLevelBatchField) of a high-level
// strategy: `searched`'s TCubeTiling with `plan` written over it, then the
// rest of the struct from `plan`.
TilingData HighLevelBatchTilingData(const CubeTiling& searched, const HighLevelBatchPlan& plan);

// Runs the search for `input` on `chip` (its cube-core count and its L1, L0C
// and UB sizes). kFailedPrecondition, saying which check failed, when CANN's
// GetTiling returns -1.
absl::StatusOr<CubeTiling> SearchCubeTiling(const CubeTilingSearchInput& input,
                                            const ChipSpec& chip);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_CUBE_TILING_SEARCH_H_
