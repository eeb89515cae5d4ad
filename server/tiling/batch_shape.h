// A problem's batch dims as CANN's batched tiling and kernels see them, built
// once: right-aligned into four slots, broadcast NumPy-style into C's, with
// A's batch folded into M where CANN folds it (MergeBatchAndMAxis,
// matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_tiling_advanced.cpp:
// a batched operator, B without batch, A not transposed; C then is one
// [batch_a * m, n] matrix), and the operand batch each C batch reads.
// Validation, the strategies' facts, the schedule and the emulator read
// their batch dims from here. Part of `npu_tiling_types`.
#ifndef NPU_SERVER_TILING_BATCH_SHAPE_H_
#define NPU_SERVER_TILING_BATCH_SHAPE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// CANN's batch slots: up to four batch dims (rank 6 operands), slot 3
// innermost.
inline constexpr size_t kMaxBatchDims = 4;
using BatchSlots = std::array<int64_t, kMaxBatchDims>;

// `dims` right-aligned into the slots, missing ones 1 (past four dims, the
// innermost four).
BatchSlots RightAligned(absl::Span<const int64_t> dims);
// The slots as the facts and CANN's batch info hold them (unsigned).
std::array<uint64_t, kMaxBatchDims> UnsignedSlots(const BatchSlots& slots);
// The product of the slots.
int64_t SlotProduct(const BatchSlots& slots);
// "[1,1,2,3]", as the errors print batch dims.
std::string SlotsText(const BatchSlots& slots);

// Whether CANN folds A's batch into M for `problem`: a batched operator, A
// not transposed, B without batch and A with more than one.
bool MergesBatchIntoM(const MatmulProblem& problem);
// The same rule from the batch counts, for a caller that has them.
constexpr bool MergesBatchIntoM(bool batched_op, bool trans_a, uint64_t a_batches,
                                uint64_t b_batches) {
  return batched_op && !trans_a && b_batches == 1 && a_batches > 1;
}

// C's batch dims as a tensor's leading dims: batch_c, or the broadcast of A's
// and B's at the larger of their ranks.
std::vector<int64_t> OutputBatchDims(const MatmulProblem& problem);

// The batch of an operand with batch slots `operand` that C batch `c_index`
// (of C's slots `c`) reads: NumPy broadcast, C's index walked innermost first.
uint64_t BroadcastIndex(const BatchSlots& operand, const BatchSlots& c, uint64_t c_index);

struct BatchShape {
  uint64_t rows = 0;   // M of one C batch as walked (m * batch_a when merged)
  uint64_t batch = 1;  // C batches walked
  bool merged_into_m = false;
  // The slots as walked (all ones for A and C after the merge).
  BatchSlots a{1, 1, 1, 1};
  BatchSlots b{1, 1, 1, 1};
  BatchSlots c{1, 1, 1, 1};
  // The A (B) batch that C batch `c_index` reads, NumPy broadcast.
  uint64_t ABatch(uint64_t c_index) const;
  uint64_t BBatch(uint64_t c_index) const;
  // The batch of an operand with batch dims `dims` (any rank up to
  // kMaxBatchDims) that C batch `c_index` reads.
  uint64_t OperandBatch(const std::vector<int64_t>& dims, uint64_t c_index) const;
  uint64_t OperandBatch(const BatchSlots& slots, uint64_t c_index) const;
};

// The batch shape of `problem`. kInvalidArgument when the batch dims do not
// broadcast (a slot where A and B differ and neither is 1), batch_c is not
// their broadcast, or an operand has more than kMaxBatchDims batch dims or a
// dim below 1.
absl::StatusOr<BatchShape> BatchShapeOf(const MatmulProblem& problem);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_BATCH_SHAPE_H_
