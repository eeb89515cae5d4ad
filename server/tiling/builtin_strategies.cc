#include "server/tiling/builtin_strategies.h"

#include <cassert>
#include <memory>

#include "server/tiling/strategies/fused_data_parallel.h"
#include "server/tiling/strategies/fused_stream_k.h"
#include "server/tiling/strategies/fused_zero_k.h"
#include "server/tiling/strategies/stream_k.h"
#include "server/tiling/strategies/swizzled_data_parallel.h"
#include "server/tiling/strategies/vector_mul.h"
#include "server/tiling/strategies/vector_multi_mul.h"
#include "server/tiling/strategies/zero_k.h"

namespace npu::tiling {

void RegisterBuiltinStrategies(StrategyRegistry& registry) {
  // List order is priority (CANN's DAV_3510 order).
  absl::Status status = registry.Add(std::make_unique<ZeroKStrategy>());
  status.Update(registry.Add(std::make_unique<VectorMulStrategy>()));
  status.Update(registry.Add(std::make_unique<VectorMultiMulStrategy>()));
  status.Update(registry.Add(std::make_unique<StreamKStrategy>()));
  status.Update(registry.Add(std::make_unique<SwizzledDataParallelStrategy>()));  // fallback

  // BatchMatMulV3, CANN's DAV_3510 order
  // (matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_tiling_strategy.h).
  constexpr MatmulOp kBmm = MatmulOp::kBatchMatMulV3;
  status.Update(registry.Add(std::make_unique<BatchZeroKStrategy>(), kBmm));  // #1
  // #2..#11 (BATCH_MATMUL_TO_MUL ... BASE) follow here, in that order.

  // FusedMatMul, CANN's DAV_3510 order
  // (matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_builtin_tiling_strategy.h).
  constexpr MatmulOp kFused = MatmulOp::kFusedMatMul;
  status.Update(registry.Add(std::make_unique<FusedZeroKStrategy>(), kFused));  // #1
  // #2..#7, the batched strategies inherited from BatchMatMulV3
  // (BATCH_STREAM_K ... ASWT_BASIC _INHERITED_FROM_BMMV3), go here, in that order.
  status.Update(registry.Add(std::make_unique<FusedStreamKStrategy>(), kFused));       // #8
  status.Update(registry.Add(std::make_unique<FusedDataParallelStrategy>(), kFused));  // #9
  assert(status.ok() && "built-in strategy names are unique");
  (void)status;
}

StrategyRegistry MakeBuiltinRegistry() {
  StrategyRegistry registry;
  RegisterBuiltinStrategies(registry);
  return registry;
}

}  // namespace npu::tiling
