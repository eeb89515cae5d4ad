// The words a high-level BatchMatMulV3 strategy writes: TCubeTiling's 50
// words in struct order, and the 90-word BatchMatMulV3TilingData made of the
// search's words, the strategy's own plan over them and the rest of the
// struct (CANN's GetTilingDataProcess overloads for MatMulV3TilingData and
// BatchMatMulV3TilingData, matmul_v3_base_tiling_advanced.h). The search
// itself is cube_tiling_search.cc.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "server/tiling/cube_tiling_search.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {

namespace {

// TCubeTiling's members in struct order: its words, and words 0-49 of
// BatchMatMulV3TilingData.
constexpr int32_t CubeTiling::*kCubeTilingMembers[kCubeTilingWords] = {
    &CubeTiling::used_core_num,
    &CubeTiling::m,
    &CubeTiling::n,
    &CubeTiling::ka,
    &CubeTiling::kb,
    &CubeTiling::single_core_m,
    &CubeTiling::single_core_n,
    &CubeTiling::single_core_k,
    &CubeTiling::base_m,
    &CubeTiling::base_n,
    &CubeTiling::base_k,
    &CubeTiling::depth_a1,
    &CubeTiling::depth_b1,
    &CubeTiling::step_m,
    &CubeTiling::step_n,
    &CubeTiling::is_bias,
    &CubeTiling::trans_length,
    &CubeTiling::iterate_order,
    &CubeTiling::share_mode,
    &CubeTiling::share_l1_size,
    &CubeTiling::share_l0c_size,
    &CubeTiling::share_ub_size,
    &CubeTiling::batch_m,
    &CubeTiling::batch_n,
    &CubeTiling::single_batch_m,
    &CubeTiling::single_batch_n,
    &CubeTiling::step_ka,
    &CubeTiling::step_kb,
    &CubeTiling::depth_al1_cache_ub,
    &CubeTiling::depth_bl1_cache_ub,
    &CubeTiling::db_l0a,
    &CubeTiling::db_l0b,
    &CubeTiling::db_l0c,
    &CubeTiling::a_layout_b,
    &CubeTiling::a_layout_s,
    &CubeTiling::a_layout_n,
    &CubeTiling::a_layout_g,
    &CubeTiling::a_layout_d,
    &CubeTiling::b_layout_b,
    &CubeTiling::b_layout_s,
    &CubeTiling::b_layout_n,
    &CubeTiling::b_layout_g,
    &CubeTiling::b_layout_d,
    &CubeTiling::c_layout_b,
    &CubeTiling::c_layout_s1,
    &CubeTiling::c_layout_n,
    &CubeTiling::c_layout_g,
    &CubeTiling::c_layout_s2,
    &CubeTiling::batch_num,
    &CubeTiling::mx_type_para,
};

// Writes the TCubeTiling words to fields 0-49 of `Field`'s struct, one
// store per member (the pack expands at compile time).
template <typename Field, size_t... I>
void SetCubeTilingWords(const TilingStructWriter<Field>& set, const CubeTiling& t,
                        std::index_sequence<I...>) {
  (set(static_cast<Field>(I), static_cast<uint32_t>(t.*kCubeTilingMembers[I])), ...);
}

}  // namespace

std::array<uint32_t, kCubeTilingWords> CubeTilingWords(const CubeTiling& t) {
  std::array<uint32_t, kCubeTilingWords> words{};
  for (int i = 0; i < kCubeTilingWords; ++i) {
    words[i] = static_cast<uint32_t>(t.*kCubeTilingMembers[i]);
  }
  return words;
}

