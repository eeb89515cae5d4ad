#include "server/tiling/strategies/fused_inherited.h"

#include <algorithm>
#include <string>

#include "absl/base/attributes.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/strategies/batch_data_parallel.h"
#include "server/tiling/strategies/batch_full_load.h"
#include "server/tiling/strategies/batch_iterate.h"
#include "server/tiling/strategies/batch_merge.h"
#include "server/tiling/strategies/batch_shared.h"
#include "server/tiling/strategies/batch_stream_k.h"
#include "server/tiling/strategies/fused_zero_k.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {

void RekeyInheritedPlan(const MatmulProblem& problem, TilingPlan& plan) {
  TilingKey& key = plan.key;
  key.layout = KeyLayout::kFused;
  key.fused_op = problem.fused.op;
  key.inner_precise = static_cast<uint8_t>(problem.fused.inner_precise);
  key.api_level = ApiLevel::kBasic;
  if (key.batch_model == static_cast<uint8_t>(BatchModel::kForBatch)) {
    key.batch_model = static_cast<uint8_t>(BatchModel::kFusedBatch);
  }
}

namespace {

ABSL_ATTRIBUTE_NOINLINE Capability NotBatchedEpilogue(const MatmulProblem& problem,
                                                      const ProblemFacts& facts) {
  return Capability::No(Explain(facts, "epilogue ", std::string(FusedOpKeyName(problem.fused.op)),
                                " is not none, relu, add or mul"));
}

// The batched swizzled strategies: a batched shape and an epilogue their
// kernels have.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline Capability BatchedShapeAndEpilogue(const MatmulProblem& problem,
                                                                       const ProblemFacts& facts,
                                                                       const ChipSpec& /*chip*/) {
  if (!IsBatchedShape(problem)) return Capability::No(Explain(facts, "2-D shapes"));
  if (!TraitsOf(problem.fused.op).batched) return NotBatchedEpilogue(problem, facts);
  return Capability::Yes("");
}

// MERGE_BATCH: no x3 with a transposed view of B, and a batched epilogue.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline Capability MergeableEpilogue(const MatmulProblem& problem,
                                                                 const ProblemFacts& facts,
                                                                 const ChipSpec& /*chip*/) {
  if (TraitsOf(problem.fused.op).reads_x3 && BTransposedView(problem)) {
    return Capability::No(Explain(facts, "add/mul epilogue with a transposed view of B"));
  }
  if (!TraitsOf(problem.fused.op).batched) return NotBatchedEpilogue(problem, facts);
  return Capability::Yes("");
}

// MERGE_BATCH with add / mul: the merged result (fp32 under high precision)
// and two stages of x3 rows (plus their fp32 cast) must fit UB together
// (matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_mergebatch_basic_tiling.cpp).
Capability MergedEpilogueFitsUb(const MatmulProblem& problem, const ProblemFacts& facts,
                                const ChipSpec& chip) {
  if (!TraitsOf(problem.fused.op).reads_x3) return Capability::Yes("");
  const bool high_precision = problem.fused.inner_precise == 0;
  const uint64_t out_bytes = high_precision ? kFp32Bytes : facts.c_bytes;
  // x3 has the inputs' dtype.
  const uint64_t x3_bytes = facts.a_bytes;
  const bool cast_buffer = high_precision && problem.dtype_a != DataType::kFloat32;
  const uint64_t n_aligned = CeilAlign(facts.n, kBlock16);
  const uint64_t result_bytes = facts.m * n_aligned * out_bytes;
  const uint64_t stage_bytes =
      n_aligned * kDoubleBuffer * (x3_bytes + (cast_buffer ? out_bytes : 0));
  if (result_bytes + stage_bytes > chip.ub_bytes) {
    return Capability::No(Explain(facts, "epilogue needs ", result_bytes + stage_bytes,
                                  " bytes of UB > ub_bytes=", chip.ub_bytes));
  }
  return Capability::Yes("");
}

// An x3 epilogue writes through the vector cores.
void X3ThroughVectorCores(const MatmulProblem& problem, const ProblemFacts& /*facts*/,
                          const ChipSpec& /*chip*/, TilingPlan& plan) {
  if (TraitsOf(problem.fused.op).reads_x3) plan.key.l0c2out = L0cToOut::kNdFixpipe1To2;
}

