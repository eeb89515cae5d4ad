// WeightQuantBatchMatmulV2's tile loops (the `expand` of its three rows in
// kernel_table.cc): which cube core computes which block of C. The vector
// cores' dequantization of the weight is the emulator's business (it runs
// on the two AIVs of each AIC before the cube reads the block), so the
// schedule holds kMmad units only, each over the whole K.
//
// - ADAPTIVE_SPLIT (WeightQuantBatchMatmulV2ASTilingDataParams): the cores
//   form a cubeNumBlocksM x cubeNumBlocksN grid. M is cut in
//   ceil(m / cubeNumBlocksM) rows per row of cores; N in mainBlockCount
//   blocks of mainBlockL1Size columns, then firstTailBlockCount of
//   firstTailBlockL1Size and secondTailBlockCount of secondTailBlockL1Size,
//   dealt in that order to the cores of each row round-robin (one block per
//   core and round), the last piece cut at N.
// - ANTI_REG and CUSTOM_DEPRECATED (the RegBase and 910B structs): an
//   mDim x nDim grid of single-core blocks (singleCoreM rows; N per core
//   ceil(n / nDim) rounded to 16, or to baseN for the custom kernel).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"
#include "server/tiling/schedule_internal.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling::schedule_internal {
namespace {

absl::StatusOr<uint64_t> Field(const TilingPlan& plan, std::string_view name) {
  std::optional<uint64_t> value = plan.data.Get(name);
  if (!value) {
    return absl::InvalidArgumentError(
        absl::StrCat("tiling field ", std::string(name), " is missing"));
  }
  return *value;
}

absl::StatusOr<uint64_t> Positive(const TilingPlan& plan, std::string_view name) {
  ASSIGN_OR_RETURN(const uint64_t value, Field(plan, name));
  if (value == 0) {
    return absl::InvalidArgumentError(absl::StrCat("tiling field ", std::string(name), " is 0"));
  }
  return value;
}

// A grid of cores: `m_pieces` rows of C per core row, the N pieces of each
// core column in round order.
absl::StatusOr<Schedule> GridSchedule(const TilingPlan& plan, const MatmulProblem& walked,
                                      uint64_t cube_m, uint64_t cube_n, uint64_t rows_per_core,
                                      const std::vector<std::vector<Range>>& n_per_core) {
  const uint64_t m = static_cast<uint64_t>(walked.m);
  const uint64_t k = static_cast<uint64_t>(walked.k);
  if (cube_m * cube_n > plan.block_dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the core grid ", cube_m, " x ", cube_n, " exceeds the plan's block_dim=", plan.block_dim));
  }
  Schedule s;
  s.aic_cores = static_cast<uint32_t>(cube_m * cube_n);
  s.base_m = plan.block.base_m;
  s.base_n = plan.block.base_n;
  s.base_k = plan.block.base_k;
  s.k_l1 = plan.block.k_l1;
  s.batch = 1;
  s.batch_rows = m;
  for (uint64_t mi = 0; mi < cube_m; ++mi) {
    const uint64_t m_begin = std::min(m, mi * rows_per_core);
    const uint64_t m_end = std::min(m, m_begin + rows_per_core);
    for (uint64_t ni = 0; ni < cube_n; ++ni) {
      const uint32_t core = static_cast<uint32_t>(mi * cube_n + ni);
      uint32_t round = 0;
      if (m_begin >= m_end) continue;
      for (const Range& n_range : n_per_core[ni]) {
        WorkUnit unit;
        unit.core = core;
        unit.round = round++;
        unit.tile_idx = static_cast<int64_t>(core);
        unit.m = {m_begin, m_end};
        unit.n = n_range;
        unit.k = {0, k};
        s.units.push_back(unit);
        s.rounds = std::max(s.rounds, round);
      }
    }
  }
  return s;
}

}  // namespace

absl::StatusOr<Schedule> ExpandWeightQuant(const TilingPlan& plan, const MatmulProblem& walked,
                                           const ChipSpec& /*chip*/, uint64_t batch) {
  if (batch != 1) {
    return absl::InvalidArgumentError("WeightQuantBatchMatmulV2 computes one 2-D matmul");
  }
  const uint64_t m = static_cast<uint64_t>(walked.m);
  const uint64_t n = static_cast<uint64_t>(walked.n);
  if (plan.data.kernel == KernelId::kWeightQuantAdaptiveSplit) {
    ASSIGN_OR_RETURN(const uint64_t cube_m, Positive(plan, "cubeNumBlocksM"));
    ASSIGN_OR_RETURN(const uint64_t cube_n, Positive(plan, "cubeNumBlocksN"));
    ASSIGN_OR_RETURN(const uint64_t main_count, Field(plan, "mainBlockCount"));
    ASSIGN_OR_RETURN(const uint64_t main_l1, Field(plan, "mainBlockL1Size"));
    ASSIGN_OR_RETURN(const uint64_t first_count, Field(plan, "firstTailBlockCount"));
    ASSIGN_OR_RETURN(const uint64_t first_l1, Field(plan, "firstTailBlockL1Size"));
    ASSIGN_OR_RETURN(const uint64_t second_count, Field(plan, "secondTailBlockCount"));
    ASSIGN_OR_RETURN(const uint64_t second_l1, Field(plan, "secondTailBlockL1Size"));
    std::vector<std::vector<Range>> per_core(cube_n);
    uint64_t begin = 0, block = 0;
    auto deal = [&](uint64_t count, uint64_t size) {
      for (uint64_t i = 0; i < count && begin < n && size > 0; ++i, ++block) {
        const uint64_t end = std::min(n, begin + size);
        per_core[block % cube_n].push_back({begin, end});
        begin = end;
      }
    };
    deal(main_count, main_l1);
    deal(first_count, first_l1);
    deal(second_count, second_l1);
    if (begin < n) {
      return absl::InvalidArgumentError(
          absl::StrCat("the N blocks of the struct cover ", begin, " of n=", n, " columns"));
    }
    return GridSchedule(plan, walked, cube_m, cube_n, CeilDiv(m, cube_m), per_core);
  }
  const bool reg_base = plan.data.kernel == KernelId::kWeightQuantRegBase;
  ASSIGN_OR_RETURN(const uint64_t cube_m,
                   Positive(plan, reg_base ? "cubeNumBlocksM" : "cubeBlockDimM"));
  ASSIGN_OR_RETURN(const uint64_t cube_n,
                   Positive(plan, reg_base ? "cubeNumBlocksN" : "cubeBlockDimN"));
  ASSIGN_OR_RETURN(const uint64_t base_n, Positive(plan, "matmulTiling.baseN"));
  const uint64_t rows = reg_base ? CeilAlign(CeilDiv(m, cube_m), 16) : CeilDiv(m, cube_m);
  const uint64_t cols =
      reg_base ? CeilAlign(CeilDiv(n, cube_n), 16) : CeilAlign(CeilDiv(n, cube_n), base_n);
  std::vector<std::vector<Range>> per_core(cube_n);
  for (uint64_t ni = 0; ni < cube_n; ++ni) {
    const uint64_t begin = std::min(n, ni * cols);
    const uint64_t end = std::min(n, begin + cols);
    if (begin < end) per_core[ni].push_back({begin, end});
  }
  return GridSchedule(plan, walked, cube_m, cube_n, rows, per_core);
}

BlockTiling WeightQuantBlock(const TilingPlan& plan, const MatmulProblem& walked) {
  BlockTiling block = plan.block;
  block.single_core_k = static_cast<uint64_t>(walked.k);
  return block;
}

}  // namespace npu::tiling::schedule_internal
