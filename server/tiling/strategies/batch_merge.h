// MERGE_BATCH_BASICAPI: many small batches, each cube core taking several
// of them side by side in one L0 block.
//
// batchL0 batches of A (m x K rows each) and of B share one L0A / L0B block
// and their products land in one L0C block; batchL0 comes from a small
// polynomial that balances the L0C fill against the wasted diagonal of the
// merged product. Each core walks its ceil(batch / cores) batches in groups
// of batchL0 and K in kL1 stages. BatchMatMulV3's MERGE_BATCH_BASICAPI (CANN:
// matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_mergebatch_basicapi_tiling.cpp);
// FusedMatMul inherits it (fused_inherited.h).
#ifndef NPU_SERVER_TILING_STRATEGIES_BATCH_MERGE_H_
#define NPU_SERVER_TILING_STRATEGIES_BATCH_MERGE_H_

#include <cstdint>

#include "server/tiling/strategies/batch_shared.h"
#include "server/tiling/strategy.h"

namespace npu::tiling {

class BatchMergeStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "MERGE_BATCH_BASICAPI"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

// The batches one L0 block merges by CANN's polynomial (double arithmetic, as
// CANN computes it): `l0c_elements` fp32 elements of one L0C half, `m_rows`
// rows of A per batch (aligned when A is transposed), `n_aligned` = align16(n).
// At least 1.
uint64_t MergedBatchesByPolynomial(double l0c_elements, uint64_t m_rows, uint64_t n_aligned);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_BATCH_MERGE_H_
