#include "server/tiling/grouped/weight_quant/gwq_strategy.h"

#include <string>
#include <utility>

#include "server/tiling/grouped/gmm_path.h"
#include "server/tiling/grouped/weight_quant/gwq_parse.h"
#include "server/tiling/grouped/weight_quant/gwq_plan.h"

namespace npu::tiling::grouped {
namespace {

using weight_quant::GwqFacts;
using weight_quant::GwqPlan;

// The block a plan states, from its TCubeTiling.
BlockTiling BlockOf(const CubeTiling& t) {
  BlockTiling b;
  b.single_core_m = static_cast<uint32_t>(t.single_core_m);
  b.single_core_n = static_cast<uint32_t>(t.single_core_n);
  b.single_core_k = static_cast<uint32_t>(t.single_core_k);
  b.base_m = static_cast<uint32_t>(t.base_m);
  b.base_n = static_cast<uint32_t>(t.base_n);
  b.base_k = static_cast<uint32_t>(t.base_k);
  b.depth_a1 = static_cast<uint32_t>(t.depth_a1);
  b.depth_b1 = static_cast<uint32_t>(t.depth_b1);
  b.step_m = static_cast<uint32_t>(t.step_m);
  b.step_n = static_cast<uint32_t>(t.step_n);
  b.step_ka = static_cast<uint32_t>(t.step_ka);
  b.step_kb = static_cast<uint32_t>(t.step_kb);
  b.m_l1 = b.base_m * b.step_m;
  b.n_l1 = b.base_n * b.step_n;
  b.k_l1 = b.base_k * b.step_ka;
  return b;
}

// The family, as the plan's detail names it.
std::string_view FamilyOf(const GwqFacts& f) {
  if (f.MxA8W4Kernel()) return "MX-A8W4";
  if (f.A8W4()) return "A8W4";
  if (f.a16w4_nd) return "A16W4 ND";
  return "weight-quant";
}

}  // namespace

Capability GroupedWeightQuantStrategy::IsCapable(const MatmulProblem& problem,
                                                 const ProblemFacts& facts,
                                                 const ChipSpec& /*chip*/) const {
  if (!OnPath(problem, GmmPath::kWeightQuant)) {
    return Capability::No(Explain(facts, "not GroupedMatmul's weight-quant path (x != weight)"));
  }
  return Capability::Yes(Explain(
      facts, "weight-quant path: x ", DataTypeName(problem.grouped[GroupedTensor::kX].dtype),
      ", weight ", DataTypeName(problem.grouped[GroupedTensor::kWeight].dtype)));
}

absl::StatusOr<TilingPlan> GroupedWeightQuantStrategy::DoTiling(const MatmulProblem& problem,
                                                                const ProblemFacts& facts,
                                                                const ChipSpec& chip) const {
  absl::StatusOr<GwqFacts> parsed =
      weight_quant::ParseGroupedWeightQuant(problem.grouped, chip.aic_num, chip.aiv_num);
  if (!parsed.ok()) return parsed.status();
  const GwqFacts& f = *parsed;
  absl::StatusOr<GwqPlan> built = weight_quant::GwqBuildPlan(f);
  if (!built.ok()) return built.status();
  GwqPlan& gwq = *built;
  TilingPlan plan;
  plan.strategy = std::string(name());
  absl::StatusOr<TilingKey> key = TilingKey::Decode(gwq.key.Pack(), KeyLayout::kGroupedWeightQuant);
  if (!key.ok()) return absl::InternalError(key.status().message());
  plan.key = *key;
  plan.block_dim = gwq.block_dim;
  // The mix anti-quant kernel: two AIVs dequantize the weight for each AIC.
  plan.kernel_type = KernelType::kMixed1To2;
  plan.quant_mode =
      weight_quant::GwqQuantTypeName(static_cast<weight_quant::GwqQuantType>(gwq.key.w_quant_type));
  plan.workspace_bytes = gwq.workspace_bytes;
  plan.block = BlockOf(gwq.mm);
  plan.data = std::move(gwq.data);
  plan.detail = Describe(facts, FamilyOf(f), ", ", f.group_num, " groups, ",
                         f.group_size > 0 ? "group size " : "per-channel",
                         f.group_size > 0 ? std::to_string(f.group_size) : std::string(), "; ",
                         gwq.resplit.detail);
  return plan;
}

}  // namespace npu::tiling::grouped
