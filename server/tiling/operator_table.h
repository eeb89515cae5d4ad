// The CANN operators the engine answers for, one row each.
//
// Everything that tells the operators apart by kind rather than by a
// strategy's rule reads its row: the names (CANN's op type, the CLI's and
// CANN's source folder's spellings), the wire enum value, the tiling-key
// layout, whether the operator takes batch dims (and so folds A's batch into
// M the way CANN's batched tiling does), whether CANN's walk goes on past a
// capable strategy that fails, and which problem fields only it accepts. The
// strategy lists are registered per operator (builtin_strategies.cc). A new
// operator is a MatmulOp value, a row here and its strategies. Part of
// `npu_tiling_types`.
#ifndef NPU_SERVER_TILING_OPERATOR_TABLE_H_
#define NPU_SERVER_TILING_OPERATOR_TABLE_H_

#include <cstdint>
#include <string_view>

#include "absl/types/span.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// What the registry does when a capable strategy fails to tile.
enum class WalkPolicy : uint8_t {
  // The failure is the answer (MatMulV3: CANN's capable strategies do not
  // fail; one that does is our bug, kInternal).
  kFirstCapable,
  // The walk tries the next strategy (CANN's batched registries).
  kFallThrough,
};

struct OperatorSpec {
  MatmulOp op = MatmulOp::kMatMulV3;
  std::string_view name;      // CANN's op type: "BatchMatMulV3"
  std::string_view cli_name;  // the CLI's and ParseMatmulOp()'s "batch_matmul_v3"
  std::string_view folder;    // CANN's source folder, also accepted: "batch_mat_mul_v3"
  // The value of npu.tiling.v1.Operator that names it on the wire.
  int wire_value = 0;
  // The operator OPERATOR_UNSPECIFIED stands for: requests may leave the
  // field unset, and the canonical form of a request leaves it unset.
  bool wire_default = false;
  KeyLayout key_layout = KeyLayout::kMatMul;
  // Takes batch dims, broadcast NumPy-style; A's batch folds into M when B
  // has none and A is not transposed (CANN's MergeBatchAndMAxis).
  bool batched = false;
  WalkPolicy walk = WalkPolicy::kFirstCapable;
  // Takes a bias with batch dims (batch_bias); a batched operator without
  // it takes a bias of rank <= 2 only.
  bool batched_bias = false;
  // Takes MatMulV3's A slice view and force_grp_acc_fp32.
  bool takes_slice_view = false;
  // Takes FusedMatMul's epilogue (fused_op, x3, inner_precise).
  bool takes_epilogue = false;
  // Reads the offset_x attribute that turns the Tensor API off
  // (avoid_tensor_api).
  bool takes_tensor_api_switch = false;
  // Takes QuantBatchMatmulV3's scales, offset and group sizes (quant).
  bool takes_quant = false;
  // Takes the perms, the batch, the batch split and the output scale of the
  // transposed batch matmuls (transpose).
  bool takes_transpose = false;
  // Takes GroupedMatmul's tensor lists and attributes (grouped), and no
  // other problem field.
  bool takes_grouped = false;
};

