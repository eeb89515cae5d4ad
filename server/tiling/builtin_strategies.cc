#include "server/tiling/builtin_strategies.h"

#include <cassert>
#include <memory>

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
  assert(status.ok() && "built-in strategy names are unique");
  (void)status;
}

StrategyRegistry MakeBuiltinRegistry() {
  StrategyRegistry registry;
  RegisterBuiltinStrategies(registry);
  return registry;
}

}  // namespace npu::tiling