TilingData HighLevelBatchTilingData(const CubeTiling& searched, const HighLevelBatchPlan& plan) {
  using F = HighLevelBatchField;
  TilingData data = NewTilingData<F>();
  const TilingStructWriter<F> set(data);
  // TCubeTiling occupies words 0-49 in the same order as CubeTilingWords.
  SetCubeTilingWords(set, searched, std::make_index_sequence<kCubeTilingWords>());
  // GetTilingDataProcess(MatMulV3TilingData): the strategy's own plan
  // replaces the search's split, blocks and depths.
  set(F::kUsedCoreNum, plan.used_core_num);
  set(F::kSingleCoreM, plan.single_core_m);
  set(F::kSingleCoreN, plan.single_core_n);
  set(F::kSingleCoreK, plan.single_core_k);
  set(F::kBaseM, plan.base_m);
  set(F::kBaseN, plan.base_n);
  set(F::kBaseK, plan.base_k);
  set(F::kDepthA1, plan.depth_a1);
  set(F::kDepthB1, plan.depth_b1);
  set(F::kStepM, plan.step_m);
  set(F::kStepN, plan.step_n);
  set(F::kStepKa, plan.step_ka);
  set(F::kStepKb, plan.step_kb);
  set(F::kIterateOrder, plan.iterate_order);
  set(F::kDbL0c, plan.db_l0c);
  set(F::kBatchNum, plan.iter_batch);
  set(F::kMTailCnt, plan.m_tail_cnt);
  set(F::kNTailCnt, plan.n_tail_cnt);
  set(F::kKTailCnt, plan.k_tail_cnt);
  set(F::kMBaseTailSplitCnt, plan.m_base_tail_split_cnt);
  set(F::kNBaseTailSplitCnt, plan.n_base_tail_split_cnt);
  set(F::kMTailMain, plan.m_tail_main);
  set(F::kNTailMain, plan.n_tail_main);
  set(F::kMatmulMmadParam, plan.mmad_param);
  // GetAswWindowLen: the largest divisor of the core count not above its
  // square root.
  uint32_t window = 1;
  for (uint32_t f = static_cast<uint32_t>(std::sqrt(static_cast<double>(plan.aic_num))); f >= 1;
       --f) {
    if (plan.aic_num % f == 0) {
      window = f;
      break;
    }
  }
  set(F::kAswWindowLen, window);
  set(F::kL2CacheDisable, plan.l2_cache_disable);
  // GetTilingDataProcess(BatchMatMulV3TilingData).
  set(F::kABatchDimAll, plan.batch_a);
  set(F::kBBatchDimAll, plan.batch_b);
  set(F::kCBatchDimAll, plan.batch_c);
  set(F::kBiasBatchDimAll, plan.batch_bias);
  constexpr F kDims[4][3] = {{F::kABatchDim0, F::kBBatchDim0, F::kCBatchDim0},
                             {F::kABatchDim1, F::kBBatchDim1, F::kCBatchDim1},
                             {F::kABatchDim2, F::kBBatchDim2, F::kCBatchDim2},
                             {F::kABatchDim3, F::kBBatchDim3, F::kCBatchDim3}};
  for (int i = 0; i < 4; ++i) {
    set(kDims[i][0], plan.a_dims[i]);
    set(kDims[i][1], plan.b_dims[i]);
    set(kDims[i][2], plan.c_dims[i]);
  }
  set(F::kIterBatch, plan.iter_batch);
  set(F::kBatchOutNum, plan.batch_out_num);
  set(F::kBatchSplitFactor, 1);
  const uint64_t m_l1 =
      std::min<uint64_t>((plan.m + 15) / 16 * 16, static_cast<uint64_t>(plan.base_m) * plan.step_m);
  const uint64_t n_l1 =
      std::min<uint64_t>((plan.n + 15) / 16 * 16, static_cast<uint64_t>(plan.base_n) * plan.step_n);
  set(F::kML1, static_cast<uint32_t>(m_l1));
  set(F::kNL1, static_cast<uint32_t>(n_l1));
  // kL1: at most four K blocks of the smaller of the two K depths.
  const int32_t k_steps =
      std::min(4, std::min(static_cast<int32_t>(plan.step_kb), static_cast<int32_t>(plan.step_ka)));
  set(F::kKL1, plan.base_k * static_cast<uint32_t>(k_steps));
  set(F::kMmadParam, plan.mmad_param & 0xFF);
  set(F::kL1BufferNum, plan.l1_buffer_num & 0xFF);
  set(F::kUbDb, plan.ub_db & 0xFF);
  set(F::kL0cDb, 1);  // never written by CANN: the struct's default
  set(F::kSliceM, plan.slice_m);
  set(F::kSrcNdStride, plan.src_nd_stride);
  set(F::kInnerBatch, plan.inner_batch);
  set(F::kIterBatchL1, plan.iter_batch_l1);
  set(F::kIterBatchL0, plan.iter_batch_l0);
  set(F::kBroadcastAxisA, plan.broadcast_axis_a);
  set(F::kBroadcastAxisB, plan.broadcast_axis_b);
  return data;
}

}  // namespace npu::tiling
