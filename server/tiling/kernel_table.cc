#include "server/tiling/kernel_table.h"

#include <iterator>

#include "server/tiling/schedule_internal.h"

namespace npu::tiling {
namespace {

using schedule_internal::ExpandBatchCube;
using schedule_internal::ExpandBatchToMul;
using schedule_internal::ExpandByModel;
using schedule_internal::ExpandHighLevelBatch;
using schedule_internal::ExpandIterBatch;
using schedule_internal::ExpandMergeBatch;
using schedule_internal::HighLevelBatchBlock;
using schedule_internal::IterBatchBlock;
using schedule_internal::MergeBatchBlock;
using schedule_internal::PlanBlock;

// The vector-only kernels (K_EQUAL_ZERO, TO_MUL, TO_MULTI_MUL,
// BATCH_MATMUL_TO_MUL).
KernelType OnVectorCores(const TilingKey& /*key*/) { return KernelType::kAivOnly; }

// The cube kernels: AIC only, unless the key's kernel reduces partial sums
// on the vector cores (Stream-K), writes its output through them (the ND
// fixpipe outputs) or runs FusedMatMul's add, mul or GELU epilogue there
// (the MIX_AIC_1_2 selections of
// matmul/fused_mat_mul/op_kernel/arch35/fused_mat_mul_tilingkey.h), which
// is the mixed 1 AIC : 2 AIV kernel. A cube struct with the K_EQUAL_ZERO
// model (FusedMatMul's K=0 clear of batched shapes) runs on the vector
// cores, as does a struct-less plan of a vector model.
KernelType ByKey(const TilingKey& key) {
  if (key.model == KernelModel::kKEqualZero || key.model == KernelModel::kToMul ||
      key.model == KernelModel::kToMultiMul) {
    return KernelType::kAivOnly;
  }
  const bool vector_epilogue =
      key.layout == KeyLayout::kFused && TraitsOf(key.fused_op).on_vector_cores;
  const bool mixed = key.model == KernelModel::kStreamK ||
                     key.model == KernelModel::kStreamKSplitK ||
                     key.l0c2out != L0cToOut::kOnTheFly || vector_epilogue;
  return mixed ? KernelType::kMixed1To2 : KernelType::kAicOnly;
}

// One row per KernelId, in its order.
constexpr KernelRow kRows[] = {
    {KernelId::kUnstructured, "UNSTRUCTURED", ByKey, ExpandByModel, StreamedBufferDemand, PlanBlock,
     false},
    {KernelId::kMatMulCube, "MATMUL_CUBE", ByKey, ExpandByModel, StreamedBufferDemand, PlanBlock,
     false},
    {KernelId::kMatMulZeroK, "MATMUL_ZERO_K", OnVectorCores, ExpandByModel, StreamedBufferDemand,
     PlanBlock, false},
    {KernelId::kMatMulToMul, "MATMUL_TO_MUL", OnVectorCores, ExpandByModel, StreamedBufferDemand,
     PlanBlock, false},
    {KernelId::kMatMulToVector, "MATMUL_TO_VECTOR", OnVectorCores, ExpandByModel,
     StreamedBufferDemand, PlanBlock, false},
    {KernelId::kBatchCube, "BATCH_CUBE", ByKey, ExpandBatchCube, StreamedBufferDemand, PlanBlock,
     false},
    {KernelId::kBatchIterate, "BATCH_ITERATE", ByKey, ExpandIterBatch, IterBatchBufferDemand,
     IterBatchBlock, true},
    {KernelId::kBatchMerge, "BATCH_MERGE", ByKey, ExpandMergeBatch, MergeBatchBufferDemand,
     MergeBatchBlock, true},
    {KernelId::kBatchToMul, "BATCH_TO_MUL", OnVectorCores, ExpandBatchToMul, StreamedBufferDemand,
     PlanBlock, false},
    {KernelId::kBatchHighLevel, "BATCH_HIGH_LEVEL", ByKey, ExpandHighLevelBatch,
     StreamedBufferDemand, HighLevelBatchBlock, false},
};
static_assert(std::size(kRows) == kKernelCount);

constexpr bool IndexedById() {
  for (size_t i = 0; i < std::size(kRows); ++i) {
    if (static_cast<size_t>(kRows[i].id) != i) return false;
  }
  return true;
}
static_assert(IndexedById(), "kRows must be in KernelId order");

}  // namespace

const KernelRow& KernelRowOf(KernelId kernel) { return kRows[static_cast<size_t>(kernel)]; }

absl::Span<const KernelRow> KernelRows() { return kRows; }

}  // namespace npu::tiling
