// TransposeQuantBatchMatMul's own L1 staging for its MXFP8 and HIFP8 modes:
// how many base blocks of A and of B (with their MX scales) each L1 buffer
// holds, the K steps per load, and the MX scale factors (how many K loads
// of scales one scale load covers).
//
// The arithmetic is CANN's (CalL1Tiling, CalStepKs, GetDepthA1B1 and
// CalScaleFactors of matmul/transpose_quant_batch_mat_mul/op_host/
// op_tiling/arch35/transpose_quant_batch_mat_mul_asw_tiling.cpp): 64-bit
// unsigned sizes, whose differences wrap on an L1 smaller than the blocks,
// and 32-bit scale factors. Where CANN's depth search never ends (a power of
// two grown against a wrapped size) the staging reports it instead of a
// plan. Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_STRATEGIES_TRANSPOSE_QUANT_L1_H_
#define NPU_SERVER_TILING_STRATEGIES_TRANSPOSE_QUANT_L1_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace npu::tiling {

// The base block and operand sizes the staging starts from.
struct QuantL1Input {
  bool mx = false;  // MXFP8: float8_e8m0 scales stage with the blocks
  uint64_t l1_bytes = 0;
  uint64_t base_m = 0, base_n = 0, base_k = 0;
  uint64_t a_bytes = 1, b_bytes = 1;  // bytes per element of x1 and x2
  uint64_t k = 0;
};

struct QuantL1Stage {
  uint64_t depth_a1 = 1, depth_b1 = 1;
  uint64_t step_ka = 1, step_kb = 1;
  // MXFP8: the scale loads' K reach in K loads (CANN's scaleFactorA / B);
  // 1 and 1 otherwise.
  uint32_t scale_factor_a = 1, scale_factor_b = 1;
  // Bytes of one A (B) base block's MX scales (0 outside MXFP8).
  uint64_t scale_a_bytes = 0, scale_b_bytes = 0;
};

// The staging of `input`; kFailedPrecondition (a CANN fault, cann_fault.h)
// when CANN's depth search would never end: the blocks of one stage
// (A, B and their scales) exceed L1.
absl::StatusOr<QuantL1Stage> StageQuantL1(const QuantL1Input& input);

// TCubeTiling's mxTypePara of an MXFP8 plan: bytes [scaleFactorA,
// scaleFactorB, 1, 1] from the low byte up, with 1 / 1 for the factors when
// either lies outside [1, 127].
uint32_t MxTypePara(uint32_t scale_factor_a, uint32_t scale_factor_b);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_TRANSPOSE_QUANT_L1_H_
