#include "server/tiling/operator_table.h"

#include <iterator>

namespace npu::tiling {
namespace {

// One row per MatmulOp, in its order.
constexpr OperatorSpec kOperators[] = {
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
};
static_assert(std::size(kOperators) == kMatmulOpCount);

constexpr bool InOpOrder() {
  for (size_t i = 0; i < std::size(kOperators); ++i) {
    if (kOperators[i].op != kAllMatmulOps[i]) return false;
  }
  return true;
}
static_assert(InOpOrder(), "kOperators must be in MatmulOp order");

}  // namespace

const OperatorSpec& OperatorSpecOf(MatmulOp op) { return kOperators[static_cast<size_t>(op)]; }

absl::Span<const OperatorSpec> Operators() { return kOperators; }

}  // namespace npu::tiling
