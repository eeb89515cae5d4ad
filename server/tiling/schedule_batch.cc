// The batch kernels' tile loops and block sizes: BatchMatMulV3's (and
// FusedMatMul's batched) structs, each the `expand` and `block` of its row
// in kernel_table.cc (see schedule.h for how each kernel walks its batches).
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/schedule.h"
#include "server/tiling/schedule_internal.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/types.h"

namespace npu::tiling::schedule_internal {
namespace {

// One unit per batch of a multi-batch tile: the whole (stacked) rows, N and
// K of C batch `batch`.
WorkUnit BatchUnit(const MatmulProblem& problem, uint64_t core, uint64_t round, uint64_t tile,
                   uint64_t batch) {
  WorkUnit unit;
  unit.core = static_cast<uint32_t>(core);
  unit.round = static_cast<uint32_t>(round);
  unit.tile_idx = static_cast<int64_t>(tile);
  unit.batch = static_cast<uint32_t>(batch);
  const uint64_t rows = static_cast<uint64_t>(problem.m);
  unit.m = {batch * rows, (batch + 1) * rows};
  unit.n = {0, static_cast<uint64_t>(problem.n)};
  unit.k = {0, static_cast<uint64_t>(problem.k)};
  return unit;
}

// The batch count a batch struct states must be the problem's: the kernel
// walks the struct's count.
absl::Status RequireBatch(std::string_view field, uint64_t stated, uint64_t batch) {
  if (stated != batch) {
    return absl::InvalidArgumentError(absl::StrCat("tiling field ", std::string(field), "=", stated,
                                                   " differs from the problem's ", batch,
                                                   " C batches"));
  }
  return absl::OkStatus();
}

// BlockSchedulerIterBatchBuiltIn and KernelMatmulIterBatch: tile t is the
// iterBatchL1 batches from t * iterBatchL1, each whole; the cores below
// min(b, blockNum) stride over the tiles by the launched block count
// (matmul/batch_mat_mul_v3/op_kernel/arch35/batch_mat_mul_v3_iterbatch_basicapi_block_scheduler.h,
// matmul/common/cmct/kernel/kernel_matmul_iterbatch.h).
}  // namespace

absl::StatusOr<Schedule> ExpandBatchCube(const TilingPlan& plan, const MatmulProblem& walked,
                                         const ChipSpec& chip, uint64_t batch) {
  // The K=0 clear (FusedMatMul's add / mul on batched shapes) covers every
  // batch whatever the struct says.
  if (plan.key.model != KernelModel::kKEqualZero) {
    RETURN_IF_ERROR(
        RequireBatch("batchDimAll", FieldOr(plan, BatchBasicField::kBatchDimAll, 1), batch));
  }
  return ExpandByModel(plan, walked, chip, batch);
}

absl::StatusOr<Schedule> ExpandIterBatch(const TilingPlan& plan, const MatmulProblem& problem,
                                         const ChipSpec& /*chip*/, uint64_t batch) {
  const uint64_t b = FieldOr(plan, IterBatchField::kB, batch);
  RETURN_IF_ERROR(RequireBatch("b", b, batch));
  const uint64_t iter_l1 = FieldOr(plan, IterBatchField::kIterBatchL1, 0);
  RETURN_IF_ERROR(RequirePositive("iterBatchL1", iter_l1));
  RETURN_IF_ERROR(RequirePositive("iterBatchL0", FieldOr(plan, IterBatchField::kIterBatchL0, 0)));
  RETURN_IF_ERROR(RequirePositive("baseM", FieldOr(plan, IterBatchField::kBaseM, 0)));
  RETURN_IF_ERROR(RequirePositive("baseN", FieldOr(plan, IterBatchField::kBaseN, 0)));
  RETURN_IF_ERROR(RequirePositive("baseK", FieldOr(plan, IterBatchField::kBaseK, 0)));
  const uint64_t block_num = plan.block_dim;
  const uint64_t tiles = CeilDiv(b, iter_l1);
  const uint64_t cores = std::min(b, block_num);
  Schedule schedule;
  schedule.batches_share_loads = true;
  schedule.aic_cores = static_cast<uint32_t>(std::min(cores, tiles));
  for (uint64_t core = 0; core < cores; ++core) {
    for (uint64_t tile = core; tile < tiles; tile += block_num) {
      for (uint64_t i = tile * iter_l1; i < std::min(b, (tile + 1) * iter_l1); ++i) {
        schedule.units.push_back(BatchUnit(problem, core, tile / block_num, tile, i));
      }
    }
  }
  return schedule;
}

// BlockSchedulerMergeBatchBuiltIn: tiles of batchAL1 batches while every
// core gets one (the main loops), then the remaining batches spread over
// the cores, the first `remainder % blockNum` taking one more
// (matmul/batch_mat_mul_v3/op_kernel/arch35/batch_mat_mul_v3_mergebatch_basicapi_block_scheduler.h).
absl::StatusOr<Schedule> ExpandMergeBatch(const TilingPlan& plan, const MatmulProblem& problem,
                                          const ChipSpec& /*chip*/, uint64_t batch) {
  const uint64_t b = FieldOr(plan, MergeBatchField::kB, batch);
  RETURN_IF_ERROR(RequireBatch("b", b, batch));
  const uint64_t per_tile = FieldOr(plan, MergeBatchField::kBatchAL1, 0);
  RETURN_IF_ERROR(RequirePositive("batchAL1", per_tile));
  RETURN_IF_ERROR(RequirePositive("batchL0", FieldOr(plan, MergeBatchField::kBatchL0, 0)));
  RETURN_IF_ERROR(RequirePositive("kL1", FieldOr(plan, MergeBatchField::kKL1, 0)));
  RETURN_IF_ERROR(RequirePositive("baseK", FieldOr(plan, MergeBatchField::kBaseK, 0)));
  const uint64_t block_num = plan.block_dim;
  const uint64_t main_loops = b / per_tile / block_num;
  const uint64_t remainder = b - main_loops * block_num * per_tile;
  const uint64_t tail_batch = CeilDiv(remainder, block_num);
  const uint64_t tail_block = remainder % block_num;
  const uint64_t tiles = CeilAlign(CeilDiv(b, per_tile), block_num);
  Schedule schedule;
  schedule.batches_share_loads = true;
  schedule.aic_cores = static_cast<uint32_t>(std::min(tiles, block_num));
  for (uint64_t core = 0; core < schedule.aic_cores; ++core) {
    for (uint64_t tile = core; tile < tiles; tile += block_num) {
      const uint64_t loop = tile / block_num;
      uint64_t first = tile * per_tile, count = per_tile;
      if (loop >= main_loops && tail_batch > 0) {
        const uint64_t idx = tile % block_num;
        const uint64_t base = main_loops * per_tile * block_num;
        if (tail_block > 0 && idx >= tail_block) {
          first = base + tail_block * tail_batch + (tail_batch - 1) * (idx - tail_block);
          count = tail_batch - 1;
        } else {
          first = base + idx * tail_batch;
          count = tail_batch;
        }
      } else if (loop >= main_loops) {
        count = 0;  // past the batches: the tile is empty
      }
      for (uint64_t i = first; i < std::min(b, first + count); ++i) {
        schedule.units.push_back(BatchUnit(problem, core, loop, tile, i));
      }
    }
  }
  return schedule;
}

namespace {

// The kernels of the 90-word BatchMatMulV3TilingData (high-level Matmul API
// driven by TCubeTiling) on devkits without the tensor-API headers
// (matmul/batch_mat_mul_v3/op_kernel/arch35/batch_mat_mul_v3.cpp):
//   * ITER_BATCH_SINGLE_BIAS runs BatchMatMulMultiBatchKernel;
//   * every other batch model (BROADCAST_BATCH and FOR_BATCH of BASE,
//     ITER_BATCH_BROADCAST_A / B) runs BatchMatMulAswKernel.
// Simplification: the tensor-API kernels that newer devkits select for
// BROADCAST_BATCH and ITER_BATCH_BROADCAST (their schedulers live in the
// devkit, not in ops-nn) are not modelled; both fall back to the ASW walk.

// BatchMatMulAswBlock: C is baseM x baseN tiles, batch x mCnt x nCnt of them,
// batch outermost; core c runs tiles c, c + usedCoreNum, ... Inside a batch
// the tiles follow the SWAT window of aswWindowLen rows, serpentine, with no
// tail re-split; each tile runs its whole K through the high-level API
// (matmul/batch_mat_mul_v3/op_kernel/arch35/batch_mat_mul_v3_asw_block_advanced.h).
// fp32 output without hf32 splits a K above 8192 into chunks summed in GM.
absl::StatusOr<Schedule> ExpandHighLevelAsw(const TilingPlan& plan, const MatmulProblem& problem,
                                            uint64_t batch) {
  using F = HighLevelBatchField;
  const uint64_t used = FieldOr(plan, F::kUsedCoreNum, plan.block_dim);
  const uint64_t base_m = FieldOr(plan, F::kBaseM, 0), base_n = FieldOr(plan, F::kBaseN, 0);
  const uint64_t window = FieldOr(plan, F::kAswWindowLen, kCannSwatWindowRows);
  RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
  RETURN_IF_ERROR(RequirePositive("baseM", base_m));
  RETURN_IF_ERROR(RequirePositive("baseN", base_n));
  RETURN_IF_ERROR(RequirePositive("aswWindowLen", window));
  if (used > plan.block_dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tiling field usedCoreNum=", used, " exceeds the plan's block_dim=", plan.block_dim));
  }
  const uint64_t m = static_cast<uint64_t>(problem.m), n = static_cast<uint64_t>(problem.n);
  const uint64_t k = static_cast<uint64_t>(problem.k);
  const uint64_t m_cnt = CeilDiv(m, base_m), n_cnt = CeilDiv(n, base_n);
  const uint64_t mn = m_cnt * n_cnt, total = mn * batch;
  Schedule schedule;
  schedule.aic_cores = static_cast<uint32_t>(std::min(used, total));
  const uint64_t single_k = FieldOr(plan, F::kSingleCoreK, k);
  constexpr uint64_t kFp32SplitK = 8192;
  constexpr uint64_t kFp32PerBlock = 32 / kFp32Bytes;  // chunks align to 32 bytes of fp32
  if (problem.dtype_c == DataType::kFloat32 && FieldOr(plan, F::kMatmulMmadParam, 0) == 0 &&
      problem.format_b == Format::kNd && single_k > kFp32SplitK) {
    // Simplification: SplitKChunks keeps full chunks and gives the last one
    // the rest, where the kernel's last chunk is K % chunk; the two differ
    // only in where the final boundary lies.
    const uint64_t rounds = CeilDiv(single_k, kFp32SplitK);
    schedule.split_k_chunk = CeilAlign(CeilDiv(single_k, rounds), kFp32PerBlock);
  }
  for (uint64_t core = 0; core < schedule.aic_cores; ++core) {
    for (uint64_t index = core, round = 0; index < total; index += used, ++round) {
      const auto [m_idx, n_idx] = SerpentineTile(index % mn, m_cnt, n_cnt, window);
      const uint64_t c_batch = index / mn;
      WorkUnit unit;
      unit.core = static_cast<uint32_t>(core);
      unit.round = static_cast<uint32_t>(round);
      unit.tile_idx = static_cast<int64_t>(index);
      unit.batch = static_cast<uint32_t>(batch > 1 ? c_batch : 0);
      const uint64_t m_off = c_batch * m + m_idx * base_m, n_off = n_idx * base_n;
      unit.m = {m_off, std::min(m_off + base_m, (c_batch + 1) * m)};
      unit.n = {n_off, std::min(n_off + base_n, n)};
      unit.k = {0, k};
      schedule.units.push_back(unit);
    }
  }
  return schedule;
}

// BatchMatMulMultiBatchBaseBlock: each loop a core computes iterBatch
// consecutive whole batches (one IterateBatch, its batches loaded together);
// the last loop spreads the remaining batches over the usedCoreNum cores,
// the first `remaining % usedCoreNum` taking one more
// (matmul/batch_mat_mul_v3/op_kernel/arch35/batch_mat_mul_v3_iterbatch_block_advanced.h).
// Simplification: batchOutNum (how many batch outputs the API leaves in L0C
// before one fixpipe) is not modelled; every batch is written on its own.
absl::StatusOr<Schedule> ExpandHighLevelIterBatch(const TilingPlan& plan,
                                                  const MatmulProblem& problem, uint64_t batch) {
  using F = HighLevelBatchField;
  const uint64_t used = FieldOr(plan, F::kUsedCoreNum, plan.block_dim);
  const uint64_t per_core = FieldOr(plan, F::kIterBatch, 0);
  RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
  RETURN_IF_ERROR(RequirePositive("iterBatch", per_core));
  if (used > plan.block_dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tiling field usedCoreNum=", used, " exceeds the plan's block_dim=", plan.block_dim));
  }
  const uint64_t per_loop = per_core * used;
  const uint64_t loops = CeilDiv(batch, per_loop);
  const uint64_t last_all = batch % per_loop == 0 ? per_loop : batch % per_loop;
  const uint64_t last_per_core = last_all / used, last_extra = last_all % used;
  Schedule schedule;
  schedule.batches_share_loads = true;
  for (uint64_t core = 0; core < used; ++core) {
    for (uint64_t loop = 0; loop < loops; ++loop) {
      uint64_t first = loop * per_loop + core * per_core, count = per_core;
      if (loop + 1 == loops) {
        const uint64_t base = loop * per_loop;
        count = core < last_extra ? last_per_core + 1 : last_per_core;
        first = core < last_extra
                    ? base + core * count
                    : base + last_extra * (last_per_core + 1) + (core - last_extra) * last_per_core;
      }
      for (uint64_t i = first; i < std::min(batch, first + count); ++i) {
        schedule.units.push_back(BatchUnit(problem, core, loop, loop * used + core, i));
        schedule.aic_cores = std::max(schedule.aic_cores, static_cast<uint32_t>(core + 1));
      }
    }
  }
  return schedule;
}

}  // namespace

absl::StatusOr<Schedule> ExpandHighLevelBatch(const TilingPlan& plan, const MatmulProblem& problem,
                                              const ChipSpec& /*chip*/, uint64_t batch) {
  RETURN_IF_ERROR(
      RequireBatch("cBatchDimAll", FieldOr(plan, HighLevelBatchField::kCBatchDimAll, 1), batch));
  if (plan.key.batch_model == static_cast<uint8_t>(BatchModel::kIterBatchSingleBias)) {
    return ExpandHighLevelIterBatch(plan, problem, batch);
  }
  return ExpandHighLevelAsw(plan, problem, batch);
}

// KernelBatchMatMulToMul: in round r core c takes batchNum batches from
// (r * usedCoreNum + c) * batchNum; in the last round batchNumLastRound
// each, core lastCoreNum batchNumLastRoundTail and the cores after it none
// (matmul/common/cmct/kernel/kernel_batch_matmul_to_mul.h). The AIV
// multiplies each batch's [m, 1] x [1, n] on the vector unit.
absl::StatusOr<Schedule> ExpandBatchToMul(const TilingPlan& plan, const MatmulProblem& problem,
                                          const ChipSpec& /*chip*/, uint64_t batch) {
  const uint64_t b = FieldOr(plan, BatchToMulField::kB, batch);
  RETURN_IF_ERROR(RequireBatch("b", b, batch));
  const uint64_t used = FieldOr(plan, BatchToMulField::kUsedCoreNum, plan.block_dim);
  const uint64_t single = FieldOr(plan, BatchToMulField::kSingleCoreBatch, 0);
  const uint64_t batch_num = FieldOr(plan, BatchToMulField::kBatchNum, 0);
  const uint64_t last_round = FieldOr(plan, BatchToMulField::kBatchNumLastRound, 0);
  const uint64_t last_tail = FieldOr(plan, BatchToMulField::kBatchNumLastRoundTail, 0);
  // lastCoreNum is an unsigned word CANN may wrap (issue17 brief 2, TO_MUL).
  const uint32_t last_core = static_cast<uint32_t>(FieldOr(plan, BatchToMulField::kLastCoreNum, 0));
  RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
  RETURN_IF_ERROR(RequirePositive("singleCoreBatch", single));
  RETURN_IF_ERROR(RequirePositive("batchNum", batch_num));
  if (problem.k != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("BATCH_MATMUL_TO_MUL multiplies k=1 matrices, the problem has k=", problem.k));
  }
  const uint64_t block_num = plan.block_dim;
  const uint64_t tiles = used * CeilDiv(b, batch_num * used);
  Schedule schedule;
  uint32_t cores_used = 0;
  for (uint64_t core = 0; core < block_num; ++core) {
    for (uint64_t tile = core; tile < tiles; tile += block_num) {
      const uint64_t round = tile / used;
      uint64_t first = round * batch_num * used;
      uint64_t count = batch_num;
      bool stop = false;
      if (batch_num >= single - first / used) {
        count = last_round;
        first += core * count;
        if (core > last_core) break;
        if (core == last_core) {
          count = last_tail;
          stop = true;
        }
      } else {
        first += core * batch_num;
      }
      for (uint64_t i = first; i < std::min(b, first + count); ++i) {
        WorkUnit unit = BatchUnit(problem, core, round, tile, i);
        unit.core_kind = CoreKind::kAiv;
        unit.op = UnitOp::kVectorMul;
        schedule.units.push_back(unit);
        cores_used = std::max(cores_used, static_cast<uint32_t>(core + 1));
      }
      if (stop) break;
    }
  }
  schedule.aiv_cores = cores_used;
  return schedule;
}

