#include "server/tiling/builtin_strategies.h"

#include <cassert>
#include <memory>

#include "server/tiling/grouped/no_quant/no_quant_strategy.h"
#include "server/tiling/grouped/quant/gqmm_strategy.h"
#include "server/tiling/grouped/weight_quant/gwq_strategy.h"
#include "server/tiling/quant/quant_adapter.h"
#include "server/tiling/strategies/batch_data_parallel.h"
#include "server/tiling/strategies/batch_full_load.h"
#include "server/tiling/strategies/batch_iterate.h"
#include "server/tiling/strategies/batch_merge.h"
#include "server/tiling/strategies/batch_searched.h"
#include "server/tiling/strategies/batch_stream_k.h"
#include "server/tiling/strategies/batch_to_vector_mul.h"
#include "server/tiling/strategies/fused_data_parallel.h"
#include "server/tiling/strategies/fused_inherited.h"
#include "server/tiling/strategies/fused_stream_k.h"
#include "server/tiling/strategies/fused_zero_k.h"
#include "server/tiling/strategies/stream_k.h"
#include "server/tiling/strategies/swizzled_data_parallel.h"
#include "server/tiling/strategies/transpose_batch.h"
#include "server/tiling/strategies/vector_mul.h"
#include "server/tiling/strategies/vector_multi_mul.h"
#include "server/tiling/strategies/zero_k.h"
#include "server/tiling/weight_quant/wq_adapter.h"

namespace npu::tiling {

void RegisterBuiltinStrategies(StrategyRegistry& registry) {
  // List order is priority (CANN's DAV_3510 order).
  constexpr MatmulOp kMm = MatmulOp::kMatMulV3;
  absl::Status status = registry.Add(std::make_unique<ZeroKStrategy>(), kMm);
  status.Update(registry.Add(std::make_unique<VectorMulStrategy>(), kMm));
  status.Update(registry.Add(std::make_unique<VectorMultiMulStrategy>(), kMm));
  status.Update(registry.Add(std::make_unique<StreamKStrategy>(), kMm));
  status.Update(registry.Add(std::make_unique<SwizzledDataParallelStrategy>(), kMm));  // fallback

  // BatchMatMulV3, CANN's DAV_3510 order
  // (matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_tiling_strategy.h).
  constexpr MatmulOp kBmm = MatmulOp::kBatchMatMulV3;
  status.Update(registry.Add(std::make_unique<BatchZeroKStrategy>(), kBmm));  // #1
  status.Update(registry.Add(std::make_unique<BatchToVectorMulStrategy>(), kBmm));
  status.Update(registry.Add(std::make_unique<BatchStreamKStrategy>(), kBmm));
  status.Update(registry.Add(std::make_unique<BatchMergeStrategy>(), kBmm));
  status.Update(registry.Add(std::make_unique<BatchIterateBroadcastStrategy>(), kBmm));
  status.Update(registry.Add(std::make_unique<BatchIterateStrategy>(), kBmm));
  status.Update(registry.Add(std::make_unique<BatchIterateSearchedStrategy>(), kBmm));
  status.Update(registry.Add(std::make_unique<BatchFullLoadStrategy>(FullLoad::kA), kBmm));
  status.Update(registry.Add(std::make_unique<BatchFullLoadStrategy>(FullLoad::kB), kBmm));
  status.Update(registry.Add(std::make_unique<BatchDataParallelStrategy>(), kBmm));
  status.Update(registry.Add(std::make_unique<BatchSearchedFallbackStrategy>(), kBmm));  // #11

  // FusedMatMul, CANN's DAV_3510 order
  // (matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_builtin_tiling_strategy.h).
  constexpr MatmulOp kFused = MatmulOp::kFusedMatMul;
  status.Update(registry.Add(std::make_unique<FusedZeroKStrategy>(), kFused));  // #1
  // #2 to #7 are BatchMatMulV3's, behind FusedMatMul's filters (fused_inherited.h).
  status.Update(registry.Add(InheritedBatchStreamK(), kFused));
  status.Update(registry.Add(InheritedMergeBatch(), kFused));
  status.Update(registry.Add(InheritedIterBatch(), kFused));
  status.Update(registry.Add(InheritedFullLoad(FullLoad::kA), kFused));
  status.Update(registry.Add(InheritedFullLoad(FullLoad::kB), kFused));
  status.Update(registry.Add(InheritedDataParallel(), kFused));                        // #7
  status.Update(registry.Add(std::make_unique<FusedStreamKStrategy>(), kFused));       // #8
  status.Update(registry.Add(std::make_unique<FusedDataParallelStrategy>(), kFused));  // #9
  // QuantBatchMatmulV3, CANN's DAV_3510 order
  // (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/quant_batch_matmul_v3_tiling_strategy.h).
  status.Update(quant::RegisterQuantStrategies(registry));
  // WeightQuantBatchMatmulV2, CANN's DAV_3510 priorities 7, 8 and 11
  // (weight_quant_batch_matmul_v2_tiling_registry.cpp).
  status.Update(weight_quant::RegisterWeightQuantStrategies(registry));
  // TransposeBatchMatMul and TransposeQuantBatchMatMul: one DAV_3510
  // strategy each
  // (matmul/transpose_batch_mat_mul/op_host/op_tiling/arch35/transpose_batch_mat_mul_tiling_strategy.h,
  // matmul/transpose_quant_batch_mat_mul/op_host/op_tiling/arch35/transpose_quant_batch_mat_mul_tiling_strategy.h).
  status.Update(
      registry.Add(std::make_unique<TransposeBatchStrategy>(), MatmulOp::kTransposeBatchMatMul));
  status.Update(registry.Add(std::make_unique<TransposeQuantBatchStrategy>(),
                             MatmulOp::kTransposeQuantBatchMatMul));
  // GroupedMatmul (gmm/grouped_matmul/op_host/op_tiling/grouped_matmul_tiling.cpp,
  // TilingGMM on DAV_3510): one list across its three paths, each strategy's
  // IsCapable() first testing its path (grouped/gmm_path.h), in the order
  // the dispatch reaches them.
  constexpr MatmulOp kGmm = MatmulOp::kGroupedMatmul;
  // No-quant: GroupedNoQuantMatmulTiling.
  status.Update(registry.Add(std::make_unique<grouped::GroupedNoQuantStrategy>(), kGmm));
  // Quant: the registry's priority 0, the MX basic-API strategy
  // (GMMQuantBasicApiTilingData), then priority 1, GroupedQmmTiling
  // (GMMQuantTilingData).
  status.Update(registry.Add(std::make_unique<grouped::GroupedQuantBasicApiStrategy>(), kGmm));
  status.Update(registry.Add(std::make_unique<grouped::GroupedQuantStrategy>(), kGmm));
  // Weight-quant: GroupedWeightQuantBatchMatmulTiling (GMMWeightQuantTilingData).
  status.Update(registry.Add(std::make_unique<grouped::GroupedWeightQuantStrategy>(), kGmm));
  assert(status.ok() && "built-in strategy names are unique");
  (void)status;
}

StrategyRegistry MakeBuiltinRegistry() {
  StrategyRegistry registry;
  RegisterBuiltinStrategies(registry);
  return registry;
}

}  // namespace npu::tiling
