#include "server/tiling/quant/perblock_basic_api_asw.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/quant/base_block_calculator.h"
#include "server/tiling/quant/l1_tiling_calculator.h"
#include "server/tiling/quant/quant_capability.h"
#include "server/tiling/quant/quant_dtype.h"
#include "server/tiling/quant/sliding_window.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::quant {
namespace {

constexpr uint32_t kVectorCoresPerCube = 2;
constexpr uint32_t kKernelPerBlock = 4;  // VEC_EPILOGUE_WITH_CUSTOM_MM
constexpr uint32_t kApiBasic = 1;
constexpr uint32_t kFourBuffers = 4, kTwoBuffers = 2;

}  // namespace

bool PerblockBasicApiAswStrategy::IsCapable(const QuantFacts& facts, const ChipSpec& chip,
                                            std::string* reason) const {
  return IsStrategyCapable(QuantStrategyId::kPerblockBasicApiAsw, facts, chip, reason);
}

absl::StatusOr<QuantPlan> PerblockBasicApiAswStrategy::DoTiling(const QuantFacts& facts,
                                                                const ChipSpec& chip) const {
  RETURN_IF_ERROR(CheckAswPlatform(chip));
  // Each cube core's output is dequantized by its two vector cores. (CANN
  // only warns that per-block, groupSizeM 128, is not deterministic at
  // level 2 and above.)
  if (chip.aiv_num != kVectorCoresPerCube * chip.aic_num) {
    return absl::FailedPreconditionError(
        absl::StrCat("PERBLOCK_BASIC_API_ASW needs aiv_num == 2 * aic_num, got ", chip.aiv_num,
                     " / ", chip.aic_num));
  }

  // The batch is spread over the cores with the blocks.
  const uint64_t batch_cores = facts.batch_c;
  ASSIGN_OR_RETURN(const BaseBlock block,
                   ComputeBaseBlock(facts, chip, batch_cores, BaseBlockMode::kPerBlock));
  SlidingWindow window = MakeSlidingWindow(facts, chip, block, batch_cores);
  BalanceEdgeBlocks(facts, chip, &window);
  // No full load; the tail round is split even after a core-utilization
  // adjustment of the block.
  SplitTailRoundGeneral(facts, chip, /*a_full_load=*/false, &window);

  ASSIGN_OR_RETURN(const L1Tiling l1, ComputeL1Tiling(facts, chip, window.base_m, window.base_n,
                                                      window.base_k, L1TilingMode::kDefault));
  BasicApiTiling tiling;
  tiling.base_m = window.base_m;
  tiling.base_n = window.base_n;
  tiling.base_k = window.base_k;
  tiling.db_l0c = ChooseDbL0c(facts, chip, window.base_m, window.base_n);
  tiling.k_al1 = l1.step_ka * window.base_k;
  tiling.k_bl1 = l1.step_kb * window.base_k;
  // Four L1 buffers when A and B step K together and four of each fit.
  const uint64_t four_buffer_bytes =
      BytesOf((window.base_m + window.base_n) * tiling.k_al1, facts.x1) * kFourBuffers;
  tiling.buffer_count = tiling.k_al1 == tiling.k_bl1 && four_buffer_bytes <= chip.l1_bytes
                            ? kFourBuffers
                            : kTwoBuffers;
  tiling.weight_must_hit_l2 = IsWeightMustHitL2(facts, window.base_m);
  // x1's scale is per group of rows for per-tile (groupSizeM 1), per block
  // otherwise; x2's is per block.
  tiling.x1_quant_mode = facts.group_size_m == 1 ? kPerGroup : kPerBlock;
  tiling.x2_quant_mode = kPerBlock;

  QuantPlan plan;
  plan.strategy = std::string(name());
  plan.key.a_trans = facts.trans_a ? 1 : 0;
  plan.key.b_trans = facts.trans_b ? 1 : 0;
  plan.key.batch_mode = 0;  // WITH_BATCH
  plan.key.kernel = kKernelPerBlock;
  plan.key.api_level = kApiBasic;
  plan.block_dim = UsedCoreCount(window, chip);
  plan.workspace_bytes = kLibraryWorkspaceBytes;
  plan.schedule_mode = 0;
  plan.words = WriteBasicApiWords(facts, tiling, window);
  return plan;
}

}  // namespace npu::tiling::quant