BlockTiling IterBatchBlock(const TilingPlan& plan, const MatmulProblem& walked) {
  BlockTiling block = plan.block;
  const uint64_t k = static_cast<uint64_t>(walked.k);
  block.base_m = FieldOr(plan, IterBatchField::kBaseM, 0);
  block.base_n = FieldOr(plan, IterBatchField::kBaseN, 0);
  block.base_k = FieldOr(plan, IterBatchField::kBaseK, 0);
  block.m_l1 = static_cast<uint64_t>(walked.m);
  block.n_l1 = static_cast<uint64_t>(walked.n);
  block.k_l1 = std::max<uint64_t>(k, 1);
  return block;
}

BlockTiling MergeBatchBlock(const TilingPlan& plan, const MatmulProblem& walked) {
  BlockTiling block = plan.block;
  const uint64_t m = static_cast<uint64_t>(walked.m), n = static_cast<uint64_t>(walked.n);
  block.base_m = CeilAlign(m, kBlock16);
  block.base_n = CeilAlign(n, kBlock16);
  block.base_k = FieldOr(plan, MergeBatchField::kBaseK, 0);
  block.m_l1 = m;
  block.n_l1 = n;
  block.k_l1 = FieldOr(plan, MergeBatchField::kKL1, 0);
  return block;
}

BlockTiling HighLevelBatchBlock(const TilingPlan& plan, const MatmulProblem& walked) {
  // The high-level API walks baseM x baseN x baseK L0 blocks through L1
  // stages of stepKa base K blocks; an ASW tile is one baseM x baseN block,
  // an ITER_BATCH unit one whole batch.
  using F = HighLevelBatchField;
  BlockTiling block = plan.block;
  block.base_m = FieldOr(plan, F::kBaseM, block.base_m);
  block.base_n = FieldOr(plan, F::kBaseN, block.base_n);
  block.base_k = FieldOr(plan, F::kBaseK, block.base_k);
  const bool whole_batches =
      plan.key.batch_model == static_cast<uint8_t>(BatchModel::kIterBatchSingleBias);
  block.m_l1 = whole_batches ? static_cast<uint64_t>(walked.m) : block.base_m;
  block.n_l1 = whole_batches ? static_cast<uint64_t>(walked.n) : block.base_n;
  block.k_l1 = block.base_k * std::max<uint64_t>(1, FieldOr(plan, F::kStepKa, 1));
  return block;
}

}  // namespace npu::tiling::schedule_internal
