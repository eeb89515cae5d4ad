// The tile loop of the transposed batch matmuls' kernels (TransposeBatchMatMul
// and TransposeQuantBatchMatMul on DAV_3510), on BatchMatMulV3TilingData.
#include <algorithm>

#include "server/tiling/schedule_internal.h"

namespace npu::tiling::schedule_internal {

// The kernels' scheduler deals batch x mCnt x nCnt tiles of mL1 x nL1 over
// usedCoreNum cores, batch outermost, and walks the tiles of a batch in the
// SWAT window of aswWindowLen rows (transpose_batch_mat_mul_asw_block_advanced.h
// for the high-level kernel; the TENSOR_LEVEL kernel's scheduler lives in
// the devkit and takes the same words: mL1, nL1, the tail counts, all 1
// here). Each tile runs its whole K; kL1-deep stages are the block's.
absl::StatusOr<Schedule> ExpandTransposeBatch(const TilingPlan& plan, const MatmulProblem& walked,
                                              const ChipSpec& /*chip*/, uint64_t batch) {
  using F = HighLevelBatchField;
  const uint64_t stated = FieldOr(plan, F::kCBatchDimAll, batch);
  if (stated != batch) {
    return absl::InvalidArgumentError(absl::StrCat("tiling field cBatchDimAll=", stated,
                                                   " differs from the problem's ", batch,
                                                   " C batches"));
  }
  const uint64_t used = FieldOr(plan, F::kUsedCoreNum, plan.block_dim);
  const uint64_t m_l1 = FieldOr(plan, F::kML1, 0), n_l1 = FieldOr(plan, F::kNL1, 0);
  const uint64_t window = FieldOr(plan, F::kAswWindowLen, kCannSwatWindowRows);
  RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
  RETURN_IF_ERROR(RequirePositive("mL1", m_l1));
  RETURN_IF_ERROR(RequirePositive("nL1", n_l1));
  RETURN_IF_ERROR(RequirePositive("aswWindowLen", window));
  if (used > plan.block_dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tiling field usedCoreNum=", used, " exceeds the plan's block_dim=", plan.block_dim));
  }
  const uint64_t m = static_cast<uint64_t>(walked.m), n = static_cast<uint64_t>(walked.n);
  const uint64_t k = static_cast<uint64_t>(walked.k);
  const uint64_t m_cnt = CeilDiv(m, m_l1), n_cnt = CeilDiv(n, n_l1);
  const uint64_t mn = m_cnt * n_cnt, total = mn * batch;
  Schedule schedule;
  schedule.aic_cores = static_cast<uint32_t>(std::min(used, total));
  for (uint64_t core = 0; core < schedule.aic_cores; ++core) {
    for (uint64_t index = core, round = 0; index < total; index += used, ++round) {
      const auto [m_idx, n_idx] = SerpentineTile(index % mn, m_cnt, n_cnt, window);
      const uint64_t c_batch = index / mn;
      WorkUnit unit;
      unit.core = static_cast<uint32_t>(core);
      unit.round = static_cast<uint32_t>(round);
      unit.tile_idx = static_cast<int64_t>(index);
      unit.batch = static_cast<uint32_t>(batch > 1 ? c_batch : 0);
      const uint64_t m_off = c_batch * m + m_idx * m_l1, n_off = n_idx * n_l1;
      unit.m = {m_off, std::min(m_off + m_l1, (c_batch + 1) * m)};
      unit.n = {n_off, std::min(n_off + n_l1, n)};
      unit.k = {0, k};
      schedule.units.push_back(unit);
    }
  }
  return schedule;
}

BlockTiling TransposeBatchBlock(const TilingPlan& plan, const MatmulProblem& /*walked*/) {
  using F = HighLevelBatchField;
  BlockTiling block = plan.block;
  block.base_m = FieldOr(plan, F::kBaseM, block.base_m);
  block.base_n = FieldOr(plan, F::kBaseN, block.base_n);
  block.base_k = FieldOr(plan, F::kBaseK, block.base_k);
  block.m_l1 = FieldOr(plan, F::kML1, block.m_l1);
  block.n_l1 = FieldOr(plan, F::kNL1, block.n_l1);
  block.k_l1 = FieldOr(plan, F::kKL1, block.k_l1);
  return block;
}

}  // namespace npu::tiling::schedule_internal
