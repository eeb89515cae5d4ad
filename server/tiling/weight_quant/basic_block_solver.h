// The basic-block solver of WeightQuantBatchMatmulV2's ANTI_REG strategy
// (arch35/weight_quant_batch_matmul_v2_basic_block_tiling.{h,cpp} and its
// table, weight_quant_batch_matmul_v2_basic_block_table.h).
//
// It picks the multi-core split (mDim x nDim cube cores), the L0 block
// (baseM, baseN, baseK) and the L1 steps and buffers of a per-group
// problem. First pass: for each power-of-two split of 32 cores that divides
// M and N into whole 16-row pieces, the precomputed table of blocks whose
// modelled MTE2 bandwidth beats the cube's (a 16-bit x with an 8- or 4-bit
// weight) gives "cube-bound" candidates, ranked by cores used, then whole
// blocks over tails, then bandwidth ratio; the first that has an L1 plan
// wins, its L1 plans ranked by the "MTE2-bound" order (cache-line aligned
// inner sizes, L1 load sizes, bandwidth ratio). When that finds nothing, a
// second pass walks every split using at least 80 % of the cores (once one
// has a plan) and every block, and ranks all L1 plans the same way.
//
// The arithmetic is CANN's: int64 sizes, doubles for the bandwidth model
// (0.001 of the 1.6 GHz clock, HBM 1.6, L2 5.4), stable sorts with its
// comparators. Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_WEIGHT_QUANT_BASIC_BLOCK_SOLVER_H_
#define NPU_SERVER_TILING_WEIGHT_QUANT_BASIC_BLOCK_SOLVER_H_

#include <cstdint>

#include "server/tiling/weight_quant/wq_facts.h"

namespace npu::tiling::weight_quant {

struct BasicBlock {
  int64_t base_m = 1, base_n = 1, base_k = 1;
  double mte2_bw = 0, mte2_min_bw = 0, mte2_bw_ratio = 0, mte2_tail_bw_ratio = 0;
};

struct L1Param {
  int64_t iterate_order = 1;  // 0: M outer, 1: N outer
  int64_t step_m = 1, step_n = 1, step_ka = 1, step_kb = 1;
  int64_t a1_buffers = 1, b1_buffers = 1;
};

// CANN's BasicBlockParam: the problem, one candidate's split and blocks.
struct BasicBlockParam {
  int64_t m = 1, n = 1, k = 1;
  int64_t single_m = 1, single_n = 1, single_k = 1;
  int64_t m_dim = 1, n_dim = 1, k_dim = 1;
  int64_t mte2_data_size = 0;
  int64_t group_size = 0;
  int64_t a_bits = 0, b_bits = 0, bias_bits = 0;
  bool trans_a = false, trans_b = true, has_bias = false, weight_nz = false;
  L1Param l1;
  BasicBlock block;
};

// The platform the solver models: ANTI_REG passes the chip's AIC count and
// L1, and fixed 950 values for the rest.
struct SolverPlatform {
  int64_t block_num = 32;
  int64_t ub_bytes = 248 * 1024;
  int64_t l1_bytes = 0;
  int64_t l0a_bytes = 64 * 1024;
  int64_t l0b_bytes = 64 * 1024;
  int64_t l0c_bytes = 256 * 1024;
  int64_t cache_line = 256;
  int64_t min_cache_line = 128;
  double frequency = 1.6;
  double hbm_bw = 1.6;
  double l2_bw = 5.4;
};

// Solves the problem in `param` (m, n, k, group_size, the dtype bits and the
// flags set, the rest default); false when CANN's solver finds no valid
// tiling. `has_offset` and `antiquant` size the UB loads.
bool SolveBasicBlock(const SolverPlatform& platform, bool has_offset, QuantType antiquant,
                     BasicBlockParam* param);

}  // namespace npu::tiling::weight_quant

#endif  // NPU_SERVER_TILING_WEIGHT_QUANT_BASIC_BLOCK_SOLVER_H_
