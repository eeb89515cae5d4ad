#include "server/tiling/grouped/no_quant/no_quant_strategy.h"

#include "server/tiling/custom_plans.h"
#include "server/tiling/grouped/gmm_path.h"
#include "server/tiling/grouped/no_quant/no_quant_tiling.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling::grouped {
namespace {

// GMMNoQuantTilingData: the parameters, then TCubeTiling with the members
// CANN's kernel reads (the others stay 0). Each member holds the value
// CANN's 32-bit field does.
TilingData NoQuantData(const NoQuantTiling& t) {
  using F = GmmNoQuantField;
  using C = TCubeField;
  TilingData data = NewTilingData<F>();
  const TilingStructWriter<F> put(data);
  const auto u32 = [](uint64_t value) { return static_cast<uint32_t>(value); };
  put(F::kGroupNum, t.group_num);
  put(F::kCoreNum, t.used_core_num);
  put(F::kSingleWeight, t.single_w);
  put(F::kSingleX, t.single_x);
  put(F::kSingleY, t.single_y);
  put(F::kGroupType, u32(static_cast<uint64_t>(t.group_type)));
  put(F::kGroupListType, u32(static_cast<uint64_t>(t.group_list_type)));
  put(F::kHasBias, t.has_bias);
  put(F::kMTailCnt, u32(t.m_tail_cnt));
  put(F::kNTailCnt, u32(t.n_tail_cnt));
  put(F::kWeightNoL2Cache, t.weight_no_l2_cache);
  const auto cube = [&](C field, uint64_t value) { put(GmmNoQuantCube(field), u32(value)); };
  cube(C::kIsBias, t.has_bias);
  cube(C::kM, t.m);
  cube(C::kN, t.n);
  cube(C::kKa, t.k);
  cube(C::kKb, t.k);
  cube(C::kSingleCoreM, t.m);
  cube(C::kSingleCoreN, t.base_n);
  cube(C::kSingleCoreK, t.k);
  cube(C::kDbL0a, 2);
  cube(C::kDbL0b, 2);
  cube(C::kDbL0c, 1);
  cube(C::kBaseM, t.base_m);
  cube(C::kBaseN, t.base_n);
  cube(C::kBaseK, t.base_k);
  cube(C::kStepKa, t.step_ka);
  cube(C::kStepKb, t.step_kb);
  cube(C::kDepthA1, t.depth_a1);
  cube(C::kDepthB1, t.depth_b1);
  cube(C::kStepM, 1);
  cube(C::kStepN, 1);
  cube(C::kUsedCoreNum, t.used_core_num);
  return data;
}

}  // namespace

Capability GroupedNoQuantStrategy::IsCapable(const MatmulProblem& problem,
                                             const ProblemFacts& facts,
                                             const ChipSpec& /*chip*/) const {
  if (!OnPath(problem, GmmPath::kNoQuant)) {
    return Capability::No(Explain(facts,
                                  "not GroupedMatmul's no-quant path (x = weight, "
                                  "float16 / bfloat16 / float32)"));
  }
  return Capability::Yes(Explain(facts, "no-quant path: x = weight = ",
                                 DataTypeName(problem.grouped[GroupedTensor::kX].dtype)));
}

namespace {

// The plan of a no-quant tiling: its key, launch, struct and block.
absl::StatusOr<TilingPlan> NoQuantPlan(const NoQuantTiling& t, const ProblemFacts& facts) {
  TilingPlan plan;
  // The key: B_TRANS | A_TRANS << 2, each the index of its value.
  absl::StatusOr<TilingKey> key =
      TilingKey::Decode(static_cast<uint64_t>(t.trans_w) | static_cast<uint64_t>(t.trans_x) << 2,
                        KeyLayout::kGroupedNoQuant);
  if (!key.ok()) return key.status();
  plan.key = *key;
  plan.block_dim = t.used_core_num;
  plan.kernel_type = KernelTypeOf(KernelId::kGroupedNoQuant, plan.key);
  plan.workspace_bytes = kNoQuantWorkspaceBytes;
  plan.data = NoQuantData(t);
  BlockTiling& block = plan.block;
  block.base_m = t.base_m;
  block.base_n = t.base_n;
  block.base_k = t.base_k;
  block.step_ka = t.step_ka;
  block.step_kb = t.step_kb;
  block.depth_a1 = t.depth_a1;
  block.depth_b1 = t.depth_b1;
  block.m_l1 = t.base_m;
  block.n_l1 = t.base_n;
  block.k_l1 = t.base_k * t.step_ka;
  block.single_core_m = t.m;
  block.single_core_n = t.base_n;
  block.single_core_k = t.k;
  block.m_tail_cnt = t.m_tail_cnt;
  block.n_tail_cnt = t.n_tail_cnt;
  block.l0c_db = 1;
  plan.detail = Describe(facts, "no-quant ", t.form, ", ", t.group_num,
                         t.group_num == 1 ? " group" : " groups", ", M ", t.m, " K ", t.k, " N ",
                         t.n, t.formulated ? "; block re-formed over the cores" : "",
                         t.m_tail_cnt * t.n_tail_cnt > 1 ? "; tail blocks re-split" : "",
                         t.weight_no_l2_cache ? "; weight bypasses L2" : "");
  return plan;
}

}  // namespace

absl::StatusOr<TilingPlan> GroupedNoQuantStrategy::DoTiling(const MatmulProblem& problem,
                                                            const ProblemFacts& facts,
                                                            const ChipSpec& chip) const {
  absl::StatusOr<NoQuantTiling> tiling = TileNoQuant(problem.grouped, chip);
  if (!tiling.ok()) return tiling.status();
  return NoQuantPlan(*tiling, facts);
}

}  // namespace npu::tiling::grouped

namespace npu::tiling {

absl::StatusOr<TilingPlan> GroupedNoQuantPlanWithBlock(const MatmulProblem& problem,
                                                       const ChipSpec& chip, uint64_t base_m,
                                                       uint64_t base_n) {
  if (!grouped::OnPath(problem, grouped::GmmPath::kNoQuant)) {
    return absl::InvalidArgumentError(
        "not GroupedMatmul's no-quant path (x = weight, float16 / bfloat16 / float32)");
  }
  absl::StatusOr<grouped::NoQuantTiling> tiling =
      grouped::TileNoQuantWithBlock(problem.grouped, chip, base_m, base_n);
  if (!tiling.ok()) return tiling.status();
  absl::StatusOr<TilingPlan> plan = grouped::NoQuantPlan(*tiling, DeriveFacts(problem));
  if (plan.ok()) plan->strategy = "GROUPED_NO_QUANT";
  return plan;
}

}  // namespace npu::tiling
