#include "server/service/decision_cache.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
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
  // The architecture is the profile's (no override changes it), so the name
  // implies it for every chip the service resolves; a chip of an
  // architecture other than DAV_3510 carries it in the name all the same,
  // so that no decision for one can ever answer the other. (The engine
  // refuses such chips, so nothing is cached for them today.)
  if (chip.npu_arch == npu::tiling::NpuArch::kDav3510) {
    canonical.set_platform(chip.name);
  } else {
    canonical.set_platform(
        absl::StrCat(chip.name, "@", std::string(npu::tiling::NpuArchName(chip.npu_arch))));
  }
  ChipFieldsToOverrides(chip, canonical.mutable_platform_overrides());
  canonical.set_forced_strategy(forced_strategy.data(), forced_strategy.size());

  // The message has no map and no unknown fields, so its serialization is a
  // function of its values: fields in number order, defaults omitted.
  std::string key(canonical.ByteSizeLong(), '\0');
  canonical.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(key.data()));
  return key;
}

}  // namespace npu::server
