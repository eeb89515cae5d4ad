#include "server/service/decision_cache.h"

#include <cstdint>

#include "server/service/convert.h"

namespace npu::server {

namespace pb = ::npu::tiling::v1;

std::string DecisionCache::Key(const npu::tiling::MatmulProblem& problem,
                               const npu::tiling::ChipSpec& chip,
                               absl::string_view forced_strategy) {
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

std::shared_ptr<const pb::TilingResponse> DecisionCache::Lookup(const std::string& key) {
  if (capacity_ == 0) return nullptr;
  absl::MutexLock lock(&mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

void DecisionCache::Insert(const std::string& key, pb::TilingResponse response) {
  if (capacity_ == 0) return;
  Insert(key, std::make_shared<const pb::TilingResponse>(std::move(response)));
}

void DecisionCache::Insert(const std::string& key,
                           std::shared_ptr<const pb::TilingResponse> shared) {
  if (capacity_ == 0) return;
  absl::MutexLock lock(&mutex_);
  auto it = index_.find(key);
  if (it != index_.end()) {
    it->second->second = std::move(shared);
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  if (lru_.size() >= capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  lru_.emplace_front(key, std::move(shared));
  index_.emplace(key, lru_.begin());
}

size_t DecisionCache::size() const {
  absl::MutexLock lock(&mutex_);
  return lru_.size();
}

}  // namespace npu::server
