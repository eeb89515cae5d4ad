// WeightQuantBatchMatmulV2's strategies in the engine's registry: CANN's
// three DAV_3510 templates in its order (ADAPTIVE_SPLIT, ANTI_REG,
// CUSTOM_DEPRECATED), each a Strategy that parses the checked problem
// (wq_parse.h) and turns its answer into a plan. A declining template passes
// the problem on; a capable one that fails ends the walk, as in CANN. Part
// of `npu_tiling`.
#ifndef NPU_SERVER_TILING_WEIGHT_QUANT_WQ_ADAPTER_H_
#define NPU_SERVER_TILING_WEIGHT_QUANT_WQ_ADAPTER_H_

#include "absl/status/status.h"
#include "server/tiling/registry.h"

namespace npu::tiling::weight_quant {

// Adds the three strategies to `registry` for
// MatmulOp::kWeightQuantBatchMatmulV2.
absl::Status RegisterWeightQuantStrategies(StrategyRegistry& registry);

}  // namespace npu::tiling::weight_quant

#endif  // NPU_SERVER_TILING_WEIGHT_QUANT_WQ_ADAPTER_H_
