#include "server/tiling/kernel_table.h"

#include <iterator>

#include "server/tiling/schedule_internal.h"

namespace npu::tiling {
namespace {

using schedule_internal::ExpandBatchCube;
using schedule_internal::ExpandBatchToMul;
using schedule_internal::ExpandByModel;
using schedule_internal::ExpandGrouped;
using schedule_internal::GroupedBlock;
using schedule_internal::ExpandHighLevelBatch;
using schedule_internal::ExpandIterBatch;
using schedule_internal::ExpandMergeBatch;
using schedule_internal::ExpandQuantBasic;
using schedule_internal::ExpandQuantHighLevel;
using schedule_internal::ExpandQuantStreamK;
using schedule_internal::ExpandQuantWithoutBatch;
using schedule_internal::ExpandWeightQuant;
using schedule_internal::ExpandTransposeBatch;
using schedule_internal::TransposeBatchBlock;
using schedule_internal::HighLevelBatchBlock;
using schedule_internal::IterBatchBlock;
using schedule_internal::MergeBatchBlock;
using schedule_internal::PlanBlock;
using schedule_internal::QuantBlock;
using schedule_internal::WeightQuantBlock;

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

// QuantBatchMatmulV3's kernels (the ASCENDC_TPL_SEL selections of
// matmul/quant_batch_matmul_v3/op_kernel/arch35/quant_batch_matmul_v3_apt_tiling_key.h):
// the kernels with a vector epilogue (2, 3, 4 and Stream-K's 11) are mixed
// 1 AIC : 2 AIV, the others AIC only. (int4 inputs also run the cube-only
// kernels mixed; the strategy that plans them says so in its plan.)
KernelType QuantByKey(const TilingKey& key) {
  switch (key.quant_kernel) {
    case 2:
    case 3:
    case 4:
    case 11:
      return KernelType::kMixed1To2;
    default:
      return KernelType::kAicOnly;
  }
}

// WeightQuantBatchMatmulV2's kernels (ASCENDC_TPL_MIX_AIC_1_2 in every
// selection of its arch35 key header): the AIVs dequantize the weight.
KernelType MixedAlways(const TilingKey& /*key*/) { return KernelType::kMixed1To2; }
// The transposed batch matmuls' kernels: TransposeBatchMatMul's run on the
// cube cores alone (AIC_ONLY in every selection of
// transpose_batch_mat_mul_tiling_key.h); TransposeQuantBatchMatMul's FP8
// kernel dequantizes on the vector cores (MIX_AIC_1_2), its MXFP8 and HIFP8
// kernels in the fixpipe (AIC_ONLY; transpose_quant_batch_mat_mul_tiling_key.h).
KernelType TransposeByKey(const TilingKey& key) {
  const bool fp8 = key.layout == KeyLayout::kTransposeQuant && key.precision_mode == 0;
  return fp8 ? KernelType::kMixed1To2 : KernelType::kAicOnly;
}

// GroupedMatmul's kernels (the ASCENDC_TPL_SEL selections of its arch35 key
// headers). No-quant: AIC only, but for x transposed (MIX_AIC_1_1). Quant:
// the vector dequant and per-group / per-block kernels (KERNEL_TYPE 1 and
// 2) and those with x transposed are MIX_AIC_1_2, the fixpipe dequant
// kernels AIC only. Weight-quant: always MIX_AIC_1_2.
KernelType GroupedNoQuantByKey(const TilingKey& key) {
  return key.trans_a ? KernelType::kMixed1To1 : KernelType::kAicOnly;
}
KernelType GroupedQuantByKey(const TilingKey& key) {
  const bool vector_dequant = ((key.grouped_bits >> 4) & 0xF) != 0;
  return vector_dequant || key.trans_a ? KernelType::kMixed1To2 : KernelType::kAicOnly;
}

// Their buffers are sized by CANN's own calculators (server/tiling/quant/),
// not by the float kernels' formulas: no demand is checked here.
CubeBufferDemand QuantBufferDemand(const TilingPlan& /*plan*/, const MatmulProblem& /*problem*/) {
  return {};
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
    {KernelId::kQuantBasic, "QUANT_BASIC", QuantByKey, ExpandQuantBasic, QuantBufferDemand,
     QuantBlock, false},
    {KernelId::kQuantStreamK, "QUANT_STREAM_K", QuantByKey, ExpandQuantStreamK, QuantBufferDemand,
     QuantBlock, false},
    {KernelId::kQuantWithoutBatch, "QUANT_WITHOUT_BATCH", QuantByKey, ExpandQuantWithoutBatch,
     QuantBufferDemand, QuantBlock, false},
    {KernelId::kQuantHighLevel, "QUANT_HIGH_LEVEL", QuantByKey, ExpandQuantHighLevel,
     QuantBufferDemand, QuantBlock, false},
    {KernelId::kWeightQuantAdaptiveSplit, "WEIGHT_QUANT_ADAPTIVE_SPLIT", MixedAlways,
     ExpandWeightQuant, QuantBufferDemand, WeightQuantBlock, false},
    {KernelId::kWeightQuantRegBase, "WEIGHT_QUANT_REG_BASE", MixedAlways, ExpandWeightQuant,
     QuantBufferDemand, WeightQuantBlock, false},
    {KernelId::kWeightQuantCustom, "WEIGHT_QUANT_CUSTOM", MixedAlways, ExpandWeightQuant,
     QuantBufferDemand, WeightQuantBlock, false},
    {KernelId::kTransposeBatch, "TRANSPOSE_BATCH", TransposeByKey, ExpandTransposeBatch,
     TransposeBufferDemand, TransposeBatchBlock, false},
    {KernelId::kTransposeQuantBatch, "TRANSPOSE_QUANT_BATCH", TransposeByKey,
     ExpandTransposeBatch, TransposeBufferDemand, TransposeBatchBlock, false},
    {KernelId::kGroupedNoQuant, "GROUPED_NO_QUANT", GroupedNoQuantByKey, ExpandGrouped,
     QuantBufferDemand, GroupedBlock, false},
    {KernelId::kGroupedQuantBasicApi, "GROUPED_QUANT_BASIC_API", GroupedQuantByKey, ExpandGrouped,
     QuantBufferDemand, GroupedBlock, false},
    {KernelId::kGroupedQuant, "GROUPED_QUANT", GroupedQuantByKey, ExpandGrouped,
     QuantBufferDemand, GroupedBlock, false},
    {KernelId::kGroupedWeightQuant, "GROUPED_WEIGHT_QUANT", MixedAlways, ExpandGrouped,
     QuantBufferDemand, GroupedBlock, false},
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
