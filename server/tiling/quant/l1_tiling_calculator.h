// How many base blocks of K the sliding-window strategies stage in L1 per
// load (stepKa/stepKb) and keep resident (depthA1/depthB1), after CANN's
// QuantBatchMatmulV3 L1TilingDataCalculator on DAV_3510
// (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/l1_tiling_data_calculator.cpp).
//
// Ported: DEFAULT and A_L1_FULL_LOAD, for MX inputs with their scale
// factors (how many K loads one MX scale load covers). Not ported: B full
// load, the DAV_RESV pass-optimized / depth-maximized modes, and STREAMK.
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_L1_TILING_CALCULATOR_H_
#define NPU_SERVER_TILING_QUANT_L1_TILING_CALCULATOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/tiling/quant/quant_facts.h"
#include "server/tiling/types.h"

namespace npu::tiling::quant {

enum class L1TilingMode { kDefault, kAFullLoad };

struct L1Tiling {
  uint64_t depth_ka = 0, depth_kb = 0;
  uint64_t step_ka = 0, step_kb = 0;
  // MX only: K loads of A (B) per load of its scale; 0 for other inputs.
  uint64_t scale_factor_a = 0, scale_factor_b = 0;
};

// L1 left for A and B once the double-buffered bias and per-channel scale
// rows of one baseN are reserved (none of the scale for INT32 output).
// kFailedPrecondition if those alone exceed L1.
absl::StatusOr<uint64_t> L1BytesForAB(const QuantFacts& facts, const ChipSpec& chip,
                                      uint64_t base_n);

// CANN's L1 split for `mode`. kFailedPrecondition where CANN fails (a zero
// block, a step that rounds to zero, A, its scale or B's loads not fitting
// beside a fully loaded A, no room for an MX scale load).
absl::StatusOr<L1Tiling> ComputeL1Tiling(const QuantFacts& facts, const ChipSpec& chip,
                                         uint64_t base_m, uint64_t base_n, uint64_t base_k,
                                         L1TilingMode mode);

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_L1_TILING_CALCULATOR_H_
