// CANN's MX_STREAMK QuantBatchMatmulV3 strategy on DAV_3510
// (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/qbmm_streamk_tiling.cpp):
// MX FP8/FP4 and the non-MX per-tensor inputs of quant_capability.h
// (StreamKInputCapable), tiled Stream-K style: the output tiles that do not
// fill a whole round of cube cores have their K range split over the idle
// cores, and the vector cores reduce the partial sums from the workspace.
//
// CANN tries this strategy first, and only takes it where a cost model (its
// "benefit gate", EvaluateStreamKBenefitGate) predicts a gain over the
// sliding window: the Stream-K split must use at least as many cores as the
// window, and either the window cannot fill the cores (small M x N) or the
// split saves enough MTE2 traffic to pay for the reduction. The model is pure
// integer arithmetic that saturates instead of overflowing.
//
// Emits the 42-word Stream-K basic-API struct, key (tA, tB, WITHOUT_BATCH,
// kernel 11, BLAZE), all cube cores, schedule mode 1.
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_STREAM_K_TILING_H_
#define NPU_SERVER_TILING_QUANT_STREAM_K_TILING_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/tiling/quant/quant_facts.h"
#include "server/tiling/quant/quant_strategy.h"
#include "server/tiling/types.h"

namespace npu::tiling::quant {

// The gate's verdict, with the quantities it was decided on.
struct StreamKGateResult {
  bool admit = false;
  const char* reason = "reject";  // CANN's reason tag ("mte2_reuse_saving", ...)
  // The sliding-window side: the shadow of what the ASW strategies would
  // pick (or the best searched candidate when there is no shadow).
  uint64_t aswt_mn_count = 0;
  uint64_t aswt_util_permille = 0;
  bool aswt_a_full_load = false;
  // The Stream-K side.
  uint64_t sk_base_m = 0, sk_base_n = 0, sk_base_k = 0;
  uint64_t sk_mn_count = 0;
  uint64_t sk_single_core_k = 0;
  uint64_t sk_split_k = 1;
  uint64_t sk_util_permille = 0;
  // The MTE2 model (large M x N only).
  uint64_t aswt_mte2_bytes = 0, sk_mte2_bytes = 0, saved_mte2_bytes = 0;
  uint64_t saved_mte2_permille = 0;
  uint64_t extra_bytes = 0, extra_time_ns = 0;
  uint64_t saved_time_ns = 0, required_saved_time_ns = 0;
};

// CANN's EvaluateStreamKBenefitGate for a problem that StreamKInputCapable
// accepts.
StreamKGateResult EvaluateStreamKGate(const QuantFacts& facts, const ChipSpec& chip);

// BaseBlockCalculator's STREAMK mode.
struct StreamKBlock {
  uint64_t base_m = 0, base_n = 0, base_k = 0;
  uint64_t m_count = 0, n_count = 0;  // after the small-M x N widening
  uint64_t stream_k_count = 1;        // K pieces per tile
  uint64_t single_core_k = 0;         // K of one piece, 256-byte aligned
};

// kFailedPrecondition where CANN's calculator fails (no cores, a zero
// alignment, L0A too small for one K step).
absl::StatusOr<StreamKBlock> ComputeStreamKBlock(const QuantFacts& facts, const ChipSpec& chip,
                                                 uint64_t batch_core_count);

// L1TilingDataCalculator's STREAMK mode.
struct StreamKL1 {
  uint64_t step_k = 0;                              // stepKa == stepKb
  uint64_t depth_k = 0;                             // depthA1 == depthB1 == 2 * step_k
  uint64_t scale_factor_a = 1, scale_factor_b = 1;  // MX only
};

// kFailedPrecondition when no K step fits L1 (with its MX scales).
absl::StatusOr<StreamKL1> ComputeStreamKL1(const QuantFacts& facts, const ChipSpec& chip,
                                           uint64_t base_m, uint64_t base_n, uint64_t base_k,
                                           uint64_t single_core_k);

inline constexpr int kStreamKWordCount = 42;

class MxStreamKStrategy : public QuantStrategy {
 public:
  std::string_view name() const override { return "MX_STREAMK"; }
  // StreamKInputCapable, the benefit gate, and for a bias added after the
  // dequant, an all-Stream-K schedule (fewer tiles than cube cores).
  bool IsCapable(const QuantFacts& facts, const ChipSpec& chip, std::string* reason) const override;
  absl::StatusOr<QuantPlan> DoTiling(const QuantFacts& facts, const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_STREAM_K_TILING_H_
