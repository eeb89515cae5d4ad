// Pieces shared by BatchMatMulV3's batched strategies: the batch-shape tests
// CANN's batched strategies start with, the tiling key, and the base block
// of a batch too large for L0. (BatchMatMulV3BasicTilingData is serialized
// by FillBatchBasicTilingData() of block_heuristics.h.) FusedMatMul runs
// several of these strategies behind its own filter (fused_inherited.h).
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_STRATEGIES_BATCH_SHARED_H_
#define NPU_SERVER_TILING_STRATEGIES_BATCH_SHARED_H_

#include <cstdint>
#include <string_view>

#include "server/tiling/block_heuristics.h"
#include "server/tiling/cube_tiling_search.h"
#include "server/tiling/strategy.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// Whether A's and B's batch slots are equal position by position (after the
// merge of A's batch into M): no batch broadcast.
inline bool EqualBatchSlots(const ProblemFacts& facts) {
  return facts.batch_a_dims == facts.batch_b_dims;
}

// Whether A (B) counts as CANN's transposed non-contiguous view, the {1, 0,
// 2} permutation of a 3-D operand: the flag alone is not enough, because a
// view with a dim of 1 has the strides of a contiguous tensor and CANN's
// test (IsTransposeNonContiguous,
// matmul/mat_mul_v3/op_host/op_tiling/arch35/matmul_v3_tiling_helper.cpp)
// then says no. The view's dims are the batch and the operand's two axes.
inline bool ATransposedView(const MatmulProblem& problem) {
  return problem.batch.a_interleaved && !problem.batch.a.empty() && problem.batch.a.back() > 1 &&
         problem.m > 1 && problem.k > 1;
}
inline bool BTransposedView(const MatmulProblem& problem) {
  return problem.batch.b_interleaved && !problem.batch.b.empty() && problem.batch.b.back() > 1 &&
         problem.k > 1 && problem.n > 1;
}
inline bool AnyTransposedView(const MatmulProblem& problem) {
  return ATransposedView(problem) || BTransposedView(problem);
}

// The key a batched strategy starts from, in BatchMatMulV3's layout: the
// transposes are the problem's and every other field is at its default.
TilingKey BatchKey(const MatmulProblem& problem, ApiLevel api_level, BatchModel batch_model);

// The API level of BatchMatMulV3's tensor-API kernels: TENSOR_LEVEL unless
// the request asked for the basic API.
inline ApiLevel TensorApiLevel(const MatmulProblem& problem) {
  return problem.avoid_tensor_api ? ApiLevel::kBasic : ApiLevel::kTensor;
}

// The base block of one batch too large for L0, from its 16-aligned M, N
// and K (in `base_m`, `base_n`, `base_k` on entry): the smallest of aligned
// M and K (when M < N) or of N and K keeps its size and the L0A / L0B halves
// (elements of `l0a_elem_bytes` / `l0b_elem_bytes`) bound the others; then
// the bias table half and the L0C half bound base_n / the larger side, and
// each ends floor-aligned to 16 (at least 16). CANN's iterated-batch
// strategies (batch_matmul_v3_iterbatch_basicapi_tiling.cpp and
// ..._iterbatch_broadcast_basicapi_tiling.cpp, which sizes L0B by A's dtype).
void CutBatchBaseBlock(const MatmulProblem& problem, const ChipSpec& chip, uint64_t l0a_elem_bytes,
                       uint64_t l0b_elem_bytes, uint64_t& base_m, uint64_t& base_n,
                       uint64_t& base_k);

// The words of BatchMatMulV3TilingData that come from the run state and
// the problem's facts alone (the two GetTilingDataProcess overloads of
// matmul_v3_base_tiling_advanced.h): the cube's blocks and steps, the tails,
// hf32's mmad flag, the batch products and slots, m, n and the buffers. The
// strategy adds its L2 mode and its own words (slice, batch loop).
HighLevelBatchPlan RunStateWords(const ProblemFacts& facts, const ChipSpec& chip,
                                 const CubeRunState& state, bool hf32);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_BATCH_SHARED_H_
