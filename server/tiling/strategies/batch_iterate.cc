#include "server/tiling/strategies/batch_iterate.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

// When batches cannot share an L0 load, the busiest core may carry at most
// 1/0.8 of the average batch count.
constexpr double kMinBatchBalance = 0.8;
// More than 8 queued mmads stall the cube's issue queue...
constexpr uint64_t kMaxQueuedMmads = 8;
// ...which only matters once 8 batches move more than one 64 KiB copy, the
// size that reaches full MTE2 bandwidth.
constexpr uint64_t kFullBandwidthCopyBytes = 64 * 1024;

// Batch capacities of the buffers for one batch of aligned M x K and K x N.
struct BatchFit {
  uint64_t m = 0, n = 0, k = 0;  // 16-aligned
  uint64_t bias_bytes = 0;       // one aligned bias row
  uint64_t l0a = 0, l0b = 0, l0c = 0, l1 = 0;
  bool l0_fits = false;  // at least one batch per L0 half (and bias table half)
};

BatchFit FitOf(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip) {
  BatchFit fit;
  fit.m = CeilAlign(facts.m, kBlock16);
  fit.k = CeilAlign(facts.k, kBlock16);
  fit.n = CeilAlign(facts.n, kBlock16);
  fit.bias_bytes = problem.has_bias ? fit.n * facts.bias_bytes : 0;
  // CANN sizes B's L0 share with A's element size too.
  fit.l0a = FloorDiv(chip.l0a_bytes / kDoubleBuffer, fit.m * fit.k * facts.a_bytes);
  fit.l0b = FloorDiv(chip.l0b_bytes / kDoubleBuffer, fit.k * fit.n * facts.a_bytes);
  fit.l0c = FloorDiv(chip.l0c_bytes / kDoubleBuffer, fit.m * fit.n * kFp32Bytes);
  // CANN's FloorDiv keeps the dividend for a zero divisor (k = 0).
  fit.l1 = FloorDiv(chip.l1_bytes / kDoubleBuffer,
                    (fit.m * fit.k + fit.k * fit.n) * facts.a_bytes + fit.bias_bytes);
  fit.l0_fits = std::min({fit.l0a, fit.l0b, fit.l0c, fit.l1}) >= 1;
  if (problem.has_bias) {
    fit.l0_fits = fit.l0_fits && chip.bt_bytes / kDoubleBuffer / (fit.n * kFp32Bytes) >= 1;
  }
  return fit;
}

// The output goes through the AIV cores when a row of N spans more than 256
// bytes but not a whole number of them.
L0cToOut IteratedOutput(const ProblemFacts& facts, const ChipSpec& chip) {
  const uint64_t row_elems = kBlock256 / facts.b_bytes;
  if (facts.n * facts.b_bytes > kBlock256 && facts.n % row_elems != 0 &&
      chip.aiv_num == 2 * chip.aic_num) {
    return L0cToOut::kNdFixpipe1To2;
  }
  return L0cToOut::kOnTheFly;
}

}  // namespace

Capability BatchIterateStrategy::IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                                           const ChipSpec& chip) const {
  if (ATransposedView(problem)) {
    return Capability::No(Explain(facts, "A is a transposed non-contiguous view"));
  }
  if (problem.format_a != Format::kNd || problem.format_b != Format::kNd) {
    return Capability::No(Explain(facts, "an input is FRACTAL_NZ"));
  }
  if (facts.batch_bias > 1) return Capability::No(Explain(facts, "batched bias"));
  if (!EqualBatchSlots(facts)) return Capability::No(Explain(facts, "A and B batches differ"));
  if (facts.batch_c <= chip.aic_num) {
    return Capability::No(Explain(facts, "batch=", facts.batch_c, " <= aic=", chip.aic_num));
  }
  const BatchFit fit = FitOf(problem, facts, chip);
  const uint64_t batch_l1_bytes = (fit.m * fit.k + fit.k * fit.n) * facts.a_bytes + fit.bias_bytes;
  if (batch_l1_bytes * kDoubleBuffer > chip.l1_bytes) {
    return Capability::No(Explain(facts, "one batch needs 2*", batch_l1_bytes,
                                  " bytes of L1 > l1_bytes=", chip.l1_bytes));
  }
  if (!fit.l0_fits) {
    const double average = static_cast<double>(facts.batch_c) / chip.aic_num;
    const double busiest =
        static_cast<double>(CeilDiv(CeilDiv(facts.batch_c, fit.l1), chip.aic_num) * fit.l1);
    if (average / busiest < kMinBatchBalance) {
      return Capability::No(Explain(facts, "one batch overflows L0 and the batch balance ",
                                    average / busiest, " < ", kMinBatchBalance));
    }
  }
  return Capability::Yes(Explain(facts, facts.batch_c, " batches > aic=", chip.aic_num, ", up to ",
                                 fit.l1, " per L1 load"));
}

