// Which of CANN's seven QuantBatchMatmulV3 strategies (DAV_3510) accept a
// problem, in the order CANN tries them, and the shared predicates behind
// those answers (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/
// quant_batch_matmul_v3_tiling_util.h and each strategy's IsCapable).
//
// Two CANN facts shape this file:
//  - INT4 x INT4: CUBE_BASIC_API_ASW and MIX_ASW judge (and, when they accept,
//    tile) such a problem as INT8 x INT8; every other strategy sees INT4.
//  - MX_STREAMK accepts only when its cost model (the "benefit gate",
//    stream_k_tiling.h) admits the problem. IsStrategyCapable(kMxStreamK)
//    answers only what the gate is conditioned on (StreamKInputCapable());
//    MxStreamKStrategy::IsCapable adds the gate.
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_QUANT_CAPABILITY_H_
#define NPU_SERVER_TILING_QUANT_QUANT_CAPABILITY_H_

#include <array>
#include <string>
#include <string_view>

#include "server/tiling/quant/quant_facts.h"
#include "server/tiling/types.h"

namespace npu::tiling::quant {

enum class QuantStrategyId {
  kMxStreamK,
  kMxBasicApiAsw,
  kCubeBasicApiAsw,
  kCubeAsw,
  kMixBasicApiAsw,
  kMixAsw,
  kPerblockBasicApiAsw,
};

// CANN's try order on DAV_3510 (quant_batch_matmul_v3_tiling_strategy.h).
inline constexpr std::array<QuantStrategyId, 7> kQuantStrategyOrder = {
    QuantStrategyId::kMxStreamK,           QuantStrategyId::kMxBasicApiAsw,
    QuantStrategyId::kCubeBasicApiAsw,     QuantStrategyId::kCubeAsw,
    QuantStrategyId::kMixBasicApiAsw,      QuantStrategyId::kMixAsw,
    QuantStrategyId::kPerblockBasicApiAsw,
};

// CANN's name of the strategy ("MX_STREAMK", ...).
std::string_view QuantStrategyName(QuantStrategyId id);

// Whether strategy `id` accepts the problem (MX_STREAMK: its inputs only,
// without its benefit gate; see the file comment). `reason`, when not null, gets a short note.
bool IsStrategyCapable(QuantStrategyId id, const QuantFacts& facts, const ChipSpec& chip,
                       std::string* reason);

// --- Shared predicates (named after CANN's) -------------------------------

// x1 and x2 are both INT4 (the pair CUBE_BASIC_API_ASW and MIX_ASW rewrite).
bool IsInt4Pair(const QuantFacts& facts);

// Pure-cube dequant: double per-tensor scale without per-channel; per-tensor
// INT8 with an INT32 (or absent) bias and no per-token scale; per-tensor
// FP8/HIF8 with an integer (UINT64/INT64) scale; per-channel with an integer
// scale or INT32 output. INT4 x INT4 counts as INT8 x INT8.
bool IsCubeBasicApiCapable(const QuantFacts& facts);

// MX FP8 x FP8 (E4M3/E5M2 mixable) or MX FP4 x FP4.
bool IsMxBasicApiCapable(const QuantFacts& facts);

// Per-block (x1's scale is per-block) with an ND or NZ weight.
bool IsPerblockBasicApiCapable(const QuantFacts& facts);

// FP8/HIF8 with a double per-tensor scale, both scales FLOAT and a FLOAT bias
// (the dequant must then run on the vector cores).
bool IsFp8OrHif8TTFloatBiasMix(const QuantFacts& facts);

// The dtypes the mix Tensor-API kernel handles: INT8 -> BF16 with no, BF16 or
// FLOAT bias; E4M3 or HIF8 with no or FLOAT bias; x1 == x2; output not INT32.
bool IsMixTensorApi(const QuantFacts& facts);

// IsCubeBasicApiCapable, not MX, not the FP8/HIF8 float-bias mix.
bool IsNonMxCubeBasicApiCapable(const QuantFacts& facts);

// An NZ weight taken by the cube basic-API kernel (needs the Tensor API).
bool IsWeightNzNonMxCubeBasicApiCapable(const QuantFacts& facts);

// Per-channel with a scale that is not UINT64/INT64: dequant on vector cores.
bool IsScaleVecPostProcess(const QuantFacts& facts);

// CANN's "bf16 mix" (SetBf16Compat): a float scale per channel, a float scale
// per tensor on INT8 with a FLOAT/BF16 bias, or the FP8/HIF8 float-bias mix;
// never with INT32 output.
bool IsBf16Mix(const QuantFacts& facts);

// --- MX_STREAMK's input conditions -----------------------------------------

// MX FP8 x FP8 or FP4 x FP4.
bool IsMxStreamKInput(const QuantFacts& facts);
// A bias applied after the dequant on the vector cores (INT8 with a matching
// FLOAT/BF16 scale and bias, or double FLOAT scale with a FLOAT bias).
bool IsPostDequantBiasInput(const QuantFacts& facts);
// The non-MX per-tensor inputs the Stream-K kernel handles.
bool IsPertensorStreamKInput(const QuantFacts& facts);
// Everything MX_STREAMK checks before its benefit gate: the input kind, no
// batch, aiv == 2 * aic, deterministic level <= 1, the Tensor API. The gate
// and the all-Stream-K condition for post-dequant bias (which needs the
// gate's tile count) are MxStreamKStrategy's (stream_k_tiling.h).
bool StreamKInputCapable(const QuantFacts& facts, const ChipSpec& chip, std::string* reason);

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_QUANT_CAPABILITY_H_