// One row per MatmulOp, in its order.
inline constexpr OperatorSpec kOperatorSpecs[] = {
    {MatmulOp::kMatMulV3, "MatMulV3", "matmul_v3", "mat_mul_v3", /*wire_value=*/1,
     /*wire_default=*/true, KeyLayout::kMatMul, /*batched=*/false, WalkPolicy::kFirstCapable,
     /*batched_bias=*/false,
     /*takes_slice_view=*/true, /*takes_epilogue=*/false, /*takes_tensor_api_switch=*/true},
    {MatmulOp::kBatchMatMulV3, "BatchMatMulV3", "batch_matmul_v3", "batch_mat_mul_v3",
     /*wire_value=*/2, /*wire_default=*/false, KeyLayout::kMatMul, /*batched=*/true,
     WalkPolicy::kFallThrough,
     /*batched_bias=*/true, /*takes_slice_view=*/false, /*takes_epilogue=*/false,
     /*takes_tensor_api_switch=*/true},
    {MatmulOp::kFusedMatMul, "FusedMatMul", "fused_matmul", "fused_mat_mul", /*wire_value=*/3,
     /*wire_default=*/false, KeyLayout::kFused, /*batched=*/true, WalkPolicy::kFallThrough,
     /*batched_bias=*/false,
     /*takes_slice_view=*/false, /*takes_epilogue=*/true, /*takes_tensor_api_switch=*/false},
    // Batch dims up to CANN's rank 6; a failed strategy ends the walk only
    // for the failures CANN treats as final (the strategies say which).
    {MatmulOp::kQuantBatchMatmulV3, "QuantBatchMatmulV3", "quant_batch_matmul_v3",
     "quant_batch_matmul_v3", /*wire_value=*/4, /*wire_default=*/false, KeyLayout::kQuant,
     /*batched=*/true, WalkPolicy::kFallThrough, /*batched_bias=*/true,
     /*takes_slice_view=*/false, /*takes_epilogue=*/false, /*takes_tensor_api_switch=*/false,
     /*takes_quant=*/true},
    // 2-D only, as CANN's checks require; the first strategy that tiles
    // answers, a declining one passes the problem on.
    {MatmulOp::kWeightQuantBatchMatmulV2, "WeightQuantBatchMatmulV2",
     "weight_quant_batch_matmul_v2", "weight_quant_batch_matmul_v2", /*wire_value=*/7,
     /*wire_default=*/false, KeyLayout::kWeightQuant, /*batched=*/false, WalkPolicy::kFallThrough,
     /*batched_bias=*/false, /*takes_slice_view=*/false, /*takes_epilogue=*/false,
     /*takes_tensor_api_switch=*/false, /*takes_quant=*/true},
    // One 3-D batch dim of their own (transpose.batch), not NumPy batch
    // dims; one strategy each, so a failure ends the walk with no plan.
    {MatmulOp::kTransposeBatchMatMul, "TransposeBatchMatMul", "transpose_batch_matmul",
     "transpose_batch_mat_mul", /*wire_value=*/5, /*wire_default=*/false,
     KeyLayout::kTransposeBatch, /*batched=*/false, WalkPolicy::kFallThrough,
     /*batched_bias=*/false, /*takes_slice_view=*/false, /*takes_epilogue=*/false,
     /*takes_tensor_api_switch=*/false, /*takes_quant=*/false, /*takes_transpose=*/true},
    // Its x1 / x2 scales and group size are quant.pertoken / quant.scale and
    // quant.group_size_*.
    {MatmulOp::kTransposeQuantBatchMatMul, "TransposeQuantBatchMatMul",
     "transpose_quant_batch_matmul", "transpose_quant_batch_mat_mul", /*wire_value=*/6,
     /*wire_default=*/false, KeyLayout::kTransposeQuant, /*batched=*/false,
     WalkPolicy::kFallThrough, /*batched_bias=*/false, /*takes_slice_view=*/false,
     /*takes_epilogue=*/false, /*takes_tensor_api_switch=*/false, /*takes_quant=*/true,
     /*takes_transpose=*/true},
    // Tensor lists, not A / B / C: every shape is in `grouped`. The op-level
    // dispatch picks one path from x's and weight's dtypes (grouped/gmm_path.h)
    // and each path's first strategy that applies answers; a path's failure
    // ends the walk, as CANN's does.
    {MatmulOp::kGroupedMatmul, "GroupedMatmul", "grouped_matmul", "grouped_matmul",
     /*wire_value=*/8, /*wire_default=*/false, KeyLayout::kGroupedNoQuant, /*batched=*/false,
     WalkPolicy::kFirstCapable, /*batched_bias=*/false, /*takes_slice_view=*/false,
     /*takes_epilogue=*/false, /*takes_tensor_api_switch=*/false, /*takes_quant=*/false,
     /*takes_transpose=*/false, /*takes_grouped=*/true},
};
// The row of `op`.
inline const OperatorSpec& OperatorSpecOf(MatmulOp op) {
  return kOperatorSpecs[static_cast<size_t>(op)];
}

// Every row, in MatmulOp order.
absl::Span<const OperatorSpec> Operators();

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_OPERATOR_TABLE_H_
