// FusedMatMul's 2-D Stream-K, BASIC_STREAM_K_INHERITED_FROM_MMV3
// (matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_basic_streamk_tiling.cpp).
//
// MatMulV3's SK / DP+SK plan unchanged, with the epilogue in the fused key.
// Only one batch of C, and only the epilogues with a Stream-K kernel: "",
// relu, 16cast32, and add / mul when the blocks alone leave half the cores
// idle (pure SK: the data-parallel tiles of DP+SK cannot apply x3). The
// kernel always uses the basic API and never the fp32 in-core K split.
#ifndef NPU_SERVER_TILING_STRATEGIES_FUSED_STREAM_K_H_
#define NPU_SERVER_TILING_STRATEGIES_FUSED_STREAM_K_H_

#include "server/tiling/strategies/stream_k.h"
#include "server/tiling/strategy.h"
#include "server/tiling/strategy_id.h"

namespace npu::tiling {

class FusedStreamKStrategy final : public Strategy {
 public:
  std::string_view name() const override { return StrategyName(StrategyId::kFusedStreamK); }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;

 private:
  StreamKStrategy stream_k_;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_FUSED_STREAM_K_H_
