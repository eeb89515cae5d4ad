// GroupedMatmul's no-quant tiling, as CANN's GroupedNoQuantMatmulTiling
// computes it (gmm/grouped_matmul/op_host/op_tiling/arch35/
// grouped_no_quant_matmul_tiling.cpp): the read of the tensor lists, the
// path's checks, the base block, its L1 depths and, for one group or split
// K, the block re-formed to the cores (the basic kernel deals each group's
// base blocks to the cores one after another).
//
// Vocabulary: the forms name x / weight / y as single (one tensor) or multi
// (a list), in that order: s-s-s is one x [M, K], one weight [E, K, N] and
// one y; s-m-s one x, E weights; m-m-m lists of all three.
//
// Every check is CANN's, in CANN's order, refused as INVALID_ARGUMENT naming
// the field and the rule; CANN's divisions by zero are FAILED_PRECONDITION
// (cann_fault.h). Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_GROUPED_NO_QUANT_NO_QUANT_TILING_H_
#define NPU_SERVER_TILING_GROUPED_NO_QUANT_NO_QUANT_TILING_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/tiling/types.h"

namespace npu::tiling::grouped {

// CANN's constants of the path: the default base block (256 x 256 x 64),
// its L1 steps and depths, the largest group count, the bias table it
// reserves in L1 (256 fp32 words) and the part of L1 its split gives A when
// baseM > baseN (256 KiB).
inline constexpr uint64_t kNoQuantBaseM = 256;
inline constexpr uint64_t kNoQuantBaseN = 256;
inline constexpr uint64_t kNoQuantBaseK = 64;
inline constexpr uint64_t kNoQuantStepK = 4;
inline constexpr uint64_t kNoQuantDepth = 8;
inline constexpr uint32_t kNoQuantMaxGroups = 1024;
inline constexpr uint64_t kNoQuantBiasTableBytes = 256 * 4;
inline constexpr uint64_t kNoQuantPartAL1Bytes = 256 * 1024;
// The 256 bytes of L1 CANN's one-group L1 split counts beyond l1_bytes (it
// reserves them for RPC, which a single operator does not use).
inline constexpr uint64_t kNoQuantRpcL1Bytes = 256;
// Its fixed workspace.
inline constexpr uint64_t kNoQuantWorkspaceBytes = 32;

// What the tiling decided: the words of GMMNoQuantTilingData and the
// launch.
struct NoQuantTiling {
  // The read of the lists.
  bool trans_x = false;
  bool trans_w = false;
  bool single_x = true;
  bool single_w = true;
  bool single_y = true;
  bool has_bias = false;
  bool weight_nz = false;
  // The form CANN read ("s-s-s", "s-m-s", ...), for the plan's detail.
  std::string_view form;
  uint32_t group_num = 0;
  int64_t group_type = 0;  // after the read: the multi forms set -1
  int64_t group_list_type = 0;
  // The largest M, K and N over the groups (M, K of x[0] for a single x).
  uint64_t m = 0, k = 0, n = 0;
  // The plan.
  uint32_t used_core_num = 0;
  uint64_t base_m = kNoQuantBaseM, base_n = kNoQuantBaseN, base_k = kNoQuantBaseK;
  uint64_t step_ka = kNoQuantStepK, step_kb = kNoQuantStepK;
  uint64_t depth_a1 = kNoQuantDepth, depth_b1 = kNoQuantDepth;
  uint64_t m_tail_cnt = 1, n_tail_cnt = 1;
  bool weight_no_l2_cache = false;
  // The block was re-formed to the cores (one group, or split K).
  bool formulated = false;
};

// The no-quant tiling of `grouped` (on the no-quant path: x = weight,
// float16 / bfloat16 / float32) for `chip`'s compile info: its cores and
// L1 / L0A / L0B / L0C / L2 sizes.
absl::StatusOr<NoQuantTiling> TileNoQuant(const GroupedInputs& grouped, const ChipSpec& chip);

// The same problem with the block `base_m` x `base_n` in place of CANN's
// (the advisor's block search): CANN's reads and checks first, then baseK
// as deep as the double-buffered L0A and L0B hold (at most K), the core
// count, tail re-split and L1 steps by CANN's rules for that block.
// INVALID_ARGUMENT naming the block when it is not 16-aligned or L0 cannot
// hold it.
absl::StatusOr<NoQuantTiling> TileNoQuantWithBlock(const GroupedInputs& grouped,
                                                   const ChipSpec& chip, uint64_t base_m,
                                                   uint64_t base_n);

}  // namespace npu::tiling::grouped

#endif  // NPU_SERVER_TILING_GROUPED_NO_QUANT_NO_QUANT_TILING_H_
