#include "server/tiling/strategies/vector_multi_mul.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

// Starting block edge in elements for M, N and K.
constexpr uint64_t kBaseBlock = 64;

struct VectorBlocks {
  uint64_t base_m = kBaseBlock;
  uint64_t base_n = kBaseBlock;
  uint64_t cores = 0;  // vector cores available
};

// Reshapes the blocks so that m_blocks * n_blocks approaches the core count,
// then rebalances elongated blocks by doubling the split of the longer side.
void RebalanceVectorBlocks(const ProblemFacts& facts, VectorBlocks& blocks) {
  uint64_t m_blocks = CeilDiv(facts.m, blocks.base_m);
  uint64_t n_blocks = CeilDiv(facts.n, blocks.base_n);
  if (m_blocks == 0 || n_blocks == 0) return;
  if (m_blocks <= n_blocks) {
    blocks.base_m = CeilDiv(facts.m, m_blocks);
    m_blocks = CeilDiv(facts.m, blocks.base_m);
    n_blocks = blocks.cores / m_blocks;
    blocks.base_n = CeilDiv(facts.n, n_blocks);
  } else {
    blocks.base_n = CeilDiv(facts.n, n_blocks);
    n_blocks = CeilDiv(facts.n, blocks.base_n);
    m_blocks = blocks.cores / n_blocks;
    blocks.base_m = CeilDiv(facts.m, m_blocks);
  }
  auto resplit = [&](uint64_t new_m_blocks, uint64_t new_n_blocks) {
    blocks.base_m = CeilDiv(facts.m, new_m_blocks);
    blocks.base_n = CeilDiv(facts.n, new_n_blocks);
    m_blocks = CeilDiv(facts.m, blocks.base_m);
    n_blocks = CeilDiv(facts.n, blocks.base_n);
  };
  while (blocks.base_n >= blocks.base_m * 2 && n_blocks > 0 && n_blocks < blocks.cores / 2) {
    const uint64_t doubled = n_blocks * 2;
    resplit(blocks.cores / doubled, doubled);
  }
  while (blocks.base_m >= blocks.base_n * 2 && m_blocks > 0 && m_blocks < blocks.cores / 2) {
    const uint64_t doubled = m_blocks * 2;
    resplit(doubled, blocks.cores / doubled);
  }
}

}  // namespace

Capability VectorMultiMulStrategy::IsCapable(const MatmulProblem& problem,
                                             const ProblemFacts& facts,
                                             const ChipSpec& /*chip*/) const {
  if (!problem.force_grp_acc_fp32) {
    return Capability::No(Explain(facts, "force_grp_acc_fp32 (opImplMode 0x4) is off"));
  }
  if (facts.a_slice_3d)
    return Capability::No(Explain(facts, "A is a non-contiguous 3-D slice view"));
  if (problem.trans_a || !problem.trans_b) {
    return Capability::No(Explain(facts, "needs trans_a=false and trans_b=true, got trans_a=",
                                  problem.trans_a, " trans_b=", problem.trans_b));
  }
  if (problem.has_bias) return Capability::No(Explain(facts, "bias is not supported"));
  if (facts.a_bytes != 4 || facts.b_bytes != 4) {
    return Capability::No(Explain(facts, "A and B must both be float32"));
  }
  return Capability::Yes(
      Explain(facts, "fp32, K contiguous on both sides, forced fp32 accumulation"));
}

absl::StatusOr<TilingPlan> VectorMultiMulStrategy::DoTiling(const MatmulProblem& problem,
                                                            const ProblemFacts& facts,
                                                            const ChipSpec& chip) const {
  VectorBlocks blocks;
  blocks.cores = chip.aiv_num;
  if (CeilDiv(facts.m, blocks.base_m) * CeilDiv(facts.n, blocks.base_n) < chip.aiv_num) {
    RebalanceVectorBlocks(facts, blocks);
  }
  const uint64_t block_count = CeilDiv(facts.m, blocks.base_m) * CeilDiv(facts.n, blocks.base_n);
  const uint64_t used_cores = std::min<uint64_t>(block_count, chip.aiv_num);

  TilingPlan plan;
  plan.key.api_level = ApiLevel::kBasic;
  plan.key.trans_a = problem.trans_a;
  plan.key.trans_b = problem.trans_b;
  plan.key.model = KernelModel::kToMultiMul;
  plan.block_dim = static_cast<uint32_t>(used_cores);
  plan.kernel_type = KernelType::kAivOnly;
  plan.workspace_bytes = kRuntimeWorkspaceBytes;
  plan.detail = Describe(facts, block_count, " blocks of ", blocks.base_m, "x", blocks.base_n,
                         " on ", used_cores, " vector cores");
  plan.data = NewTilingData<ToVectorField>();
  Set(plan.data, ToVectorField::kUsedCoreNum, used_cores);
  Set(plan.data, ToVectorField::kM, facts.m);
  Set(plan.data, ToVectorField::kN, facts.n);
  Set(plan.data, ToVectorField::kK, facts.k);
  Set(plan.data, ToVectorField::kBaseM, blocks.base_m);
  Set(plan.data, ToVectorField::kBaseN, blocks.base_n);
  Set(plan.data, ToVectorField::kBaseK, kBaseBlock);
  return plan;
}

}  // namespace npu::tiling
