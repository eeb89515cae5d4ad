#include "server/tiling/quant/cube_basic_api_asw.h"

#include <algorithm>

#include "server/tiling/int_math.h"
#include "server/tiling/quant/base_block_calculator.h"
#include "server/tiling/quant/l1_tiling_calculator.h"
#include "server/tiling/quant/quant_capability.h"
#include "server/tiling/quant/quant_dtype.h"
#include "server/tiling/quant/sliding_window.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::quant {
namespace {

constexpr uint64_t kFractalRows = 16;
constexpr uint64_t kReduceBlock = 32;
constexpr uint64_t kWindowLength = 4;
// A is fully loaded only when one core's A takes at most half of L1.
constexpr uint64_t kFullAL1Share = 2;
constexpr uint64_t kInt8CopyAlignBytes = 128;
constexpr uint32_t kKernelPlain = 0;      // NO_VEC_EPILOGUE_WITH_MMAPI
constexpr uint32_t kKernelAFullLoad = 1;  // NO_VEC_EPILOGUE_CUSTOM_GMTOAL1_WITH_MMAPI
constexpr uint32_t kApiHigh = 0, kApiBasic = 1, kApiTensor = 2;
constexpr uint32_t kFourBuffers = 4, kTwoBuffers = 2;

// Whether one core keeps its whole A rows in L1 (UpdateAFullLoadStatus): A
// of one (balanced) block row takes at most half of L1, fewer than a window
// of M blocks that divide the cores evenly, more blocks than cores, no batch.
// When it does, the block row takes the balanced height and the M balancing
// is dropped.
bool DecideAFullLoad(const QuantFacts& facts, const ChipSpec& chip, SlidingWindow* w) {
  const uint64_t row_m = w->m_base_tail_split_count == 1 ? w->base_m : w->m_tail_main;
  const uint64_t a_bytes =
      row_m * (facts.trans_a ? BytesOf(CeilAlign(facts.k, kFractalRows), facts.x1)
                             : CeilAlign(BytesOf(facts.k, facts.x1), kReduceBlock));
  const bool full = a_bytes <= chip.l1_bytes / kFullAL1Share && w->m_block_count < kWindowLength &&
                    chip.aic_num % w->m_block_count == 0 && w->total_block_count > chip.aic_num &&
                    facts.batch_c == 1;
  if (full && w->base_m != row_m) {
    w->base_m = row_m;
    w->m_base_tail_split_count = 1;
    w->m_tail_main = 0;
  }
  return full;
}

}  // namespace

bool CubeBasicApiAswStrategy::IsCapable(const QuantFacts& facts, const ChipSpec& chip,
                                        std::string* reason) const {
  return IsStrategyCapable(QuantStrategyId::kCubeBasicApiAsw, facts, chip, reason);
}

absl::StatusOr<QuantPlan> CubeBasicApiAswStrategy::DoTiling(const QuantFacts& given,
                                                            const ChipSpec& chip) const {
  RETURN_IF_ERROR(CheckAswPlatform(chip));
  const bool int4_pair = IsInt4Pair(given);
  QuantFacts facts = given;
  if (int4_pair) facts.x1 = facts.x2 = GeDtype::kInt8;

  const uint64_t batch_cores = facts.batch_c;
  ASSIGN_OR_RETURN(const BaseBlock block,
                   ComputeBaseBlock(facts, chip, batch_cores, BaseBlockMode::kDefault));
  SlidingWindow window = MakeSlidingWindow(facts, chip, block, batch_cores);
  BalanceEdgeBlocks(facts, chip, &window);
  const bool a_full_load = DecideAFullLoad(facts, chip, &window);
  SplitTailRound(facts, chip, a_full_load, &window);

  ASSIGN_OR_RETURN(
      const L1Tiling l1,
      ComputeL1Tiling(facts, chip, window.base_m, window.base_n, window.base_k,
                      a_full_load ? L1TilingMode::kAFullLoad : L1TilingMode::kDefault));
  BasicApiTiling tiling;
  tiling.base_m = window.base_m;
  tiling.base_n = window.base_n;
  tiling.base_k = window.base_k;
  tiling.db_l0c = ChooseDbL0c(facts, chip, window.base_m, window.base_n);
  tiling.k_al1 = l1.step_ka * window.base_k;
  tiling.k_bl1 = l1.step_kb * window.base_k;

  // Four L1 buffers (CalculateNBufferNum4Cube) when four B loads, the double-
  // buffered per-channel scale and bias rows and four A loads (or the whole
  // of A) fit; then both load the smaller step.
  const uint64_t step_k = std::min(l1.step_ka, l1.step_kb);
  const uint64_t k_l1 = (a_full_load ? l1.step_kb : step_k) * window.base_k;
  uint64_t used = BytesOf(window.base_n * k_l1, facts.x2) * kFourBuffers;
  if (facts.is_per_channel) used += BytesOf(window.base_n, facts.scale) * kTwoBuffers;
  if (facts.has_bias) used += BytesOf(window.base_n, facts.bias) * kTwoBuffers;
  if (a_full_load) {
    const uint64_t k_aligned = CeilAlign(facts.k, facts.trans_a ? kFractalRows : kReduceBlock);
    used += BytesOf(window.base_m * k_aligned, facts.x1);
  } else {
    used += BytesOf(window.base_m * k_l1, facts.x1) * kFourBuffers;
  }
  tiling.buffer_count = used <= chip.l1_bytes ? kFourBuffers : kTwoBuffers;
  if (tiling.buffer_count == kFourBuffers) tiling.k_al1 = tiling.k_bl1 = step_k * window.base_k;
  tiling.weight_must_hit_l2 = IsWeightMustHitL2(facts, window.base_m);

  // The fixpipe's dequant words: (x1, x2) = (1, 1) for a double per-tensor
  // scale, (0, 1) per tensor, (0, 2) per channel; an NZ weight defaults to
  // (0, 2), an ND one to (0, 0).
  if (facts.is_double_scale) {
    tiling.x1_quant_mode = kPerTensor;
    tiling.x2_quant_mode = kPerTensor;
  } else if (facts.is_per_tensor) {
    tiling.x2_quant_mode = kPerTensor;
  } else if (facts.is_per_channel || facts.x2_nz) {
    tiling.x2_quant_mode = kPerChannel;
  }

  QuantPlan plan;
  plan.strategy = std::string(name());
  plan.key.a_trans = facts.trans_a ? 1 : 0;
  plan.key.b_trans = facts.trans_b ? 1 : 0;
  plan.key.batch_mode = 0;  // WITH_BATCH
  plan.key.kernel = a_full_load ? kKernelAFullLoad : kKernelPlain;
  plan.key.api_level = facts.tensor_api ? kApiTensor : (facts.x2_nz ? kApiHigh : kApiBasic);
  plan.block_dim = UsedCoreCount(window, chip);
  plan.workspace_bytes = kLibraryWorkspaceBytes;
  if (int4_pair) {
    // The INT8 copies of A (per output batch) and B.
    plan.workspace_bytes += CeilAlign(facts.batch_c * facts.m * facts.k, kInt8CopyAlignBytes) +
                            CeilAlign(facts.k * facts.n, kInt8CopyAlignBytes);
  }
  plan.schedule_mode = 0;
  plan.words = WriteBasicApiWords(facts, tiling, window);
  return plan;
}

}  // namespace npu::tiling::quant
