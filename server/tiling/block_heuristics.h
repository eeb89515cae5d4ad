// The cube-side block heuristics shared by the Stream-K and swizzled
// data-parallel (ASWT) strategies.
//
// They reproduce CANN's arch35 `mat_mul_v3` helper steps: the DAV_3510 base
// block reset, the roofline-guided search for (base_m, base_n), the base_k
// limit from L0A, the K staging of L1, the tail-round re-split, the fixpipe
// output choice, and the serialization of `MatMulV3BasicTilingData`. Each
// function reads and updates one `CubeRunState`, the working copy of a plan
// while a strategy is deciding it.
#ifndef NPU_SERVER_TILING_BLOCK_HEURISTICS_H_
#define NPU_SERVER_TILING_BLOCK_HEURISTICS_H_

#include <cstdint>

#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/strategy.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// K is the contiguous axis of A or of B in GM.
inline bool KIsInnerAxis(const MatmulProblem& problem) {
  return !problem.trans_a || problem.trans_b;
}

// The mutable plan a cube strategy builds step by step.
struct CubeRunState {
  uint64_t used_core_num = 1;
  uint64_t base_m = 1, base_n = 1, base_k = 1;
  uint64_t single_core_m = 1, single_core_n = 1, single_core_k = 1;
  uint64_t step_ka = 1, step_kb = 1, step_m = 1, step_n = 1;
  uint64_t depth_a1 = 1, depth_b1 = 1;
  uint64_t l0c_db = 1, ub_db = 1, l1_buffer_num = 2;
  uint64_t m_base_tail_split_cnt = 1, n_base_tail_split_cnt = 1;
  uint64_t tail_m_cnt = 1, tail_n_cnt = 1, tail_k_cnt = 1;
  uint64_t m_tail_main = 0, n_tail_main = 0;
  // Roofline figures from RebalanceBlock(): the MTE2 re-read intensity of
  // the chosen blocks (1/base_m + 1/base_n) and the intensity at which the
  // cube, not MTE2, becomes the bound.
  double cube_bound_param = 0.0;
  double cube_bound_edge = 0.0;
};

// Starts from DAV_3510's defaults: 256x256 blocks, 128-byte base_k, every
// cube core, the whole K on one core.
void ResetBase(const ProblemFacts& facts, const ChipSpec& chip, CubeRunState& state);

// Searches (base_m, base_n) by balancing MTE2 re-reads against the tail
// round's load balance, then sets base_k, the used cores and the L0C / UB
// double buffers.
void RebalanceBlock(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                    CubeRunState& state);

// Chooses how many base_k slices of A and B each L1 stage holds.
void StageL1(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
             CubeRunState& state);
// The same for an operand layout given apart from the problem: `k_inner`
// when K is the contiguous axis of A or of B in GM, with `usable_l1` bytes
// of L1 for the stages (CANN's CalL1Tiling of mat_mul_v3, which takes the
// bias and output-scale staging off L1 first).
void StageL1Steps(bool k_inner, uint64_t usable_l1, const ProblemFacts& facts,
                  const ChipSpec& chip, CubeRunState& state);

// Splits the tail round's blocks into m x n pieces so that it fills more
// cores, keeping each piece's inner axis above 128 bytes.
void SplitTailRound(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                    CubeRunState& state);

// The fixpipe output mode of the data-parallel kernels: AIV-assisted ND
// output when small K, large M and unaligned N make the fixpipe the bound.
L0cToOut ChooseFixpipeOutput(const MatmulProblem& problem, const ProblemFacts& facts,
                             const ChipSpec& chip, const CubeRunState& state);

// CANN's base_k for a base_m x base_n block: the whole aligned K when it fits
// the L0A ping-pong half, else a 256-byte multiple (a 16-element one when
// only A is transposed), else the largest of 128 / 64 / 32 / 16 that fits;
// 0 when not even 16 fits.
uint64_t CannBaseK(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                   uint64_t base_m, uint64_t base_n);

// L0C buffers of a base_m x base_n fp32 output block: two when both fit.
inline uint64_t L0cDoubleBuffer(const ChipSpec& chip, uint64_t base_m, uint64_t base_n) {
  return base_m * base_n * kFp32Bytes * kDoubleBuffer <= chip.l0c_bytes ? kDoubleBuffer : 1;
}

