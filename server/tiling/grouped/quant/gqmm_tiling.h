// GroupedMatmul's quant path: the block and L1 calculators of its two
// DAV_3510 strategies, on the parsed problem (gqmm_facts.h) and the chip the
// tiling context's platform describes (its cube core count, L1 and L0C).
//
// Both strategies share the base block (CalBasicBlock: 256 x 256 x 128 bytes
// of k, clipped to the problem and aligned; 128-element blocks for
// per-group x with per-block weights; k aligned to 64 for MX) and the L1
// reservations (an INT32 or MX-fp4 bias, a per-channel fixpipe scale). Then
//
//   - GroupedQmmTiling (GMMQuantTilingData, 440 words) fills L1 with a
//     power-of-two common depth and grows the side with room left
//     (CalL1Depth), halves the depths into step Ks, and for MX sizes the
//     scales' extra k depth (scale factors) from the L1 still free;
//   - GroupedQmmBasicApiTiling (GMMQuantBasicApiTilingData, 18 words; MX
//     fp8 / fp4 x only) takes each side's depth from the 64 KiB an MTE2
//     load needs for full bandwidth, falls back to the common depth when
//     that overflows L1, grows the non-transposed side for a k not a
//     multiple of 128, and equalises the scale factors over the larger
//     depth.
//
// Where CANN's own code divides by zero or loops forever (an m or n of 0
// with split K, a k of 0 with MX split K), the calculators return
// CannFaultError naming the division; where CANN refuses (L1 overflow, a
// zero scale factor), FAILED_PRECONDITION naming the sizes. Part of
// `npu_tiling`.
#ifndef NPU_SERVER_TILING_GROUPED_QUANT_GQMM_TILING_H_
#define NPU_SERVER_TILING_GROUPED_QUANT_GQMM_TILING_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/tiling/grouped/quant/gqmm_facts.h"

namespace npu::tiling::grouped::quant {

// The platform values the quant strategies read (GetPlatformInfo): the cube
// core count (also the block dim) and the L1 and L0C bytes.
struct GqmmPlatform {
  uint32_t aic_num = 0;
  uint64_t l1_bytes = 0;
  uint64_t l0c_bytes = 0;
};

// CANN's base block and the fields every L1 model starts from
// (CalBasicBlock, then InitCommonL1TilingFields).
GqmmBlock BaseBlock(const GqmmFacts& f, const GqmmPlatform& platform);

// GroupedQmmTiling's block and L1 tiling (CalBasicBlock, CalL1Tiling).
absl::StatusOr<GqmmBlock> GeneralTiling(const GqmmFacts& f, const GqmmPlatform& platform);

// GroupedQmmBasicApiTiling's block and L1 tiling (CalBasicBlock, its own
// CalL1Tiling), for MX problems.
absl::StatusOr<GqmmBlock> MxBasicApiTiling(const GqmmFacts& f, const GqmmPlatform& platform);

// TCubeTiling.mxTypePara of an MX plan: the scale factors of A (bits 7:0)
// and B (15:8) when both lie in [1, 127], else 1, with 1 in bits 23:16 and
// 31:24.
uint32_t MxTypePara(const GqmmBlock& block);

// GMMQuantBasicApiTilingData's scaleKAL1 (= scaleKBL1): the k one load of
// the scales covers, the larger side's scale factor times its step K times
// baseK, at most k.
uint64_t MxScaleKL1(const GqmmFacts& f, const GqmmBlock& block);

}  // namespace npu::tiling::grouped::quant

#endif  // NPU_SERVER_TILING_GROUPED_QUANT_GQMM_TILING_H_
