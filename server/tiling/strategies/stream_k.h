// BASIC_STREAM_K: split K across cube cores when the M x N blocks alone
// cannot fill the chip.
//
// Two schedules share the strategy. SK: at most half the cores' worth of
// 256x256 blocks and a long K; every block is split into k_cnt slices on
// k_cnt cores. DP+SK: M and N are 256-aligned and the blocks fill whole
// rounds plus a tail of at most half the cores; full rounds run data
// parallel and only the tail round splits K. The AIV cores reduce the fp32
// partial sums from the workspace, so the kernel is mixed 1 AIC : 2 AIV.
// fp32 inputs with a per-core K slice of 2048 or more also split K inside
// the core (SK_SPLIT_K) to bound accumulation error.
#ifndef NPU_SERVER_TILING_STRATEGIES_STREAM_K_H_
#define NPU_SERVER_TILING_STRATEGIES_STREAM_K_H_

#include "server/tiling/strategy.h"
#include "server/tiling/strategy_id.h"

namespace npu::tiling {

class StreamKStrategy final : public Strategy {
 public:
  std::string_view name() const override { return StrategyName(StrategyId::kStreamK); }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_STREAM_K_H_
