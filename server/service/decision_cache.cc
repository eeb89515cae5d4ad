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
  pb::PlatformOverrides* o = canonical.mutable_platform_overrides();
  o->set_aic_num(chip.aic_num);
  o->set_aiv_num(chip.aiv_num);
  o->set_l1_bytes(chip.l1_bytes);
  o->set_l0a_bytes(chip.l0a_bytes);
  o->set_l0b_bytes(chip.l0b_bytes);
  o->set_l0c_bytes(chip.l0c_bytes);
  o->set_ub_bytes(chip.ub_bytes);
  o->set_l2_bytes(chip.l2_bytes);
  o->set_bt_bytes(chip.bt_bytes);
  o->set_cube_freq_mhz(chip.cube_freq_mhz);
  o->set_ddr_bytes_per_cycle(chip.ddr_bytes_per_cycle);
  o->set_l2_bytes_per_cycle(chip.l2_bytes_per_cycle);
  canonical.set_forced_strategy(forced_strategy.data(), forced_strategy.size());

  // The message has no map and no unknown fields, so its serialization is a
  // function of its values: fields in number order, defaults omitted.
  std::string key(canonical.ByteSizeLong(), '\0');
  canonical.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(key.data()));
  return key;
}

}  // namespace npu::server
