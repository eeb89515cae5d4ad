#include "server/tiling/quant/cube_asw.h"

#include "server/tiling/quant/high_level_tiling.h"
#include "server/tiling/quant/quant_capability.h"
#include "server/tiling/quant/sliding_window.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::quant {
namespace {

constexpr uint32_t kApiHigh = 0;

}  // namespace

bool CubeAswStrategy::IsCapable(const QuantFacts& facts, const ChipSpec& chip,
                                std::string* reason) const {
  return IsStrategyCapable(QuantStrategyId::kCubeAsw, facts, chip, reason);
}

absl::StatusOr<QuantPlan> CubeAswStrategy::DoTiling(const QuantFacts& facts,
                                                    const ChipSpec& chip) const {
  ASSIGN_OR_RETURN(const HighLevelTiling tiling, ComputeHighLevelTiling(facts, chip));

  QuantPlan plan;
  plan.strategy = std::string(name());
  plan.key.a_trans = facts.trans_a ? 1 : 0;
  plan.key.b_trans = facts.trans_b ? 1 : 0;
  plan.key.batch_mode = 0;  // WITH_BATCH
  // A pure-cube problem has no vector epilogue: kernel 1 or 0.
  plan.key.kernel = HighLevelKernelType(facts, tiling.a_full_load);
  plan.key.api_level = kApiHigh;
  plan.block_dim = tiling.used_core_count;
  plan.workspace_bytes = kLibraryWorkspaceBytes;
  plan.schedule_mode = 0;
  plan.words = WriteHighLevelWords(facts, tiling);
  return plan;
}

}  // namespace npu::tiling::quant
