// QuantBatchMatmulV3's strategies in the engine's registry: each of CANN's
// seven DAV_3510 strategies, in CANN's order, as a Strategy that reads the
// parsed problem (ProblemFacts::quant) and turns its CANN words into a plan.
// A capable strategy that fails ends the walk, as in CANN. Part of
// `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_QUANT_ADAPTER_H_
#define NPU_SERVER_TILING_QUANT_QUANT_ADAPTER_H_

#include "absl/status/statusor.h"
#include "server/tiling/quant/quant_facts.h"
#include "server/tiling/registry.h"
#include "server/tiling/types.h"

namespace npu::tiling::quant {

// Adds the seven strategies to `registry` for MatmulOp::kQuantBatchMatmulV3.
absl::Status RegisterQuantStrategies(StrategyRegistry& registry);

// The name of the quant mode CANN inferred (TilingResponse.quant_mode):
// MX, PERBLOCK / PERTILE, DOUBLE_SCALE, PERTOKEN, PERCHANNEL or PERTENSOR.
std::string_view QuantModeName(const QuantFacts& facts);

// The engine's plan of a QuantPlan: the key in the quant layout, the struct
// its word count names, the block sizes a launch check reads, and the kernel
// type (int4 inputs run every kernel mixed 1 AIC : 2 AIV).
absl::StatusOr<TilingPlan> PlanOfQuant(const QuantPlan& quant, const QuantFacts& facts);

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_QUANT_ADAPTER_H_
