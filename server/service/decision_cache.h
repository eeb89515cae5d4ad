// A bounded, thread-safe LRU cache of tiling decisions.
//
// Tiling is a pure function of (problem, chip, forced strategy), and graph
// compilers ask for the same shapes over and over, so the service keeps the
// most recently used answers. The key is the canonical bytes of the
// converted problem, the resolved chip and the forced strategy
// (server/tiling/problem_key.h), so requests that differ only in spelling
// (an UNSPECIFIED format vs ND, an empty platform name vs "ascend950pr", an
// override equal to the profile) share an entry, and the per-call fields
// `id`, `view` and `include_trace` are not part of it. GetTiling keeps the engine's decisions,
// trace and detail included, and encodes each answer from them as it would a fresh one; ADVISE
// keeps whole answers and strips what the caller did not ask for. Only successful decisions are
// kept.
#ifndef NPU_SERVER_SERVICE_DECISION_CACHE_H_
#define NPU_SERVER_SERVICE_DECISION_CACHE_H_

#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/tiling/types.h"

namespace npu::server {

// The key of a decision: canonical bytes of what it depends on.
std::string DecisionCacheKey(const npu::tiling::MatmulProblem& problem,
                             const npu::tiling::ChipSpec& chip, absl::string_view forced_strategy);

// A cache of immutable, shared `Value`s: the engine's decisions for
// GetTiling, whole answers for ADVISE.
template <typename Value>
class DecisionCache {
 public:
  // A cache of at most `capacity` entries; 0 disables it (every Lookup
  // misses and Insert does nothing).
  explicit DecisionCache(size_t capacity) : capacity_(capacity) {}

  DecisionCache(const DecisionCache&) = delete;
  DecisionCache& operator=(const DecisionCache&) = delete;

  // Returns the cached value for `key` and marks it most recently used, or
  // null. Entries are immutable and shared, so the lock is held only for
  // the list update, never for a copy.
  std::shared_ptr<const Value> Lookup(const std::string& key) {
    if (capacity_ == 0) return nullptr;
    absl::MutexLock lock(&mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }

  // Stores `value` under `key`, evicting the least recently used entry when
  // full. An existing entry is replaced (both are the same decision).
  void Insert(const std::string& key, Value value) {
    if (capacity_ == 0) return;
    Insert(key, std::make_shared<const Value>(std::move(value)));
  }
  // The same for a value the caller also keeps (it must not change it).
  void Insert(const std::string& key, std::shared_ptr<const Value> shared) {
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

  bool enabled() const { return capacity_ > 0; }
  size_t capacity() const { return capacity_; }
  size_t size() const {
    absl::MutexLock lock(&mutex_);
    return lru_.size();
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const Value>>;

  const size_t capacity_;
  mutable absl::Mutex mutex_;
  // Most recently used first. The map points into the list, whose iterators
  // stay valid across splices.
  std::list<Entry> lru_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, typename std::list<Entry>::iterator> index_
      ABSL_GUARDED_BY(mutex_);
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_DECISION_CACHE_H_
