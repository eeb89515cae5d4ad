#include "server/tiling/strategies/batch_merge.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

// Each core must merge at least this many batches, and the L0 checks are
// made for a block of this many.
constexpr uint64_t kMinMergedBatches = 4;
// Aligned K below this leaves the cube idle between loads.
constexpr uint64_t kMinAlignedK = 64;
// base_k never exceeds this (the L1 stages then hold more batches).
constexpr uint64_t kMaxBaseK = 64;
// One 32-byte fractal row of K.
constexpr uint64_t kFractalRowBytes = 32;
// L1 holds double-buffered A and B stages: a quarter of it each.
constexpr uint64_t kL1Quarters = 4;

struct MergeShape {
  uint64_t c0 = 16;  // elements of K per 32-byte fractal row
  uint64_t k_aligned = 0, m_aligned = 0, n_aligned = 0;
};

MergeShape ShapeOf(const ProblemFacts& facts) {
  MergeShape shape;
  shape.c0 = kFractalRowBytes / facts.a_bytes;
  shape.k_aligned = CeilAlign(facts.k, shape.c0);
  shape.m_aligned = CeilAlign(facts.m, kBlock16);
  shape.n_aligned = CeilAlign(facts.n, kBlock16);
  return shape;
}

}  // namespace

uint64_t MergedBatchesByPolynomial(double l0c_elements, uint64_t m_rows, uint64_t n_aligned) {
  const double a = static_cast<double>(m_rows) / kBlock16;
  const double p = l0c_elements / kBlock16 / static_cast<double>(n_aligned) * a;
  const double t = static_cast<double>(kBlock16 - 1) / kBlock16;
  const double y = std::sqrt(p + t * t / 4) - t / 2;
  const double x = std::floor(std::min(p / std::ceil(y) / a, std::ceil(y) / a));
  return std::max<uint64_t>(static_cast<uint64_t>(x), 1);
}

Capability BatchMergeStrategy::IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                                         const ChipSpec& chip) const {
  if (AnyTransposedView(problem)) {
    return Capability::No(Explain(facts, "an input is a transposed non-contiguous view"));
  }
  if (problem.format_a != Format::kNd || problem.format_b != Format::kNd) {
    return Capability::No(Explain(facts, "an input is FRACTAL_NZ"));
  }
  if (problem.has_bias) return Capability::No(Explain(facts, "bias present"));
  if (problem.dtype_a == DataType::kFloat32 && !problem.hf32) {
    return Capability::No(Explain(facts, "fp32 without hf32"));
  }
  if (!EqualBatchSlots(facts)) return Capability::No(Explain(facts, "A and B batches differ"));
  if (facts.batch_c < kMinMergedBatches * chip.aic_num) {
    return Capability::No(Explain(facts, "batch=", facts.batch_c, " < ", kMinMergedBatches,
                                  "*aic=", kMinMergedBatches * chip.aic_num));
  }
  const MergeShape shape = ShapeOf(facts);
  if (shape.k_aligned < kMinAlignedK) {
    return Capability::No(Explain(facts, "aligned K=", shape.k_aligned, " < ", kMinAlignedK));
  }
  if (facts.m > facts.n) return Capability::No(Explain(facts, "M=", facts.m, " > N=", facts.n));
  const uint64_t block_m = problem.trans_a && facts.m > 1
                               ? kMinMergedBatches * shape.m_aligned
                               : CeilAlign(facts.m * kMinMergedBatches, kBlock16);
  const uint64_t block_n = kMinMergedBatches * shape.n_aligned;
  // The smallest base_k: one fractal row, or 16 elements when K is not the
  // inner axis of both operands' fractals.
  const uint64_t min_base_k =
      problem.trans_a || !problem.trans_b ? CeilAlign(shape.c0, kBlock16) : shape.c0;
  const uint64_t l0a = block_m * min_base_k * facts.a_bytes * kDoubleBuffer;
  const uint64_t l0b = block_n * min_base_k * facts.b_bytes * kDoubleBuffer;
  const uint64_t l0c = block_m * block_n * kFp32Bytes * kDoubleBuffer;
  if (l0a > chip.l0a_bytes || l0b > chip.l0b_bytes || l0c > chip.l0c_bytes) {
    return Capability::No(Explain(facts, kMinMergedBatches, " merged batches overflow L0 (L0A ",
                                  l0a, ", L0B ", l0b, ", L0C ", l0c, " bytes)"));
  }
  return Capability::Yes(Explain(facts, facts.batch_c, " batches of ", facts.m, "x", facts.n,
                                 ": several per L0 block"));
}

