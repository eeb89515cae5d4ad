#include "server/tiling/quant/mix_asw.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"
#include "server/tiling/quant/high_level_tiling.h"
#include "server/tiling/quant/quant_capability.h"
#include "server/tiling/quant/sliding_window.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::quant {
namespace {

constexpr uint32_t kVectorCoresPerCube = 2;
constexpr uint64_t kInt8CopyAlignBytes = 128;
constexpr uint32_t kApiHigh = 0;

}  // namespace

bool MixAswStrategy::IsCapable(const QuantFacts& facts, const ChipSpec& chip,
                               std::string* reason) const {
  return IsStrategyCapable(QuantStrategyId::kMixAsw, facts, chip, reason);
}

absl::StatusOr<QuantPlan> MixAswStrategy::DoTiling(const QuantFacts& given,
                                                   const ChipSpec& chip) const {
  // Each cube core's output is dequantized by its two vector cores.
  if (chip.aiv_num != kVectorCoresPerCube * chip.aic_num) {
    return absl::FailedPreconditionError(absl::StrCat("MIX_ASW needs aiv_num == 2 * aic_num, got ",
                                                      chip.aiv_num, " / ", chip.aic_num));
  }
  const bool int4_pair = IsInt4Pair(given);
  QuantFacts facts = given;
  if (int4_pair) facts.x1 = facts.x2 = GeDtype::kInt8;

  ASSIGN_OR_RETURN(const HighLevelTiling tiling, ComputeHighLevelTiling(facts, chip));

  QuantPlan plan;
  plan.strategy = std::string(name());
  plan.key.a_trans = facts.trans_a ? 1 : 0;
  plan.key.b_trans = facts.trans_b ? 1 : 0;
  plan.key.batch_mode = 0;  // WITH_BATCH
  plan.key.kernel = HighLevelKernelType(facts, tiling.a_full_load);
  plan.key.api_level = kApiHigh;
  plan.block_dim = tiling.used_core_count;
  plan.workspace_bytes = kLibraryWorkspaceBytes;
  if (int4_pair) {
    // The INT8 copies of A (per output batch) and B.
    plan.workspace_bytes += CeilAlign(facts.batch_c * facts.m * facts.k, kInt8CopyAlignBytes) +
                            CeilAlign(facts.k * facts.n, kInt8CopyAlignBytes);
  }
  plan.schedule_mode = 0;
  plan.words = WriteHighLevelWords(facts, tiling);
  return plan;
}

}  // namespace npu::tiling::quant
