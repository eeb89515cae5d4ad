#include "server/tiling/strategies/batch_shared.h"

#include <algorithm>

#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {

TilingKey BatchKey(const MatmulProblem& problem, ApiLevel api_level, BatchModel batch_model) {
  TilingKey key;
  key.layout = KeyLayout::kMatMul;
  key.api_level = api_level;
  key.trans_a = problem.trans_a;
  key.trans_b = problem.trans_b;
  key.batch_model = static_cast<uint8_t>(batch_model);
  return key;
}

void CutBatchBaseBlock(const MatmulProblem& problem, const ChipSpec& chip, uint64_t l0a_elem_bytes,
                       uint64_t l0b_elem_bytes, uint64_t& base_m, uint64_t& base_n,
                       uint64_t& base_k) {
  const uint64_t m = base_m, n = base_n, k = base_k;
  const uint64_t l0a_elems = chip.l0a_bytes / kDoubleBuffer / l0a_elem_bytes;
  const uint64_t l0b_elems = chip.l0b_bytes / kDoubleBuffer / l0b_elem_bytes;
  if (m < n && m > k) {  // keep K of A, fill M and N
    base_k = k;
    base_m = std::min(l0a_elems / base_k, m);
    base_n = std::min(l0b_elems / base_k, n);
  } else if (m < n) {  // keep M, fill K then N
    base_m = m;
    base_k = std::min(l0a_elems / base_m, k);
    base_n = std::min(l0b_elems / base_k, n);
  } else if (n > k) {  // keep K of B, fill N and M
    base_k = k;
    base_n = std::min(l0b_elems / base_k, n);
    base_m = std::min(l0a_elems / base_k, m);
  } else {  // keep N, fill K then M
    base_n = n;
    base_k = std::min(l0b_elems / base_n, k);
    base_m = std::min(l0a_elems / base_k, m);
  }
  if (problem.has_bias) base_n = std::min(base_n, chip.bt_bytes / kDoubleBuffer / kFp32Bytes);
  const uint64_t l0c_elems = chip.l0c_bytes / kDoubleBuffer / kFp32Bytes;
  if (base_m >= base_n) {
    base_m = std::min(base_m, l0c_elems / base_n);
  } else {
    base_n = std::min(base_n, l0c_elems / base_m);
  }
  base_m = FloorAlign(std::max(base_m, kBlock16), kBlock16);
  base_n = FloorAlign(std::max(base_n, kBlock16), kBlock16);
  base_k = FloorAlign(std::max(base_k, kBlock16), kBlock16);
}

HighLevelBatchPlan RunStateWords(const ProblemFacts& facts, const ChipSpec& chip,
                                 const CubeRunState& state, bool hf32) {
  HighLevelBatchPlan run;
  run.used_core_num = static_cast<uint32_t>(state.used_core_num);
  run.single_core_m = static_cast<uint32_t>(state.single_core_m);
  run.single_core_n = static_cast<uint32_t>(state.single_core_n);
  run.single_core_k = static_cast<uint32_t>(state.single_core_k);
  run.base_m = static_cast<uint32_t>(state.base_m);
  run.base_n = static_cast<uint32_t>(state.base_n);
  run.base_k = static_cast<uint32_t>(state.base_k);
  run.depth_a1 = static_cast<uint32_t>(state.depth_a1);
  run.depth_b1 = static_cast<uint32_t>(state.depth_b1);
  run.step_m = static_cast<uint32_t>(state.step_m);
  run.step_n = static_cast<uint32_t>(state.step_n);
  run.step_ka = static_cast<uint32_t>(state.step_ka);
  run.step_kb = static_cast<uint32_t>(state.step_kb);
  run.db_l0c = static_cast<uint32_t>(state.l0c_db);
  run.m_tail_cnt = static_cast<uint32_t>(state.tail_m_cnt);
  run.n_tail_cnt = static_cast<uint32_t>(state.tail_n_cnt);
  run.k_tail_cnt = static_cast<uint32_t>(state.tail_k_cnt);
  run.m_base_tail_split_cnt = static_cast<uint32_t>(state.m_base_tail_split_cnt);
  run.n_base_tail_split_cnt = static_cast<uint32_t>(state.n_base_tail_split_cnt);
  run.m_tail_main = static_cast<uint32_t>(state.m_tail_main);
  run.n_tail_main = static_cast<uint32_t>(state.n_tail_main);
  run.mmad_param = hf32 ? 1 : 0;
  run.aic_num = chip.aic_num;
  run.batch_a = static_cast<uint32_t>(facts.batch_a);
  run.batch_b = static_cast<uint32_t>(facts.batch_b);
  run.batch_c = static_cast<uint32_t>(facts.batch_c);
  for (int i = 0; i < kBatchSlots; ++i) {
    run.a_dims[i] = static_cast<uint32_t>(facts.batch_a_dims[i]);
    run.b_dims[i] = static_cast<uint32_t>(facts.batch_b_dims[i]);
    run.c_dims[i] = static_cast<uint32_t>(facts.batch_c_dims[i]);
  }
  run.m = facts.m;
  run.n = facts.n;
  run.l1_buffer_num = static_cast<uint32_t>(state.l1_buffer_num);
  run.ub_db = static_cast<uint32_t>(state.ub_db);
  return run;
}

}  // namespace npu::tiling
