#include "server/tiling/strategies/vector_mul.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

// Default tile: 128 output elements by 128 K elements; K tiles are aligned
// to 8 floats (one 32-byte UB block).
constexpr uint64_t kBaseMn = 128;
constexpr uint64_t kBaseK = 128;
constexpr uint64_t kUbAlignFloats = 8;
// UB holds five K-long float rows per output element (A, B and the
// multiply-add temporaries), plus the bias and the output.
constexpr uint64_t kUbRowsPerOutput = 5;

}  // namespace

Capability VectorMulStrategy::IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                                        const ChipSpec& /*chip*/) const {
  if (!problem.force_grp_acc_fp32) {
    return Capability::No(Explain(facts, "force_grp_acc_fp32 (opImplMode 0x4) is off"));
  }
  if (facts.a_slice_3d)
    return Capability::No(Explain(facts, "A is a non-contiguous 3-D slice view"));
  if (facts.m != 1 && facts.n != 1) {
    return Capability::No(Explain(facts, "M=", facts.m, " and N=", facts.n, " are both != 1"));
  }
  if (facts.a_bytes != 4 || facts.b_bytes != 4) {
    return Capability::No(Explain(facts, "A and B must both be float32"));
  }
  return Capability::Yes(Explain(facts, facts.m == 1 ? "M" : "N",
                                 "=1 in forced fp32 accumulation: vector dot products"));
}

absl::StatusOr<TilingPlan> VectorMulStrategy::DoTiling(const MatmulProblem& problem,
                                                       const ProblemFacts& facts,
                                                       const ChipSpec& chip) const {
  const uint64_t outputs = facts.m * facts.n;
  const uint64_t ub_floats = chip.ub_bytes / 4;
  // K contiguous in GM for every output ((k, n) or (k, m) layout): copy a
  // block of outputs and stream K through it.
  const bool k_outer = (facts.m == 1 && !problem.trans_b) || (facts.n == 1 && problem.trans_a);
  const uint64_t per_core = CeilDiv(outputs, chip.aiv_num);
  uint64_t base_mn = kBaseMn;
  uint64_t base_k = kBaseK;
  if (k_outer) {
    base_mn = std::min(CeilAlign(per_core, kUbAlignFloats), kBaseMn);
    const uint64_t bias_floats = problem.has_bias ? base_mn : 0;
    base_k = (ub_floats - base_mn - bias_floats) / kUbRowsPerOutput / base_mn;
  } else {
    const uint64_t bias_floats = problem.has_bias ? per_core : 0;
    const uint64_t fit_k = ub_floats <= per_core + bias_floats
                               ? 0
                               : (ub_floats - per_core - bias_floats) / kUbRowsPerOutput / per_core;
    base_k = std::max(FloorAlign(fit_k, kUbAlignFloats), kBaseK);
    base_mn = std::min(per_core,
                       ub_floats / (kUbRowsPerOutput * base_k + (problem.has_bias ? 1 : 0) + 1));
  }
  if (base_mn == 0 || base_k == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("platform ub_bytes=", chip.ub_bytes, " cannot hold one TO_MUL tile"));
  }
  const uint64_t tiles = CeilDiv(outputs, base_mn);
  const uint64_t used_cores = std::min<uint64_t>(tiles, chip.aiv_num);

  TilingPlan plan;
  plan.key.api_level = ApiLevel::kBasic;
  plan.key.trans_a = problem.trans_a;
  plan.key.trans_b = problem.trans_b;
  plan.key.model = KernelModel::kToMul;
  plan.block_dim = static_cast<uint32_t>(used_cores);
  plan.kernel_type = KernelType::kAivOnly;
  plan.workspace_bytes = kRuntimeWorkspaceBytes;
  plan.detail =
      Describe(facts, tiles, " tiles of ", base_mn, " outputs, K in ", CeilDiv(facts.k, base_k),
               " steps of ", base_k, k_outer ? " (K-outer copy mode)" : "");
  plan.data = NewTilingData<ToMulField>();
  Set(plan.data, ToMulField::kUsedCoreNum, used_cores);
  Set(plan.data, ToMulField::kTileNum, tiles);
  Set(plan.data, ToMulField::kM, facts.m);
  Set(plan.data, ToMulField::kN, facts.n);
  Set(plan.data, ToMulField::kK, facts.k);
  Set(plan.data, ToMulField::kBaseMN, base_mn);
  Set(plan.data, ToMulField::kTailMN, outputs % base_mn);
  Set(plan.data, ToMulField::kBaseK, base_k);
  Set(plan.data, ToMulField::kTailK, facts.k % base_k);
  Set(plan.data, ToMulField::kLoopK, CeilDiv(facts.k, base_k));
  Set(plan.data, ToMulField::kDataCopyMode, k_outer ? 1u : 0u);
  return plan;
}

}  // namespace npu::tiling
