// A bounded, thread-safe LRU cache of tiling decisions.
//
// Tiling is a pure function of (problem, chip, forced strategy), and graph
// compilers ask for the same shapes over and over, so the service keeps the
// most recently used answers. The key is the canonical serialized request:
// the converted problem and the resolved chip re-serialized deterministically,
// so requests that differ only in spelling (an UNSPECIFIED format vs ND, an
// empty platform name vs "ascend950pr", an override equal to the profile)
// share an entry, and the per-call fields `id` and `include_trace` are not
// part of it. Values are complete responses, trace included; the service
// strips what the caller did not ask for. Only successful decisions are kept.
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
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/tiling/types.h"

namespace npu::server {

class DecisionCache {
 public:
  // A cache of at most `capacity` decisions; 0 disables it (every Lookup
  // misses and Insert does nothing).
  explicit DecisionCache(size_t capacity) : capacity_(capacity) {}

  DecisionCache(const DecisionCache&) = delete;
  DecisionCache& operator=(const DecisionCache&) = delete;

  // The key of a decision: deterministic bytes of the canonical request.
  static std::string Key(const npu::tiling::MatmulProblem& problem,
                         const npu::tiling::ChipSpec& chip, absl::string_view forced_strategy);

  // Returns the cached response for `key` and marks it most recently used,
  // or null. Entries are immutable and shared, so the lock is held only for
  // the list update, never for a message copy.
  std::shared_ptr<const npu::tiling::v1::TilingResponse> Lookup(const std::string& key);

  // Stores `response` under `key`, evicting the least recently used entry
  // when full. An existing entry is replaced (both are the same decision).
  void Insert(const std::string& key, npu::tiling::v1::TilingResponse response);
  // The same for an answer the caller also keeps (it must not change it).
  void Insert(const std::string& key,
              std::shared_ptr<const npu::tiling::v1::TilingResponse> response);

  bool enabled() const { return capacity_ > 0; }
  size_t capacity() const { return capacity_; }
  size_t size() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const npu::tiling::v1::TilingResponse>>;

  const size_t capacity_;
  mutable absl::Mutex mutex_;
  // Most recently used first. The map points into the list, whose iterators
  // stay valid across splices.
  std::list<Entry> lru_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> index_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_DECISION_CACHE_H_
