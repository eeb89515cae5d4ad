#include "server/tiling/plan_fit.h"

#include <algorithm>

#include "server/tiling/hardware_constants.h"

namespace npu::tiling {
namespace {

// Elements of an axis once padded to whole cube fractals.
// TODO(tiling): use the shared integer helpers' CeilAlign once they live in
// this target.
uint64_t FractalPadded(uint64_t elements) {
  return elements % kBlock16 == 0 ? elements : elements - elements % kBlock16 + kBlock16;
}

// How one operand sits in L1.
struct OperandL1 {
  bool whole = false;  // the whole matrix is resident (full load)
  bool band = false;   // a band of L1 blocks, the whole K deep, is resident
  uint64_t edge = 0;   // rows of A / columns of B of the matrix
  uint64_t band_edge = 0;
  uint64_t block_edge = 0;  // baseM / baseN
  uint64_t stage_k = 0;     // K depth of one streamed stage
  uint64_t elem_bytes = 0;
};

// L1 bytes of one operand: the whole matrix or a resident band (both padded
// to fractals along K, as the NZ layout stores them), or its two ping-pong
// stages.
uint64_t OperandL1Bytes(const OperandL1& op, uint64_t k) {
  if (op.whole) return FractalPadded(op.edge) * FractalPadded(k) * op.elem_bytes;
  if (op.band) return op.band_edge * FractalPadded(k) * op.elem_bytes;
  return kDoubleBuffer * op.block_edge * op.stage_k * op.elem_bytes;
}

}  // namespace

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
  const BlockTiling& b = plan.block;
  const uint64_t a_bytes = DataTypeBytes(problem.dtype_a);
  const uint64_t b_bytes = DataTypeBytes(problem.dtype_b);
  CubeBufferDemand d;
  d.l0a_bytes = kDoubleBuffer * b.base_m * b.base_k * a_bytes;
  d.l0b_bytes = kDoubleBuffer * b.base_k * b.base_n * b_bytes;
  d.l0c_bytes = b.base_m * b.base_n * kFp32Bytes * std::max<uint64_t>(1, b.l0c_db);
  d.bias_table_bytes = problem.has_bias ? b.base_n * kFp32Bytes : 0;

  const FullLoad full = plan.key.full_load;
  OperandL1 a;
  a.whole = full == FullLoad::kA || full == FullLoad::kAB;
  a.band = plan.l1_residency == L1Residency::kABand;
  a.edge = problem.m;
  a.band_edge = std::min<uint64_t>(b.m_l1, problem.m);  // one L1 block of rows, cut at the edge
  a.block_edge = b.base_m;
  a.elem_bytes = a_bytes;
  OperandL1 bm;
  bm.whole = full == FullLoad::kB || full == FullLoad::kAB;
  bm.band = plan.l1_residency == L1Residency::kBBand;
  bm.edge = problem.n;
  bm.band_edge = std::min<uint64_t>(b.n_l1, problem.n);
  bm.block_edge = b.base_n;
  bm.elem_bytes = b_bytes;
  // The streamed kernel stages kL1 of K per buffer; next to a whole
  // resident matrix the full-load kernels stage stepKa (stepKb) base_k
  // slices of the streamed operand.
  d.stage_k = std::max(b.k_l1, b.base_k);
  a.stage_k = bm.whole ? b.base_k * b.step_ka : d.stage_k;
  bm.stage_k = a.whole ? b.base_k * b.step_kb : d.stage_k;
  d.l1_a_bytes = OperandL1Bytes(a, problem.k);
  d.l1_b_bytes = OperandL1Bytes(bm, problem.k);
  d.l1_bytes = d.l1_a_bytes + d.l1_b_bytes;
  return d;
}

std::optional<BufferOverflow> FindBufferOverflow(const CubeBufferDemand& demand,
                                                 const ChipSpec& chip) {
  const std::pair<CubeBuffer, std::pair<uint64_t, uint64_t>> checks[] = {
      {CubeBuffer::kL0a, {demand.l0a_bytes, chip.l0a_bytes}},
      {CubeBuffer::kL0b, {demand.l0b_bytes, chip.l0b_bytes}},
      {CubeBuffer::kL0c, {demand.l0c_bytes, chip.l0c_bytes}},
      {CubeBuffer::kBiasTable, {demand.bias_table_bytes, chip.bt_bytes}},
      {CubeBuffer::kL1, {demand.l1_bytes, chip.l1_bytes}},
  };
  for (const auto& [buffer, sizes] : checks) {
    if (sizes.first > sizes.second) return BufferOverflow{buffer, sizes.first, sizes.second};
  }
  return std::nullopt;
}

}  // namespace npu::tiling
