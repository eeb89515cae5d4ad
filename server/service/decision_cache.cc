#include "server/service/decision_cache.h"

#include <cstdint>

#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/service/convert.h"

namespace npu::server {

namespace pb = ::npu::tiling::v1;

std::string DecisionCacheKey(const npu::tiling::MatmulProblem& problem,
                             const npu::tiling::ChipSpec& chip, absl::string_view forced_strategy) {
  // The canonical request: the problem and the chip as the engine sees them
  // (every field explicit), plus the forced strategy. `id` and
  // `include_trace` do not change the decision and are left out. One message
  // per thread, cleared and refilled: its sub-messages stay allocated.
  thread_local pb::TilingRequest canonical;
  canonical.Clear();
  *canonical.mutable_problem() = ProblemToProto(problem);
  canonical.set_platform(chip.name);
  ChipFieldsToOverrides(chip, canonical.mutable_platform_overrides());
  canonical.set_forced_strategy(forced_strategy.data(), forced_strategy.size());

  // The message has no map and no unknown fields, so its serialization is a
  // function of its values: fields in number order, defaults omitted.
  std::string key(canonical.ByteSizeLong(), '\0');
  canonical.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(key.data()));
  return key;
}

}  // namespace npu::server
