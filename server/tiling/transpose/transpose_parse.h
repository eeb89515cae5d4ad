// The input rules of TransposeBatchMatMul and TransposeQuantBatchMatMul, and
// what a problem that passes them means to their tiling and their kernels.
//
// Both operators read x1, x2 and y through perms (TransposeAttrs, types.h):
// CANN's host tiling accepts perm_x1 [0, 1, 2] or [1, 0, 2] (the quantized
// op: [1, 0, 2] only), perm_x2 [0, 1, 2] or [0, 2, 1] (the quantized op's
// FP8 mode: [0, 1, 2] only) and perm_y [1, 0, 2]; A is never read
// transposed and B is read transposed exactly when perm_x2 is [0, 2, 1].
// The checks follow CANN's checkers (matmul/transpose_batch_mat_mul/
// op_host/op_tiling/arch35/transpose_batch_mat_mul_tiling_advanced.cpp and
// matmul/transpose_quant_batch_mat_mul/op_host/op_tiling/arch35/
// transpose_quant_batch_mat_mul_tiling_advanced.cpp): every rule there is a
// refusal here, INVALID_ARGUMENT naming the field and the rule. Part of
// `npu_tiling_types` (the emulator reads the facts too).
#ifndef NPU_SERVER_TILING_TRANSPOSE_TRANSPOSE_PARSE_H_
#define NPU_SERVER_TILING_TRANSPOSE_TRANSPOSE_PARSE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "server/tiling/types.h"

namespace npu::tiling::transpose {

// TransposeQuantBatchMatMul's precision mode (the key's PRECISION_MODE),
// inferred from the dtypes as CANN infers it: both scales float8_e8m0 make
// MXFP8, x1 and x2 hifloat8 make HIFP8, anything else FP8 (a per-token x1
// scale times a per-channel x2 scale).
enum class PrecisionMode : uint8_t { kFp8 = 0, kMxFp8 = 1, kHiFp8 = 2 };
// "FP8", "MXFP8", "HIFP8".
std::string_view PrecisionModeName(PrecisionMode mode);

// The MX block of K: one float8_e8m0 scale per 32 elements of K, stored in
// pairs (the scales' last dim is 2), so K must be a multiple of 64.
inline constexpr int64_t kMxGroupK = 32;
inline constexpr int64_t kMxKAlign = 64;
// The FP8 mode's only shape: K = 512 and N = 128 (CANN's checker).
inline constexpr int64_t kFp8ModeK = 512;
inline constexpr int64_t kFp8ModeN = 128;

// Whether `op` is one of the two transposed batch matmuls.
inline bool IsTransposeOp(MatmulOp op) {
  return op == MatmulOp::kTransposeBatchMatMul || op == MatmulOp::kTransposeQuantBatchMatMul;
}

// MX scale groups along K, in pairs: ceil(ceil(k / 32) / 2).
inline int64_t MxScalePairs(int64_t k) { return ((k + kMxGroupK - 1) / kMxGroupK + 1) / 2; }

// What a checked problem of either op means.
struct TransposeFacts {
  uint8_t perm_x1 = 0;  // 1: x1 stored [m, batch, k]; 0: [batch, m, k]
  uint8_t perm_x2 = 0;  // 1: x2 stored [batch, n, k] (B read transposed); 0: [batch, k, n]
  bool trans_b = false;
  // CANN's batchSplitFactor: the attribute read as a 32-bit int, at least 1.
  uint32_t batch_split_factor = 1;
  // TransposeBatchMatMul: an output scale is given (its L1 staging is
  // reserved).
  bool has_scale = false;
  // TransposeQuantBatchMatMul only.
  PrecisionMode mode = PrecisionMode::kFp8;
};

// Where the kernels find element (b, i, p) of the logical x1 [batch, m, k],
// (b, p, j) of x2 [batch, k, n] and (b, i, j) of y [batch, m, n] in the
// tensors as stored (row-major), by the offsets their blocks compute:
//   x1 [batch, m, k], or [m, batch, k] for perm_x1 [1, 0, 2] (a tile's rows
//      are then batch * k apart);
//   x2 [batch, k, n], or [batch, n, k] for perm_x2 [0, 2, 1];
//   y  [m, batch, n] (perm_y [1, 0, 2]: a tile's rows batch * n apart), or
//      [f, m, batch / f * n] for a batch split f > 1: batch b in part
//      b / (batch / f), at column (b % (batch / f)) * n.
// Each logical row (K of x1, N of y) is contiguous in every layout.
struct TransposeLayout {
  uint64_t batch = 0, m = 0, n = 0, k = 0;
  bool x1_batch_inner = false;  // perm_x1 [1, 0, 2]
  bool x2_transposed = false;   // perm_x2 [0, 2, 1]
  uint64_t split = 1;           // the batch split factor (1: none)

  uint64_t X1Offset(uint64_t b, uint64_t i, uint64_t p) const {
    return (x1_batch_inner ? i * batch + b : b * m + i) * k + p;
  }
  uint64_t X2Offset(uint64_t b, uint64_t p, uint64_t j) const {
    return x2_transposed ? (b * n + j) * k + p : (b * k + p) * n + j;
  }
  uint64_t YOffset(uint64_t b, uint64_t i, uint64_t j) const {
    const uint64_t inner = batch / split;
    return ((b / inner) * m + i) * inner * n + (b % inner) * n + j;
  }
  // Elements between consecutive rows of x1 (of one batch) and of y.
  uint64_t X1RowPitch() const { return x1_batch_inner ? batch * k : k; }
  uint64_t YRowPitch() const { return batch / split * n; }
  // The stored shapes.
  std::vector<int64_t> X1Shape() const;
  std::vector<int64_t> X2Shape() const;
  std::vector<int64_t> YShape() const;
};

// The layout of a problem that passed CheckTransposeProblem() (a batch of
// at least 1).
TransposeLayout TransposeLayoutOf(const MatmulProblem& problem);

// OK, or kInvalidArgument naming the field and the rule it breaks: CANN's
// checker of the problem's op (which must be a transposed one), and the
// limits the engine adds (batch and tensor sizes).
absl::Status CheckTransposeProblem(const MatmulProblem& problem);

// The facts of a problem that passed CheckTransposeProblem().
TransposeFacts TransposeFactsOf(const MatmulProblem& problem);

}  // namespace npu::tiling::transpose

#endif  // NPU_SERVER_TILING_TRANSPOSE_TRANSPOSE_PARSE_H_
