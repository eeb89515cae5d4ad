// CANN's input checks and parse of WeightQuantBatchMatmulV2 on DAV_3510, on
// the engine's MatmulProblem.
//
// CANN runs CheckPara (weight_quant_batch_matmul_v2_tiling.cpp) before any
// strategy, in this order: dtypes (x, weight, bias, antiquant scale and
// offset, quant scale, output), attributes (group_size), shapes (x, weight,
// antiquant scale and offset, quant scale and offset, bias, the K / N and
// group limits), the NZ weight's scenarios, the FP8 / HiF8 weight's limits,
// then CheckTempLimit (the AIV : AIC ratio, transpose_x, the int8 output,
// the weight's antiquant modes). Each failed rule is INVALID_ARGUMENT naming
// the field and the rule. Two of CANN's rules read a value before it is
// set, so they never fire; both are kept that way (see the .cc).
//
// The problem carries x as A (m, k, trans_a, dtype_a), the weight as B
// (dtype_b, trans_b, format_b, storage_shape_b; INT32 / FLOAT32 a packed
// int4 / float4 weight of eight elements per word), y as C, the bias as
// has_bias / dtype_bias / quant.bias_shape, and the other inputs and the
// group_size attribute in `quant` (antiquant_scale, antiquant_offset,
// quant_scale, quant_offset, group_size). Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_WEIGHT_QUANT_WQ_PARSE_H_
#define NPU_SERVER_TILING_WEIGHT_QUANT_WQ_PARSE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "server/tiling/types.h"
#include "server/tiling/weight_quant/wq_facts.h"

namespace npu::tiling::weight_quant {

// CheckPara up to (not including) CheckTempLimit: what needs no chip.
absl::Status CheckWeightQuantProblem(const MatmulProblem& p);

// CheckTempLimit, the part of CheckPara that reads the chip's core counts,
// on a problem CheckWeightQuantProblem() accepted.
absl::Status CheckWeightQuantOnChip(const MatmulProblem& p, const ChipSpec& chip);

// GetShapeAttrsInfo on a checked problem: what every strategy reads.
WqFacts ParseWeightQuant(const MatmulProblem& p);

// The weight's storage shape as the tiling context holds it: the problem's
// storage_shape_b, or for an NZ weight without one the unit tests' layout
// [(cols + c0) / c0, (rows + 16) / 16, 16, c0] of the origin [rows, cols]
// with C0 = 32 for int8 and 16 otherwise (in packed elements for a packed
// weight); empty for ND.
std::vector<int64_t> WeightStorageShape(const MatmulProblem& p);

// Whether dtype_b is a packed weight (INT32: eight int4, FLOAT32: eight
// float4_e2m1 per element).
bool IsPackedWeight(DataType dtype_b);

}  // namespace npu::tiling::weight_quant

#endif  // NPU_SERVER_TILING_WEIGHT_QUANT_WQ_PARSE_H_