IterBatchLoads IterBatchLoadsOf(const MatmulProblem& problem, const ProblemFacts& facts,
                                const ChipSpec& chip) {
  const BatchFit fit = FitOf(problem, facts, chip);
  IterBatchLoads loads;
  loads.m_l1 = fit.m;
  loads.n_l1 = fit.n;
  loads.l0_fits = fit.l0_fits;
  const uint64_t per_core = CeilDiv(facts.batch_c, chip.aic_num);
  // Past one full-bandwidth copy per 8 batches, more batches per load only
  // queue more mmads.
  const bool large_batches =
      kMaxQueuedMmads * (fit.m * fit.k + fit.k * fit.n) * facts.a_bytes > kFullBandwidthCopyBytes;
  loads.batches_l1 = std::min({fit.l1, per_core, large_batches ? kMaxQueuedMmads : per_core});
  loads.batches_l0 = std::max<uint64_t>(std::min({fit.l0a, fit.l0b, fit.l0c, loads.batches_l1}), 1);
  if (BTransposedView(problem)) {
    // An L1 load of a transposed view must not straddle its inner batch
    // dim: take the largest divisor of it.
    loads.inner_batch = static_cast<uint64_t>(problem.batch.b.back());
    uint64_t divisor = std::min(loads.inner_batch, loads.batches_l1);
    while (divisor > 1 && loads.inner_batch % divisor != 0) --divisor;
    loads.batches_l1 = std::max<uint64_t>(divisor, 1);
    loads.batches_l0 =
        std::max<uint64_t>(std::min({fit.l0a, fit.l0c, loads.batches_l0, loads.batches_l1}), 1);
  }
  loads.base_m = fit.m;
  loads.base_n = fit.n;
  loads.base_k = fit.k;
  if (!fit.l0_fits) {
    CutBatchBaseBlock(problem, chip, facts.a_bytes, facts.b_bytes, loads.base_m, loads.base_n,
                      loads.base_k);
  }
  return loads;
}

absl::StatusOr<TilingPlan> BatchIterateStrategy::DoTiling(const MatmulProblem& problem,
                                                          const ProblemFacts& facts,
                                                          const ChipSpec& chip) const {
  const IterBatchLoads loads = IterBatchLoadsOf(problem, facts, chip);
  const uint64_t batches_l1 = loads.batches_l1, batches_l0 = loads.batches_l0;
  const uint64_t inner_batch = loads.inner_batch;
  const uint64_t base_m = loads.base_m, base_k = loads.base_k;
  uint64_t base_n = loads.base_n;

  TilingPlan plan;
  plan.key = BatchKey(problem, ApiLevel::kBasic, BatchModel::kIterBatchSingleBias);
  plan.key.l0c2out = IteratedOutput(facts, chip);
  // Every cube plan's last step: base_n within the bias table.
  if (problem.has_bias) base_n = std::min(std::max<uint64_t>(chip.bt_bytes, kBlock256), base_n);
  plan.block_dim = chip.aic_num;
  plan.kernel_type = KernelTypeOf(KernelId::kBatchIterate, plan.key);
  plan.workspace_bytes = kRuntimeWorkspaceBytes;
  plan.detail = Describe(facts, batches_l1, " batches per L1 load, ", batches_l0, " per L0 load",
                         loads.l0_fits ? "" : " (one batch is cut into base blocks)");

  BlockTiling& block = plan.block;
  block.base_m = base_m;
  block.base_n = base_n;
  block.base_k = base_k;
  block.m_l1 = loads.m_l1;
  block.n_l1 = loads.n_l1;
  block.k_l1 = base_k;
  block.single_core_m = facts.m;
  block.single_core_n = facts.n;
  block.single_core_k = facts.k;
  block.l0c_db = 1;

  CubeRunState state;
  state.base_m = base_m;
  state.base_n = base_n;
  plan.data = NewTilingData<IterBatchField>();
  const TilingStructWriter<IterBatchField> put(plan.data);
  put(IterBatchField::kM, facts.m);
  put(IterBatchField::kN, facts.n);
  put(IterBatchField::kK, facts.k);
  put(IterBatchField::kB, facts.batch_c);
  put(IterBatchField::kIterBatchL1, batches_l1);
  put(IterBatchField::kIterBatchL0, batches_l0);
  put(IterBatchField::kMmadParam, problem.hf32 ? 1 : 0);
  put(IterBatchField::kBaseM, base_m);
  put(IterBatchField::kBaseN, base_n);
  put(IterBatchField::kBaseK, base_k);
  put(IterBatchField::kInnerBatch, inner_batch);
  put(IterBatchField::kBatchX3, facts.batch_x3);
  put(IterBatchField::kNeedNdDma, 0);
  put(IterBatchField::kL2CacheDisable,
      L2CacheDisableMode(problem, facts, chip, state, facts.m, facts.k, facts.n));
  return plan;
}

}  // namespace npu::tiling
