// The bytes a cube plan occupies in each on-chip buffer of one AIC, and the
// check that they fit the chip.
//
// One formula per buffer, shared by the engine (`CheckPlanFits()` in
// registry.h, which rejects a plan its strategy built) and the emulator
// (`CheckBuffers()` in emulator/program.h, which names the tiling field of an
// explicit plan at fault). The formulas are the kernel's actual use, the same
// the emulator's instruction streams load: L0A / L0B in two ping-pong halves,
// L0C holding l0cDB fp32 output blocks, the bias table one fp32 row of the
// block, and L1 the two ping-pong stages of each streamed operand (kL1 deep;
// stepKa / stepKb base_k slices next to a fully loaded matrix), a whole
// resident matrix (padded to the 16-element fractal, as the NZ layout stores
// it) or a resident band of it. The bias row staged through L1 is not
// counted: CANN's heuristics size the A / B buffers to leave it room (the
// streamed branch keeps 1 KiB back, full load stays within 3/4 of L1), and
// CANN's own fit check does not count it, so counting it would turn plans
// CANN runs into errors. Each caller words its own error. Part of
// `npu_tiling_types`.
#ifndef NPU_SERVER_TILING_PLAN_FIT_H_
#define NPU_SERVER_TILING_PLAN_FIT_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include "server/tiling/batch_shape.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// On-chip buffers of an AIC, in the order FindBufferOverflow() checks them.
enum class CubeBuffer : uint8_t { kL0a, kL0b, kL0c, kBiasTable, kL1 };

// "L0A", "L0B", "L0C", "BT", "L1".
std::string_view CubeBufferName(CubeBuffer buffer);

// Bytes a plan needs in each buffer of one AIC.
struct CubeBufferDemand {
  uint64_t l0a_bytes = 0;
  uint64_t l0b_bytes = 0;
  uint64_t l0c_bytes = 0;
  uint64_t bias_table_bytes = 0;
  uint64_t l1_bytes = 0;
  // The parts of l1_bytes: A (stages, whole matrix or band) and B.
  uint64_t l1_a_bytes = 0;
  uint64_t l1_b_bytes = 0;
  // The K depth of one streamed L1 stage: max(kL1, baseK).
  uint64_t stage_k = 0;
};

// Computes the buffer demand of a cube plan (kernel_type other than
// kAivOnly) for `problem`: the `buffer_demand` of its kernel's row
// (kernel_table.h), one of the formulas below.
CubeBufferDemand ComputeCubeBufferDemand(const TilingPlan& plan, const MatmulProblem& problem);

// The streamed kernels' demand (MatMulV3's cube structs, the batch basic
// and high-level structs): from the plan's block tiling, full-load mode and
// L1 residency.
inline CubeBufferDemand StreamedBufferDemand(const TilingPlan& plan, const MatmulProblem& problem);

// The batch kernels that hold several whole batches per buffer
// (matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/): ITER_BATCH
// iterBatchL1 batches of fractal-padded A and B in each of two L1 stages
// and iterBatchL0 base blocks in each L0 half (its capability check
// divides the halves by one batch's blocks); MERGE_BATCH one L0 block of
// batchL0 batches (M merged across them, N side by side) in each half, and
// kL1 of batchAL1 (batchBL1) batches per L1 stage.
CubeBufferDemand IterBatchBufferDemand(const TilingPlan& plan, const MatmulProblem& problem);
CubeBufferDemand MergeBatchBufferDemand(const TilingPlan& plan, const MatmulProblem& problem);

// The transposed batch matmuls' kernels (BatchMatMulV3TilingData): the L0
// halves of the block; in L1 depthA1 (depthB1) base blocks of A (B), with
// their MX scales (an MXFP8 plan's scale factors of them) and an INT8 y's
// dequantization words for one block of columns.
CubeBufferDemand TransposeBufferDemand(const TilingPlan& plan, const MatmulProblem& problem);

// A buffer whose demand exceeds the chip.
struct BufferOverflow {
  CubeBuffer buffer = CubeBuffer::kL0a;
  uint64_t need_bytes = 0;
  uint64_t have_bytes = 0;
};

// Returns the first buffer (in CubeBuffer order) that `demand` overflows on
// `chip`, or nothing when every buffer fits.
inline std::optional<BufferOverflow> FindBufferOverflow(const CubeBufferDemand& demand,
                                                        const ChipSpec& chip);

