#include "server/tiling/strategies/batch_to_vector_mul.h"

#include "absl/strings/str_cat.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/strategies/batch_shared.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

// One vector block is 32 bytes: rows are padded to it in UB.
constexpr uint64_t kVectorBlockBytes = 32;
// Twice the 64 AIV cores: below this many batches the cores cannot
// double-buffer their rounds.
constexpr uint64_t kMinBatches = 128;
// One vector instruction covers 256 bytes; an N of one such register or a
// multiple of it is served better by the cube.
constexpr uint64_t kVectorRegisterBytes = 256;

}  // namespace

Capability BatchToVectorMulStrategy::IsCapable(const MatmulProblem& problem,
                                               const ProblemFacts& facts,
                                               const ChipSpec& chip) const {
  if (AnyTransposedView(problem)) {
    return Capability::No(Explain(facts, "an input is a transposed non-contiguous view"));
  }
  if (problem.dtype_a != problem.dtype_b || problem.dtype_a != problem.dtype_c) {
    return Capability::No(Explain(facts, "A, B and C dtypes differ"));
  }
  if (problem.format_a != Format::kNd || problem.format_b != Format::kNd) {
    return Capability::No(Explain(facts, "an input is FRACTAL_NZ"));
  }
  if (!EqualBatchSlots(facts)) return Capability::No(Explain(facts, "A and B batches differ"));
  if (facts.batch_c < kMinBatches) {
    return Capability::No(Explain(facts, "batch=", facts.batch_c, " < ", kMinBatches));
  }
  if (problem.has_bias) return Capability::No(Explain(facts, "bias present"));
  if (facts.k != 1) return Capability::No(Explain(facts, "K=", facts.k, " != 1"));
  const uint64_t size = facts.a_bytes;
  const uint64_t align = kVectorBlockBytes / size;
  if (facts.n > align && facts.n <= kVectorRegisterBytes / size) {
    return Capability::No(Explain(facts, "N=", facts.n, " in (", align, ", ",
                                  kVectorRegisterBytes / size, "]: one partial vector register"));
  }
  // N = 1 is a scaled copy, slower as a vector multiply (CANN measured it).
  if (facts.n == 1) return Capability::No(Explain(facts, "N=1"));
  const uint64_t m_aligned = CeilAlign(facts.m, align);
  const uint64_t n_aligned = CeilAlign(facts.n, align);
  const uint64_t batch_bytes = (m_aligned + n_aligned + m_aligned * n_aligned) * size;
  if (batch_bytes > chip.ub_bytes) {
    return Capability::No(
        Explain(facts, "one batch needs ", batch_bytes, " bytes > ub_bytes=", chip.ub_bytes));
  }
  if (facts.n % (kVectorRegisterBytes / size) == 0) {
    return Capability::No(Explain(facts, "N=", facts.n, " is a multiple of ",
                                  kVectorRegisterBytes / size, " elements"));
  }
  return Capability::Yes(
      Explain(facts, "K=1 and ", facts.batch_c, " batches: outer products on the vector cores"));
}

absl::StatusOr<TilingPlan> BatchToVectorMulStrategy::DoTiling(const MatmulProblem& problem,
                                                              const ProblemFacts& facts,
                                                              const ChipSpec& chip) const {
  const uint64_t size = facts.a_bytes;
  const uint64_t align = kVectorBlockBytes / size;
  const uint64_t m_aligned = CeilAlign(facts.m, align);
  const uint64_t n_aligned = CeilAlign(facts.n, align);
  const uint64_t cores = chip.aiv_num;
  const uint64_t batches = facts.batch_c;
  // A row of B that fits one vector block is broadcast over A's padded
  // column, which then needs its padding too.
  const uint64_t a_rows = n_aligned <= align ? m_aligned : facts.m;
  const uint64_t batch_bytes = (a_rows + n_aligned + a_rows * n_aligned) * size;
  const uint64_t per_core = CeilDiv(batches, cores);
  const uint64_t per_round = std::min(per_core, chip.ub_bytes / batch_bytes);
  const uint64_t last_round = per_core % per_round == 0 ? per_round : per_core % per_round;
  const uint64_t leftover = batches % (per_round * cores);
  // Cores whose last round is full; the next one gets the short tail. When
  // the leftover splits evenly the last of them takes the tail role, so the
  // count drops by one (and wraps when it was zero, as CANN's unsigned
  // arithmetic does; the kernel then sees 0xFFFFFFFF).
  uint64_t last_core_num = leftover / last_round;
  uint64_t last_round_tail = leftover % last_round;
  if (last_round_tail == 0) {
    last_round_tail = last_round;
    last_core_num -= 1;
  }

  TilingPlan plan;
  plan.key = BatchKey(problem, ApiLevel::kBasic, BatchModel::kBatchMatMulToMul);
  plan.key.trans_a = false;
  plan.key.trans_b = false;
  plan.block_dim = static_cast<uint32_t>(cores);
  plan.kernel_type = KernelType::kAivOnly;
  plan.workspace_bytes = kRuntimeWorkspaceBytes;
  plan.detail =
      Describe(facts, cores, " vector cores, ", per_core, " batches each in rounds of ", per_round);
  plan.data = NewTilingData<BatchToMulField>();
  const TilingStructWriter<BatchToMulField> put(plan.data);
  put(BatchToMulField::kM, facts.m);
  put(BatchToMulField::kN, facts.n);
  put(BatchToMulField::kB, batches);
  put(BatchToMulField::kUsedCoreNum, cores);
  put(BatchToMulField::kSingleCoreBatch, per_core);
  put(BatchToMulField::kBatchNum, per_round);
  put(BatchToMulField::kBatchNumLastRound, last_round);
  put(BatchToMulField::kBatchNumLastRoundTail, last_round_tail);
  put(BatchToMulField::kLastCoreNum, static_cast<uint32_t>(last_core_num));
  put(BatchToMulField::kAlignNum, align);
  return plan;
}

}  // namespace npu::tiling
