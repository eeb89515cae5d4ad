#include "emulator/kernel_traits.h"

#include <algorithm>
#include <iterator>

#include "server/tiling/tiling_data.h"

namespace npu::emu {
namespace {

using tiling::KernelId;

// The high-level Matmul API stages B's K by stepKb base blocks (A's stepKa
// is the schedule's k_l1), double-buffers an operand's L1 stage when
// depthA1 / depthB1 hold two stage sets of stepM / stepN blocks, and keeps
// dbL0C outputs in L0C (the TCubeTiling words of BatchMatMulV3TilingData,
// filled by matmul/mat_mul_v3/op_host/op_tiling/arch35/matmul_v3_base_tiling_advanced.h).
void HighLevelStages(const tiling::TilingPlan& plan, PipelineConfig& pipeline) {
  using F = tiling::HighLevelBatchField;
  const auto word = [&plan](F field) { return tiling::Get(plan.data, field).value_or(0); };
  const uint64_t base_k = word(F::kBaseK);
  const uint64_t step_ka = std::max<uint64_t>(1, word(F::kStepKa));
  const uint64_t step_kb = std::max<uint64_t>(1, word(F::kStepKb));
  const uint64_t step_m = std::max<uint64_t>(1, word(F::kStepM));
  const uint64_t step_n = std::max<uint64_t>(1, word(F::kStepN));
  pipeline.k_l1_b = base_k * step_kb;
  pipeline.l1_stages_a = word(F::kDepthA1) >= 2 * step_ka * step_m ? 2 : 1;
  pipeline.l1_stages_b = word(F::kDepthB1) >= 2 * step_kb * step_n ? 2 : 1;
  pipeline.l0c_stages = static_cast<uint32_t>(std::max<uint64_t>(1, word(F::kDbL0c)));
}

// BATCH_MATMUL_TO_MUL: one unit per batch.
uint64_t OnePerBatch(const tiling::TilingPlan& /*plan*/, uint64_t batch) { return batch; }

// ITER_BATCH sizes L1 by iterBatchL1 batches and L0 by iterBatchL0.
BufferFaultField IterBatchFault(const tiling::TilingPlan& plan, tiling::CubeBuffer buffer) {
  using F = tiling::IterBatchField;
  const bool l1 = buffer == tiling::CubeBuffer::kL1;
  return {l1 ? "iterBatchL1" : "iterBatchL0",
          tiling::Get(plan.data, l1 ? F::kIterBatchL1 : F::kIterBatchL0).value_or(0)};
}

// MERGE_BATCH sizes L1 by batchAL1 batches and L0 by batchL0.
BufferFaultField MergeBatchFault(const tiling::TilingPlan& plan, tiling::CubeBuffer buffer) {
  using F = tiling::MergeBatchField;
  const bool l1 = buffer == tiling::CubeBuffer::kL1;
  return {l1 ? "batchAL1" : "batchL0",
          tiling::Get(plan.data, l1 ? F::kBatchAL1 : F::kBatchL0).value_or(0)};
}

// One row per KernelId, in its order.
constexpr KernelTraits kTraits[] = {
    {KernelId::kUnstructured},
    {KernelId::kMatMulCube},
    {KernelId::kMatMulZeroK},
    {KernelId::kMatMulToMul},
    {KernelId::kMatMulToVector},
    {KernelId::kBatchCube},
    {KernelId::kBatchIterate, nullptr, nullptr, IterBatchFault},
    {KernelId::kBatchMerge, nullptr, nullptr, MergeBatchFault},
    {KernelId::kBatchToMul, nullptr, OnePerBatch, nullptr},
    {KernelId::kBatchHighLevel, HighLevelStages, nullptr, nullptr},
    // QuantBatchMatmulV3's kernels are not emulated (CheckModelled()).
    {KernelId::kQuantBasic},
    {KernelId::kQuantStreamK},
    {KernelId::kQuantWithoutBatch},
    {KernelId::kQuantHighLevel},
    // WeightQuantBatchMatmulV2's kernels stage and count as the float ones.
    {KernelId::kWeightQuantAdaptiveSplit},
    {KernelId::kWeightQuantRegBase},
    {KernelId::kWeightQuantCustom},
    // The transposed batch matmuls: stages of stepKa base blocks, as the
    // high-level struct's.
    {KernelId::kTransposeBatch, HighLevelStages, nullptr, nullptr},
    {KernelId::kTransposeQuantBatch, HighLevelStages, nullptr, nullptr},
    // GroupedMatmul's kernels are not emulated yet (CheckModelled()).
    {KernelId::kGroupedNoQuant},
    {KernelId::kGroupedQuantBasicApi},
    {KernelId::kGroupedQuant},
    {KernelId::kGroupedWeightQuant},
};
static_assert(std::size(kTraits) == tiling::kKernelCount);

constexpr bool IndexedById() {
  for (size_t i = 0; i < std::size(kTraits); ++i) {
    if (static_cast<size_t>(kTraits[i].id) != i) return false;
  }
  return true;
}
static_assert(IndexedById(), "kTraits must be in KernelId order");

}  // namespace

const KernelTraits& KernelTraitsOf(tiling::KernelId kernel) {
  return kTraits[static_cast<size_t>(kernel)];
}

}  // namespace npu::emu
