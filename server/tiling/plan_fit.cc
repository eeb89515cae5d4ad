#include "server/tiling/plan_fit.h"

#include "server/tiling/kernel_table.h"

namespace npu::tiling {

std::string_view CubeBufferName(CubeBuffer buffer) {
  switch (buffer) {
    case CubeBuffer::kL0a:
      return "L0A";
    case CubeBuffer::kL0b:
      return "L0B";
    case CubeBuffer::kL0c:
      return "L0C";
    case CubeBuffer::kBiasTable:
      return "BT";
    case CubeBuffer::kL1:
      return "L1";
  }
  return "?";
}

CubeBufferDemand ComputeCubeBufferDemand(const TilingPlan& plan, const MatmulProblem& problem) {
  return KernelRowOf(plan.data.kernel).buffer_demand(plan, problem);
}

CubeBufferDemand IterBatchBufferDemand(const TilingPlan& plan, const MatmulProblem& problem) {
  using plan_fit_internal::FractalPadded;
  const uint64_t a_bytes = DataTypeBytes(problem.dtype_a);
  const uint64_t b_bytes = DataTypeBytes(problem.dtype_b);
  const uint64_t m = static_cast<uint64_t>(problem.m), n = static_cast<uint64_t>(problem.n);
  const uint64_t k = static_cast<uint64_t>(problem.k);
  CubeBufferDemand d;
  const uint64_t l1 = Get(plan.data, IterBatchField::kIterBatchL1).value_or(1);
  const uint64_t l0 = Get(plan.data, IterBatchField::kIterBatchL0).value_or(1);
  const uint64_t base_m = Get(plan.data, IterBatchField::kBaseM).value_or(0);
  const uint64_t base_n = Get(plan.data, IterBatchField::kBaseN).value_or(0);
  const uint64_t base_k = Get(plan.data, IterBatchField::kBaseK).value_or(0);
  d.l0a_bytes = kDoubleBuffer * l0 * base_m * base_k * a_bytes;
  d.l0b_bytes = kDoubleBuffer * l0 * base_k * base_n * b_bytes;
  d.l0c_bytes = kDoubleBuffer * l0 * base_m * base_n * kFp32Bytes;
  d.bias_table_bytes = problem.has_bias ? base_n * kFp32Bytes : 0;
  d.stage_k = FractalPadded(k);
  d.l1_a_bytes = kDoubleBuffer * l1 * FractalPadded(m) * d.stage_k * a_bytes;
  d.l1_b_bytes = kDoubleBuffer * l1 * d.stage_k * FractalPadded(n) * b_bytes;
  d.l1_bytes = d.l1_a_bytes + d.l1_b_bytes;
  return d;
}

CubeBufferDemand MergeBatchBufferDemand(const TilingPlan& plan, const MatmulProblem& problem) {
  using plan_fit_internal::FractalPadded;
  const uint64_t a_bytes = DataTypeBytes(problem.dtype_a);
  const uint64_t b_bytes = DataTypeBytes(problem.dtype_b);
  const uint64_t m = static_cast<uint64_t>(problem.m), n = static_cast<uint64_t>(problem.n);
  CubeBufferDemand d;
  const uint64_t batch_l0 = Get(plan.data, MergeBatchField::kBatchL0).value_or(1);
  const uint64_t batch_a = Get(plan.data, MergeBatchField::kBatchAL1).value_or(1);
  const uint64_t batch_b = Get(plan.data, MergeBatchField::kBatchBL1).value_or(1);
  const uint64_t base_k = Get(plan.data, MergeBatchField::kBaseK).value_or(0);
  const uint64_t k_l1 = Get(plan.data, MergeBatchField::kKL1).value_or(0);
  const auto merged_m = [&](uint64_t batches) {
    return problem.trans_a ? batches * FractalPadded(m) : FractalPadded(batches * m);
  };
  d.l0a_bytes = kDoubleBuffer * merged_m(batch_l0) * base_k * a_bytes;
  d.l0b_bytes = kDoubleBuffer * batch_l0 * FractalPadded(n) * base_k * b_bytes;
  d.l0c_bytes = kDoubleBuffer * merged_m(batch_l0) * batch_l0 * FractalPadded(n) * kFp32Bytes;
  d.stage_k = k_l1;
  d.l1_a_bytes = kDoubleBuffer * merged_m(batch_a) * k_l1 * a_bytes;
  d.l1_b_bytes = kDoubleBuffer * batch_b * FractalPadded(n) * k_l1 * b_bytes;
  d.l1_bytes = d.l1_a_bytes + d.l1_b_bytes;
  return d;
}

CubeBufferDemand TransposeBufferDemand(const TilingPlan& plan, const MatmulProblem& problem) {
  using F = HighLevelBatchField;
  const uint64_t a_bytes = DataTypeBytes(problem.dtype_a);
  const uint64_t b_bytes = DataTypeBytes(problem.dtype_b);
  const uint64_t base_m = Get(plan.data, F::kBaseM).value_or(plan.block.base_m);
  const uint64_t base_n = Get(plan.data, F::kBaseN).value_or(plan.block.base_n);
  const uint64_t base_k = Get(plan.data, F::kBaseK).value_or(plan.block.base_k);
  const uint64_t depth_a = Get(plan.data, F::kDepthA1).value_or(plan.block.depth_a1);
  const uint64_t depth_b = Get(plan.data, F::kDepthB1).value_or(plan.block.depth_b1);
  CubeBufferDemand d;
  d.l0a_bytes = kDoubleBuffer * base_m * base_k * a_bytes;
  d.l0b_bytes = kDoubleBuffer * base_k * base_n * b_bytes;
  d.l0c_bytes = base_m * base_n * kFp32Bytes * std::max<uint64_t>(1, plan.block.l0c_db);
  d.stage_k = std::max(plan.block.k_l1, base_k);
  d.l1_a_bytes = depth_a * base_m * base_k * a_bytes;
  d.l1_b_bytes = depth_b * base_n * base_k * b_bytes;
  // MXFP8 (PRECISION_MODE 1): ceil(baseK / 32) float8_e8m0 scales, in
  // pairs, per row (column) of a block, scaleFactor loads of them per depth.
  const bool mx = plan.key.layout == KeyLayout::kTransposeQuant && plan.key.precision_mode == 1;
  if (mx) {
    const uint64_t scale_k = CeilAlign(CeilDiv(base_k, uint64_t{32}), uint64_t{2});
    const uint64_t para = Get(plan.data, F::kMxTypePara).value_or(0x01010101);
    d.l1_a_bytes += (para & 0xFF) * depth_a * scale_k * base_m;
    d.l1_b_bytes += ((para >> 8) & 0xFF) * depth_b * scale_k * base_n;
  }
  // An INT8 y's dequantization words: 8 bytes per column of the block.
  const uint64_t scale_words = problem.transpose.scale.present ? base_n * 8 : 0;
  d.l1_bytes = d.l1_a_bytes + d.l1_b_bytes + scale_words;
  return d;
}

}  // namespace npu::tiling
