// Registration of the built-in strategies in CANN's DAV_3510 priority order.
#ifndef NPU_SERVER_TILING_BUILTIN_STRATEGIES_H_
#define NPU_SERVER_TILING_BUILTIN_STRATEGIES_H_

#include "server/tiling/registry.h"

namespace npu::tiling {

// Adds MatMulV3's K_EQUAL_ZERO, TO_MUL, TO_MULTI_MUL, BASIC_STREAM_K and
// BASIC_ASWT, in that order (BASIC_ASWT is always capable and acts as the
// fallback), then BatchMatMulV3's and FusedMatMul's lists in CANN's
// DAV_3510 priority order.
void RegisterBuiltinStrategies(StrategyRegistry& registry);

// A registry holding the built-in strategies.
StrategyRegistry MakeBuiltinRegistry();

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_BUILTIN_STRATEGIES_H_
