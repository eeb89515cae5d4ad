// One of WeightQuantBatchMatmulV2's three DAV_3510 strategies (CANN's
// templates of priority 7, 8 and 11: ADAPTIVE_SPLIT, ANTI_REG,
// CUSTOM_DEPRECATED), on the parsed problem. A strategy that is not capable
// passes the problem on (CANN's GRAPH_PARAM_INVALID); one that is capable
// and then fails ends CANN's walk, which DoTiling reports as
// kFailedPrecondition. Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_WEIGHT_QUANT_WQ_STRATEGY_H_
#define NPU_SERVER_TILING_WEIGHT_QUANT_WQ_STRATEGY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/tiling/types.h"
#include "server/tiling/weight_quant/wq_facts.h"

namespace npu::tiling::weight_quant {

// What a strategy answers: its struct, its key, the block dim and the
// workspace, and in words what decided it.
struct WqPlan {
  TilingData data;
  WqKey key;
  uint32_t block_dim = 0;
  uint64_t workspace_bytes = 0;
  std::string detail;
};

class WqStrategy {
 public:
  virtual ~WqStrategy() = default;
  // CANN's template name ("ADAPTIVE_SPLIT", "ANTI_REG", "CUSTOM_DEPRECATED").
  virtual std::string_view name() const = 0;
  // Whether CANN's template takes the problem; `reason` (when not null)
  // says why either way.
  virtual bool IsCapable(const WqFacts& facts, const ChipSpec& chip, std::string* reason) const = 0;
  virtual absl::StatusOr<WqPlan> DoTiling(const WqFacts& facts, const ChipSpec& chip) const = 0;
};

// The workspace every DAV_3510 kernel asks for at least (16 MiB, the
// library's system workspace).
inline constexpr uint64_t kWqSystemWorkspaceBytes = 16ull * 1024 * 1024;

}  // namespace npu::tiling::weight_quant

#endif  // NPU_SERVER_TILING_WEIGHT_QUANT_WQ_STRATEGY_H_
