#include "emulator/work_estimate.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "emulator/kernel_traits.h"
#include "server/tiling/grouped/gmm_groups.h"
#include "server/tiling/int_math.h"
#include "server/tiling/schedule.h"
#include "server/tiling/tiling_data.h"

namespace npu::emu {
namespace {

// Products, sums and quotients that saturate instead of wrapping: the
// estimates only compare against a limit.
constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();
uint64_t SatMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > kSaturated / a) return kSaturated;
  return a * b;
}
uint64_t SatAdd(uint64_t a, uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }
using tiling::CeilDiv;

}  // namespace

EmulationWork EstimateEmulationWork(const tiling::TilingPlan& plan,
                                    const tiling::MatmulProblem& problem) {
  // GroupedMatmul: its groups' base blocks, each over its own K.
  if (problem.op == tiling::MatmulOp::kGroupedMatmul) {
    EmulationWork work;
    const absl::StatusOr<tiling::grouped::GmmGroups> groups =
        tiling::grouped::GroupsOf(problem.grouped);
    if (!groups.ok()) return work;  // the emulator names the field
    tiling::BlockTiling b = tiling::KernelBlock(plan, problem);
    if (plan.data.kernel == tiling::KernelId::kGroupedWeightQuant) {
      // Its controllers cut N finer: baseN halved, or the struct's main and
      // tail blocks.
      using F = tiling::GmmWeightQuantField;
      b.base_n /= 2;
      for (const auto& [count, size] :
           {std::pair{F::kMainBlockCount, F::kMainBlockSize},
            std::pair{F::kFirstTailBlockCount, F::kFirstTailBlockSize},
            std::pair{F::kSecondTailBlockCount, F::kSecondTailBlockSize}}) {
        const uint64_t blocks = tiling::Get(plan.data, count).value_or(0);
        const uint64_t width = tiling::Get(plan.data, size).value_or(0);
        if (blocks > 0 && width > 0) b.base_n = std::min(b.base_n, width);
      }
    }
    for (uint64_t* size : {&b.base_m, &b.base_n, &b.base_k}) *size = std::max<uint64_t>(1, *size);
    uint64_t steps = 0;
    for (const tiling::grouped::GmmGroup& g : groups->groups) {
      if (!g.computed()) continue;
      const uint64_t blocks = SatMul(CeilDiv(g.m, b.base_m), CeilDiv(g.n, b.base_n));
      work.base_blocks = SatAdd(work.base_blocks, blocks);
      steps = SatAdd(steps, SatMul(blocks, CeilDiv(g.k, b.base_k)));
    }
    work.units = work.base_blocks;
    work.k_steps = work.base_blocks == 0 ? 0 : CeilDiv(steps, work.base_blocks);
    work.min_ops = std::max(steps, work.units);
    work.expected_ops = SatAdd(SatMul(3, steps), work.units);
    work.why = absl::StrCat(work.base_blocks, " base blocks of ", groups->groups.size(),
                            " groups, ", steps, " K steps");
    return work;
  }
  // A batched problem is its batches' work: one batch's rows (M as the
  // kernel walks it) times the C batches.
  const absl::StatusOr<tiling::BatchShape> walk = tiling::BatchShapeOf(problem);
  const uint64_t m = walk.ok() ? walk->rows : static_cast<uint64_t>(problem.m);
  const uint64_t batch = walk.ok() ? walk->batch : 1;
  const uint64_t n = problem.n, k = problem.k;
  auto field = [&](auto name, uint64_t fallback) {
    return tiling::Get(plan.data, name).value_or(fallback);
  };
  EmulationWork work;
  if (plan.kernel_type == tiling::KernelType::kAivOnly) {
    // Every vector unit stores its part of C: at least one operation each.
    if (const auto units = KernelTraitsOf(plan.data.kernel).vector_units) {
      work.units = units(plan, batch);
      work.min_ops = work.expected_ops = work.units;
      work.why = absl::StrCat(work.units, " vector work units");
      return work;
    }
    switch (plan.key.model) {
      case tiling::KernelModel::kToMul:
        work.units = CeilDiv(SatMul(m, n), field(tiling::ToMulField::kBaseMN, 0));
        break;
      case tiling::KernelModel::kToMultiMul:
        work.units = SatMul(CeilDiv(m, field(tiling::ToVectorField::kBaseM, 0)),
                            CeilDiv(n, field(tiling::ToVectorField::kBaseN, 0)));
        break;
      default:
        work.units = field(tiling::KEqZeroField::kAivNum, plan.block_dim);
        break;
    }
    work.min_ops = work.expected_ops = work.units;
    work.why = absl::StrCat(work.units, " vector work units");
    return work;
  }
  // Every base block takes one MMAD per baseK step of its K range, and every
  // work unit (an L1 tile, or a K slice of a Stream-K tile) at least one
  // operation.
  tiling::MatmulProblem walked = problem;
  walked.m = static_cast<int64_t>(m);
  tiling::BlockTiling b = tiling::KernelBlock(plan, walked);
  for (uint64_t* size : {&b.base_m, &b.base_n, &b.base_k, &b.m_l1, &b.n_l1, &b.single_core_k}) {
    *size = std::max<uint64_t>(1, *size);  // the emulator names a zero field itself
  }
  work.base_blocks = SatMul(SatMul(CeilDiv(m, b.base_m), CeilDiv(n, b.base_n)), batch);
  work.k_steps = std::max<uint64_t>(1, CeilDiv(k, b.base_k));
  if (plan.key.model == tiling::KernelModel::kStreamK ||
      plan.key.model == tiling::KernelModel::kStreamKSplitK) {
    const uint64_t used =
        std::max<uint64_t>(1, field(tiling::BasicField::kUsedCoreNum, plan.block_dim));
    const uint64_t tail = work.base_blocks % used;
    work.units = SatAdd(work.base_blocks - tail, SatMul(tail, CeilDiv(k, b.single_core_k)));
  } else {
    work.units = SatMul(SatMul(CeilDiv(m, b.m_l1), CeilDiv(n, b.n_l1)), batch);
  }
  const uint64_t steps = SatMul(work.base_blocks, work.k_steps);
  work.min_ops = steps;
  work.why = absl::StrCat(work.base_blocks, " base blocks x ", work.k_steps, " K steps");
  if (work.units > work.min_ops) {
    work.min_ops = work.units;
    work.why = absl::StrCat(work.units, " work units");
  }
  work.expected_ops = SatAdd(SatMul(3, steps), work.units);
  return work;
}

}  // namespace npu::emu
