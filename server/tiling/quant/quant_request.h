// A QuantBatchMatmulV3 problem in CANN's terms: the tensors of its tiling
// context (x1, x2, scale, offset, bias, pertoken_scale, y) with their GE
// dtypes and origin / storage shapes, built from the engine's MatmulProblem.
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_QUANT_REQUEST_H_
#define NPU_SERVER_TILING_QUANT_QUANT_REQUEST_H_

#include "server/tiling/quant/quant_facts.h"
#include "server/tiling/types.h"

namespace npu::tiling::quant {

// GE's number of `dtype`.
GeDtype GeDtypeOf(DataType dtype);

// The tiling context CANN's QuantBatchMatmulV3 tiling would see for
// `problem` (op kQuantBatchMatmulV3): x1 is batch_a + [m, k] ([k, m] when
// trans_a), x2 batch_b + [k, n] ([n, k] when trans_b) stored as
// storage_shape_b, or CANN's canonical NZ storage [..., ceil(cols / 32),
// ceil(rows / 16), 16, 32] when that is empty, y batch_c (or the broadcast of
// A's and B's batch dims) + [m, n], the bias bias_shape or [n].
QuantRequest QuantRequestOf(const MatmulProblem& problem);

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_QUANT_REQUEST_H_
