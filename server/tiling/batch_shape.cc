#include "server/tiling/batch_shape.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/operator_table.h"

namespace npu::tiling {
namespace {

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) absl::StrAppend(&text, i ? "," : "", dims[i]);
  return text + "]";
}

}  // namespace

BatchSlots RightAligned(absl::Span<const int64_t> dims) {
  BatchSlots slots{1, 1, 1, 1};
  const size_t count = std::min(dims.size(), kMaxBatchDims);
  for (size_t i = 0; i < count; ++i) slots[kMaxBatchDims - 1 - i] = dims[dims.size() - 1 - i];
  return slots;
}

std::array<uint64_t, kMaxBatchDims> UnsignedSlots(const BatchSlots& slots) {
  std::array<uint64_t, kMaxBatchDims> out{};
  for (size_t i = 0; i < kMaxBatchDims; ++i) out[i] = static_cast<uint64_t>(slots[i]);
  return out;
}

int64_t SlotProduct(const BatchSlots& slots) {
  int64_t product = 1;
  for (int64_t slot : slots) product *= slot;
  return product;
}

std::string SlotsText(const BatchSlots& slots) {
  return DimsText(std::vector<int64_t>(slots.begin(), slots.end()));
}

bool MergesBatchIntoM(const MatmulProblem& problem) {
  // The cheap conditions first: several checks ask this of every problem.
  if (!OperatorSpecOf(problem.op).batched || problem.trans_a) return false;
  const uint64_t b_batches = BatchProduct(problem.batch.b);
  if (b_batches != 1) return false;
  return MergesBatchIntoM(true, false, BatchProduct(problem.batch.a), b_batches);
}

std::vector<int64_t> OutputBatchDims(const MatmulProblem& p) {
  // The transposed batch matmuls' one batch dim (TransposeAttrs).
  if (p.op == MatmulOp::kTransposeBatchMatMul || p.op == MatmulOp::kTransposeQuantBatchMatMul) {
    return {p.transpose.batch};
  }
  if (!p.batch.c.empty()) return p.batch.c;
  const size_t rank = std::max(p.batch.a.size(), p.batch.b.size());
  std::vector<int64_t> dims(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const size_t from_end = rank - 1 - i;
    const int64_t a = from_end < p.batch.a.size() ? p.batch.a[p.batch.a.size() - 1 - from_end] : 1;
    const int64_t b = from_end < p.batch.b.size() ? p.batch.b[p.batch.b.size() - 1 - from_end] : 1;
    dims[i] = std::max(a, b);
  }
  return dims;
}

uint64_t BroadcastIndex(const BatchSlots& operand, const BatchSlots& c, uint64_t c_index) {
  // Walk C's slots innermost first, keeping the operand's index where its
  // dim is not broadcast.
  uint64_t index = 0, stride = 1;
  for (size_t slot = kMaxBatchDims; slot-- > 0;) {
    const uint64_t c_dim = static_cast<uint64_t>(c[slot]);
    const uint64_t pos = c_index % c_dim;
    c_index /= c_dim;
    const uint64_t dim = static_cast<uint64_t>(operand[slot]);
    if (dim != 1) index += pos * stride;
    stride *= dim;
  }
  return index;
}

uint64_t BatchShape::OperandBatch(const BatchSlots& slots, uint64_t c_index) const {
  return BroadcastIndex(slots, c, c_index);
}
uint64_t BatchShape::OperandBatch(const std::vector<int64_t>& dims, uint64_t c_index) const {
  return OperandBatch(RightAligned(dims), c_index);
}
uint64_t BatchShape::ABatch(uint64_t c_index) const { return OperandBatch(a, c_index); }
uint64_t BatchShape::BBatch(uint64_t c_index) const { return OperandBatch(b, c_index); }

absl::StatusOr<BatchShape> BatchShapeOf(const MatmulProblem& problem) {
  for (const auto* dims : {&problem.batch.a, &problem.batch.b, &problem.batch.c}) {
    if (dims->size() > kMaxBatchDims) {
      return absl::InvalidArgumentError(
          absl::StrCat("batch dims ", DimsText(*dims), " exceed ", kMaxBatchDims, " dims"));
    }
    for (int64_t d : *dims) {
      if (d <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("batch dims ", DimsText(*dims), " must be positive"));
      }
    }
  }
  BatchShape shape;
  shape.rows = static_cast<uint64_t>(problem.m);
  if (problem.op == MatmulOp::kTransposeBatchMatMul ||
      problem.op == MatmulOp::kTransposeQuantBatchMatMul) {
    // One batch dim shared by x1, x2 and y (TransposeAttrs); 0 walks none.
    shape.batch = static_cast<uint64_t>(problem.transpose.batch);
    shape.a = {1, 1, 1, problem.transpose.batch};
    shape.b = shape.a;
    shape.c = shape.a;
    return shape;
  }
  shape.a = RightAligned(problem.batch.a);
  shape.b = RightAligned(problem.batch.b);
  for (size_t slot = 0; slot < kMaxBatchDims; ++slot) {
    const int64_t a = shape.a[slot], b = shape.b[slot];
    if (a != b && a != 1 && b != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch dims ", DimsText(problem.batch.a), " of A and ", DimsText(problem.batch.b),
          " of B do not broadcast (NumPy rule: equal or 1)"));
    }
    shape.c[slot] = std::max(a, b);
  }
  if (!problem.batch.c.empty() && RightAligned(problem.batch.c) != shape.c) {
    return absl::InvalidArgumentError(absl::StrCat("batch_c ", DimsText(problem.batch.c),
                                                   " is not the broadcast ", SlotsText(shape.c),
                                                   " of A's and B's batch dims"));
  }
  shape.batch = static_cast<uint64_t>(SlotProduct(shape.c));
  if (MergesBatchIntoM(problem)) {
    shape.merged_into_m = true;
    shape.rows *= static_cast<uint64_t>(SlotProduct(shape.a));
    shape.batch = 1;
    shape.a = {1, 1, 1, 1};
    shape.c = {1, 1, 1, 1};
  }
  return shape;
}

}  // namespace npu::tiling