// Implementation. Inline: the engine checks every plan it decides, and the
// check is a few multiplications.
namespace plan_fit_internal {

// Elements of an axis once padded to whole cube fractals.
inline uint64_t FractalPadded(uint64_t elements) { return CeilAlign(elements, kBlock16); }

// L1 bytes of one operand: the whole matrix (`edge` x K) or a resident band
// (`band_edge` x K), both padded to fractals as the NZ layout stores them,
// or two ping-pong stages of `block_edge` x `stage_k`.
inline uint64_t OperandL1Bytes(bool whole, bool band, uint64_t edge, uint64_t band_edge,
                               uint64_t block_edge, uint64_t stage_k, uint64_t k,
                               uint64_t elem_bytes) {
  if (whole) return FractalPadded(edge) * FractalPadded(k) * elem_bytes;
  if (band) return band_edge * FractalPadded(k) * elem_bytes;
  return kDoubleBuffer * block_edge * stage_k * elem_bytes;
}

}  // namespace plan_fit_internal

inline CubeBufferDemand StreamedBufferDemand(const TilingPlan& plan, const MatmulProblem& problem) {
  const BlockTiling& b = plan.block;
  const uint64_t a_bytes = DataTypeBytes(problem.dtype_a);
  const uint64_t b_bytes = DataTypeBytes(problem.dtype_b);
  CubeBufferDemand d;
  d.l0a_bytes = kDoubleBuffer * b.base_m * b.base_k * a_bytes;
  d.l0b_bytes = kDoubleBuffer * b.base_k * b.base_n * b_bytes;
  d.l0c_bytes = b.base_m * b.base_n * kFp32Bytes * std::max<uint64_t>(1, b.l0c_db);
  d.bias_table_bytes = problem.has_bias ? b.base_n * kFp32Bytes : 0;

  const FullLoad full = plan.key.full_load;
  const bool a_whole = full == FullLoad::kA || full == FullLoad::kAB;
  const bool b_whole = full == FullLoad::kB || full == FullLoad::kAB;
  uint64_t m = static_cast<uint64_t>(problem.m);
  const uint64_t n = static_cast<uint64_t>(problem.n), k = static_cast<uint64_t>(problem.k);
  // A batch merged into M (B without batch, A not transposed) makes A one
  // [batch_a * m, k] matrix for the kernel (MergeBatchAndMAxis,
  // matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_tiling_advanced.cpp).
  if (MergesBatchIntoM(problem)) m *= BatchProduct(problem.batch.a);
  // The streamed kernel stages kL1 of K per buffer; next to a whole
  // resident matrix the full-load kernels stage stepKa (stepKb) base_k
  // slices of the streamed operand. A resident band is one L1 block of rows
  // (columns), cut at the matrix edge.
  d.stage_k = std::max(b.k_l1, b.base_k);
  d.l1_a_bytes = plan_fit_internal::OperandL1Bytes(
      a_whole, plan.l1_residency == L1Residency::kABand, m, std::min<uint64_t>(b.m_l1, m), b.base_m,
      b_whole ? b.base_k * b.step_ka : d.stage_k, k, a_bytes);
  d.l1_b_bytes = plan_fit_internal::OperandL1Bytes(
      b_whole, plan.l1_residency == L1Residency::kBBand, n, std::min<uint64_t>(b.n_l1, n), b.base_n,
      a_whole ? b.base_k * b.step_kb : d.stage_k, k, b_bytes);
  d.l1_bytes = d.l1_a_bytes + d.l1_b_bytes;
  return d;
}

[[gnu::always_inline]] inline std::optional<BufferOverflow> FindBufferOverflow(
    const CubeBufferDemand& demand, const ChipSpec& chip) {
  if (demand.l0a_bytes > chip.l0a_bytes) {
    return BufferOverflow{CubeBuffer::kL0a, demand.l0a_bytes, chip.l0a_bytes};
  }
  if (demand.l0b_bytes > chip.l0b_bytes) {
    return BufferOverflow{CubeBuffer::kL0b, demand.l0b_bytes, chip.l0b_bytes};
  }
  if (demand.l0c_bytes > chip.l0c_bytes) {
    return BufferOverflow{CubeBuffer::kL0c, demand.l0c_bytes, chip.l0c_bytes};
  }
  if (demand.bias_table_bytes > chip.bt_bytes) {
    return BufferOverflow{CubeBuffer::kBiasTable, demand.bias_table_bytes, chip.bt_bytes};
  }
  if (demand.l1_bytes > chip.l1_bytes) {
    return BufferOverflow{CubeBuffer::kL1, demand.l1_bytes, chip.l1_bytes};
  }
  return std::nullopt;
}

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_PLAN_FIT_H_