// Whether an ND, non-slice data-parallel plan without full load splits its
// K inside the core (BASIC_SPLIT_K): fp32 operands without hf32 and K of at
// least 2048, which keeps each fp32 accumulation chain short.
inline bool UsesFp32SplitK(const MatmulProblem& problem, const ProblemFacts& facts) {
  // Past this K an fp32 accumulation chain in L0C loses too much precision.
  constexpr uint64_t kFp32SplitKThreshold = 2048;
  const bool fp32 = problem.dtype_a == DataType::kFloat32 && problem.dtype_b == DataType::kFloat32;
  const bool nd = problem.format_a == Format::kNd && problem.format_b == Format::kNd;
  return !facts.a_slice_3d && fp32 && !problem.hf32 && nd && facts.k >= kFp32SplitKThreshold;
}

// The streamed kernel's L1 stages: L1 (less 1 KiB for the bias table
// staging when there is a bias) split evenly between double-buffered A and B
// stages of base_k-deep slices; sets step_ka / step_kb and the depths.
// False, with nothing set, when not even one slice of each fits twice.
inline bool StageStreamedL1(const MatmulProblem& problem, const ProblemFacts& facts,
                            const ChipSpec& chip, CubeRunState& state) {
  // L1 reserved for the bias table staging of the streamed plan (256 fp32).
  constexpr uint64_t kBiasTableL1Bytes = 256 * 4;
  const uint64_t l1_for_ab = problem.has_bias ? chip.l1_bytes - kBiasTableL1Bytes : chip.l1_bytes;
  const uint64_t steps =
      l1_for_ab / kDoubleBuffer / ((state.base_m + state.base_n) * state.base_k) / facts.a_bytes;
  if (steps == 0) return false;
  state.step_ka = steps;
  state.step_kb = steps;
  state.depth_a1 = steps * kDoubleBuffer;
  state.depth_b1 = steps * kDoubleBuffer;
  return true;
}

// Splits the tail round of `tiles` L1 tiles along one axis only (the axis
// that keeps a resident operand whole): tail_m_cnt (`along_n` false) or
// tail_n_cnt grows while the pieces fill idle cores and, when that axis is
// the operand's inner axis in GM, stay above 128 bytes.
void SplitTailRoundAlong(const MatmulProblem& problem, const ProblemFacts& facts,
                         const ChipSpec& chip, uint64_t tiles, bool along_n, CubeRunState& state);

// Applies the bias-table limit on base_n that every cube plan gets last.
void LimitBaseNForBias(const MatmulProblem& problem, const ChipSpec& chip, CubeRunState& state);

// CANN's L2CacheMode (SetDisableL2cache, matmul_v3_base_tiling_advanced.h):
// bit 0 when A, bit 1 when B is read exactly once and may bypass L2. Only
// when all tensors together exceed L2; in the batch context every batch of
// A, B and C counts. `m_l1`, `k_l1` and `n_l1` are the L1 cut of the
// plan; the state gives the base blocks and tail counts.
uint64_t L2CacheDisableMode(const MatmulProblem& problem, const ProblemFacts& facts,
                            const ChipSpec& chip, const CubeRunState& state, uint64_t m_l1,
                            uint64_t k_l1, uint64_t n_l1);
// The same with the transposes given apart from the problem and A's and B's
// K cuts apart (`ka_l1`, `kb_l1`).
uint64_t L2CacheDisableMode(bool trans_a, bool trans_b, const ProblemFacts& facts,
                            const ChipSpec& chip, const CubeRunState& state, uint64_t m_l1,
                            uint64_t ka_l1, uint64_t kb_l1, uint64_t n_l1);

// Serializes MatMulV3BasicTilingData (field names and order as CANN's kernel
// reads them) and fills the typed BlockTiling of `plan`.
void FillBasicTilingData(const MatmulProblem& problem, const ProblemFacts& facts,
                         const ChipSpec& chip, const CubeRunState& state, TilingPlan& plan);

// Serializes BatchMatMulV3BasicTilingData: the MatMulV3BasicTilingData
// fields of FillBasicTilingData(), then batchDimAll (C's batch count) and
// batchX3 (CANN's GetTilingDataProcess, matmul_v3_base_tiling_advanced.h).
void FillBatchBasicTilingData(const MatmulProblem& problem, const ProblemFacts& facts,
                              const ChipSpec& chip, const CubeRunState& state, TilingPlan& plan);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_BLOCK_HEURISTICS_H_
