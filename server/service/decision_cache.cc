#include "server/service/decision_cache.h"

#include <string>

#include "server/tiling/problem_key.h"

namespace npu::server {

std::string DecisionCacheKey(const npu::tiling::MatmulProblem& problem,
                             const npu::tiling::ChipSpec& chip, absl::string_view forced_strategy) {
  // What the decision depends on, as the engine sees it (problem_key.h): the
  // problem, the resolved chip (name, architecture and every figure) and the
  // forced strategy. `id`, `view` and `include_trace` do not change the
  // decision and are left out.
  std::string key;
  key.reserve(512);  // a problem and a chip of any operator, in one allocation
  npu::tiling::AppendProblemKey(problem, key);
  npu::tiling::AppendChipKey(chip, key);
  npu::tiling::AppendTextKey(std::string_view(forced_strategy.data(), forced_strategy.size()), key);
  return key;
}

}  // namespace npu::server
