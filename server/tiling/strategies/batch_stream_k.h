// BATCH_STREAM_K: split K across cube cores when all batches' 256x256
// blocks together fill at most half the chip.
//
// The cores are shared out evenly between the batches; within a batch's
// share, the blocks of one batch each get as many K slices as the share
// allows, and the vector cores reduce the fp32 partial sums from the
// workspace (mixed 1 AIC : 2 AIV kernel). Unlike MatMulV3's Stream-K this is
// pure SK (no data-parallel rounds) and the K slice needs no NZ alignment.
// BatchMatMulV3's BATCH_STREAM_K (CANN:
// matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_basic_streamk_tiling.cpp);
// FusedMatMul inherits it (fused_inherited.h).
#ifndef NPU_SERVER_TILING_STRATEGIES_BATCH_STREAM_K_H_
#define NPU_SERVER_TILING_STRATEGIES_BATCH_STREAM_K_H_

#include "server/tiling/strategies/batch_shared.h"
#include "server/tiling/strategy.h"

namespace npu::tiling {

class BatchStreamKStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "BATCH_STREAM_K"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_BATCH_STREAM_K_H_