absl::StatusOr<TilingPlan> BatchMergeStrategy::DoTiling(const MatmulProblem& problem,
                                                        const ProblemFacts& facts,
                                                        const ChipSpec& chip) const {
  const MergeShape shape = ShapeOf(facts);
  const uint64_t per_core = CeilDiv(facts.batch_c, chip.aic_num);
  const uint64_t max_base_k =
      std::max(FloorAlign(chip.l0b_bytes / kMinMergedBatches / shape.n_aligned / facts.b_bytes /
                              kDoubleBuffer,
                          kBlock16),
               kBlock16);
  const uint64_t base_k = std::min(max_base_k, kMaxBaseK);
  const uint64_t max_block_n = chip.l0b_bytes / base_k / facts.b_bytes / kDoubleBuffer;
  const uint64_t max_batches_l0 = std::max<uint64_t>(max_block_n / shape.n_aligned, 1);
  const double l0c_elements = static_cast<double>(chip.l0c_bytes) / kDoubleBuffer / kFp32Bytes;
  const uint64_t m_rows = problem.trans_a ? shape.m_aligned : facts.m;
  const uint64_t batches_l0 = std::min(
      {MergedBatchesByPolynomial(l0c_elements, m_rows, shape.n_aligned), max_batches_l0, per_core});
  const uint64_t block_m =
      problem.trans_a ? batches_l0 * shape.m_aligned : CeilAlign(batches_l0 * facts.m, kBlock16);
  const uint64_t block_n = batches_l0 * shape.n_aligned;
  const uint64_t groups = CeilDiv(per_core, batches_l0);
  const uint64_t step_a =
      std::min(groups, chip.l1_bytes / kL1Quarters / (block_m * base_k * facts.a_bytes));
  const uint64_t step_b =
      std::min(groups, chip.l1_bytes / kL1Quarters / (block_n * base_k * facts.b_bytes));
  const uint64_t step_k = std::min({step_a, step_b, CeilDiv(shape.k_aligned, base_k)});
  const uint64_t k_l1 = step_k * base_k;

  TilingPlan plan;
  plan.key = BatchKey(problem, ApiLevel::kBasic, BatchModel::kMergeBatch);
  // A transposed single row is the same layout as an untransposed one.
  plan.key.trans_a = problem.trans_a && facts.m > 1;
  plan.block_dim = chip.aic_num;
  plan.kernel_type = KernelTypeOf(KernelId::kBatchMerge, plan.key);
  plan.workspace_bytes = kRuntimeWorkspaceBytes;
  plan.detail = Describe(facts, batches_l0, " batches per L0 block (", block_m, "x", block_n, "), ",
                         per_core, " batches per core, kL1=", k_l1);

  // M and N are never cut: the L1 / L0 blocks are the merged ones.
  BlockTiling& block = plan.block;
  block.base_m = block_m;
  block.base_n = block_n;
  block.base_k = base_k;
  block.m_l1 = block_m;
  block.n_l1 = block_n;
  block.k_l1 = k_l1;
  block.step_ka = step_k;
  block.step_kb = step_k;
  block.depth_a1 = step_k * kDoubleBuffer;
  block.depth_b1 = step_k * kDoubleBuffer;
  block.single_core_m = facts.m;
  block.single_core_n = facts.n;
  block.single_core_k = facts.k;
  block.l0c_db = 1;

  CubeRunState state;
  state.base_m = shape.m_aligned;
  state.base_n = shape.n_aligned;
  plan.data = NewTilingData<MergeBatchField>();
  const TilingStructWriter<MergeBatchField> put(plan.data);
  put(MergeBatchField::kM, facts.m);
  put(MergeBatchField::kN, facts.n);
  put(MergeBatchField::kK, facts.k);
  put(MergeBatchField::kB, facts.batch_c);
  put(MergeBatchField::kBatchAL1, batches_l0);
  put(MergeBatchField::kBatchBL1, batches_l0);
  put(MergeBatchField::kBatchL0, batches_l0);
  put(MergeBatchField::kKL1, k_l1);
  put(MergeBatchField::kBaseK, base_k);
  put(MergeBatchField::kMmadParam, problem.hf32 ? 1 : 0);
  put(MergeBatchField::kL2CacheDisable,
      L2CacheDisableMode(problem, facts, chip, state, facts.m, k_l1, facts.n));
  put(MergeBatchField::kBatchX3, facts.batch_x3);
  return plan;
}

}  // namespace npu::tiling