// ITER_BATCH: no gelu kernel.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline Capability IterableEpilogue(const MatmulProblem& problem,
                                                                const ProblemFacts& facts,
                                                                const ChipSpec& /*chip*/) {
  if (TraitsOf(problem.fused.op).gelu) return Capability::No(Explain(facts, "gelu epilogue"));
  return Capability::Yes("");
}

// ITER_BATCH: x3 through the vector cores, read with one ND DMA for several
// batches when the UB left over by the output blocks holds two stages of
// more than one batch and x3 is shared by all batches
// (matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_iterbatch_basic_tiling.cpp).
void IterBatchX3(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                 TilingPlan& plan) {
  X3ThroughVectorCores(problem, facts, chip, plan);
  // The plan holds the loads, except the base_n a bias table cut: only then
  // are they worked out again.
  const uint64_t batches_l0 = Get(plan.data, IterBatchField::kIterBatchL0).value_or(0);
  const uint64_t base_m = plan.block.base_m;
  const uint64_t base_n =
      problem.has_bias ? IterBatchLoadsOf(problem, facts, chip).base_n : plan.block.base_n;
  const uint64_t out_bytes = batches_l0 * base_m * base_n;
  const uint64_t rest_ub = chip.ub_bytes - out_bytes;
  const uint64_t x3_batches = std::min(batches_l0, rest_ub / kDoubleBuffer / (facts.m * base_n));
  const bool need_nd_dma = x3_batches > 1 && facts.batch_x3 == 1;
  Set(plan.data, IterBatchField::kNeedNdDma, need_nd_dma ? 1 : 0);
}

// The five inheritances.
struct StreamKInheritance : NoFusedExtras {
  static constexpr std::string_view kName = "BATCH_STREAM_K_INHERITED_FROM_BMMV3";
  static Capability Before(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip) {
    return BatchedShapeAndEpilogue(problem, facts, chip);
  }
};

struct MergeBatchInheritance {
  static constexpr std::string_view kName = "MERGE_BATCH_BASICAPI_INHERITED_FROM_BMMV3";
  static Capability Before(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip) {
    return MergeableEpilogue(problem, facts, chip);
  }
  static Capability After(const MatmulProblem& problem, const ProblemFacts& facts,
                          const ChipSpec& chip) {
    return MergedEpilogueFitsUb(problem, facts, chip);
  }
  static void Amend(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                    TilingPlan& plan) {
    X3ThroughVectorCores(problem, facts, chip, plan);
  }
};

struct IterBatchInheritance : NoFusedExtras {
  static constexpr std::string_view kName = "ITER_BATCH_BASICAPI_INHERITED_FROM_BMMV3";
  static Capability Before(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip) {
    return IterableEpilogue(problem, facts, chip);
  }
  static void Amend(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                    TilingPlan& plan) {
    IterBatchX3(problem, facts, chip, plan);
  }
};

struct FullLoadAInheritance : StreamKInheritance {
  static constexpr std::string_view kName = "AL1_FULL_LOAD_BASIC_INHERITED_FROM_BMMV3";
};

struct FullLoadBInheritance : StreamKInheritance {
  static constexpr std::string_view kName = "BL1_FULL_LOAD_BASIC_INHERITED_FROM_BMMV3";
};

struct DataParallelInheritance : StreamKInheritance {
  static constexpr std::string_view kName = "ASWT_BASIC_INHERITED_FROM_BMMV3";
};

}  // namespace

std::unique_ptr<Strategy> InheritedBatchStreamK() {
  return std::make_unique<FusedInheritedStrategy<BatchStreamKStrategy, StreamKInheritance>>();
}

std::unique_ptr<Strategy> InheritedMergeBatch() {
  return std::make_unique<FusedInheritedStrategy<BatchMergeStrategy, MergeBatchInheritance>>();
}

std::unique_ptr<Strategy> InheritedIterBatch() {
  return std::make_unique<FusedInheritedStrategy<BatchIterateStrategy, IterBatchInheritance>>();
}

std::unique_ptr<Strategy> InheritedFullLoad(FullLoad resident) {
  if (resident == FullLoad::kA) {
    return std::make_unique<FusedInheritedStrategy<BatchFullLoadStrategy, FullLoadAInheritance>>(
        resident);
  }
  return std::make_unique<FusedInheritedStrategy<BatchFullLoadStrategy, FullLoadBInheritance>>(
      resident);
}

std::unique_ptr<Strategy> InheritedDataParallel() {
  return std::make_unique<
      FusedInheritedStrategy<BatchDataParallelStrategy, DataParallelInheritance>>();
}

}  // namespace npu::tiling
