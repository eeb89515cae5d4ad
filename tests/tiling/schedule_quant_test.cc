// ExpandSchedule() for QuantBatchMatmulV3's kernels (schedule_quant.cc):
// every strategy's plan, decided by the real engine, covers C exactly once
// and walks the rounds its struct implies; hand-built structs pin down the
// basic-API scheduler's serpentine order, its tail re-split (which core gets
// which piece, surplus pieces skipped, the re-split only when the pieces fit),
// batches crossing the last round, the piece roundings, the high-level
// kernels' per-batch replay and Stream-K's slices. The problems are CANN's
// unit-test goldens (tests/data/cann950_quant/cases.json, names carry the CSV
// line) or variants of them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/quant/quant_parse.h"
#include "server/tiling/quant/quant_request.h"
#include "server/tiling/schedule.h"
#include "server/tiling/tiling_data.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

ChipSpec Chip950() {
  ChipSpec chip = *FindPlatform(kDefaultPlatform);
  chip.aic_num = 32;
  chip.aiv_num = 64;
  return chip;
}

// A QuantBatchMatmulV3 problem: x1 and x2 of `in`, output `out`.
MatmulProblem Quant(int64_t m, int64_t n, int64_t k, DataType in, DataType out) {
  MatmulProblem p;
  p.op = MatmulOp::kQuantBatchMatmulV3;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_b = in;
  p.dtype_c = out;
  return p;
}

void SetScale(MatmulProblem& p, DataType dtype, std::vector<int64_t> shape) {
  p.quant.scale = {true, dtype, std::move(shape)};
}
void SetPertoken(MatmulProblem& p, DataType dtype, std::vector<int64_t> shape) {
  p.quant.pertoken = {true, dtype, std::move(shape)};
}
void SetBias(MatmulProblem& p, DataType dtype) {
  p.has_bias = true;
  p.dtype_bias = dtype;
}
void SetGroups(MatmulProblem& p, int64_t m, int64_t n, int64_t k) {
  p.quant.group_size_m = m;
  p.quant.group_size_n = n;
  p.quant.group_size_k = k;
}

// A member of the plan's struct (a failed expectation when it has none).
uint64_t Word(const TilingPlan& plan, std::string_view name) {
  const std::optional<uint64_t> value = plan.data.Get(name);
  EXPECT_TRUE(value.has_value()) << name;
  return value.value_or(0);
}

// A core's units in round order.
std::vector<WorkUnit> UnitsOf(const Schedule& s, uint32_t core) {
  std::vector<WorkUnit> units;
  for (const WorkUnit& u : s.units) {
    if (u.core_kind == CoreKind::kAic && u.core == core) units.push_back(u);
  }
  return units;
}

// ---------------------------------------------------------------------------
// The engine's plans.

struct StrategyCase {
  std::string name;
  std::string strategy;  // CANN's name
  KernelId kernel;
  std::function<MatmulProblem()> make;
};

void PrintTo(const StrategyCase& c, std::ostream* os) { *os << c.name; }

std::vector<StrategyCase> StrategyCases() {
  std::vector<StrategyCase> cases;
  auto add = [&](std::string name, std::string strategy, KernelId kernel,
                 std::function<MatmulProblem()> make) {
    cases.push_back({std::move(name), std::move(strategy), kernel, std::move(make)});
  };
  // MX_STREAMK: one 256 x 256 tile split into 32 K slices (L242), and six
  // tiles split over the 32 cores.
  add("mx_stream_k_L242", "MX_STREAMK", KernelId::kQuantStreamK, [] {
    MatmulProblem p = Quant(256, 256, 8192, DataType::kFloat8E4M3, DataType::kFloat16);
    p.dtype_b = DataType::kFloat8E5M2;
    SetScale(p, DataType::kFloat8E8M0, {128, 256, 2});
    SetPertoken(p, DataType::kFloat8E8M0, {256, 128, 2});
    return p;
  });
  add("mx_stream_k_six_tiles", "MX_STREAMK", KernelId::kQuantStreamK, [] {
    MatmulProblem p = Quant(512, 768, 8192, DataType::kFloat8E4M3, DataType::kFloat16);
    SetScale(p, DataType::kFloat8E8M0, {128, 768, 2});
    SetPertoken(p, DataType::kFloat8E8M0, {512, 128, 2});
    return p;
  });
  // MX_BASIC_API_ASW: the 16-word struct (A full load with an N tail split,
  // L389; NZ weight, L420; L0C ping-pong with a 4 x 2 tail split), the
  // 38-word one with a batch, and the cmct kernel without the Tensor API.
  add("mx_fp4_a_full_load_L389", "MX_BASIC_API_ASW", KernelId::kQuantWithoutBatch, [] {
    MatmulProblem p = Quant(404, 13824, 1024, DataType::kFloat4E2M1, DataType::kFloat32);
    p.trans_b = true;
    SetScale(p, DataType::kFloat8E8M0, {13824, 16, 2});
    SetPertoken(p, DataType::kFloat8E8M0, {404, 16, 2});
    return p;
  });
  add("mx_weight_nz_L420", "MX_BASIC_API_ASW", KernelId::kQuantWithoutBatch, [] {
    MatmulProblem p = Quant(10240, 2624, 1024, DataType::kFloat8E4M3, DataType::kBFloat16);
    p.trans_a = true;
    p.format_b = Format::kFractalNz;
    SetScale(p, DataType::kFloat8E8M0, {16, 2624, 2});
    SetPertoken(p, DataType::kFloat8E8M0, {16, 10240, 2});
    return p;
  });
  add("mx_pingpong_tail_split", "MX_BASIC_API_ASW", KernelId::kQuantWithoutBatch, [] {
    MatmulProblem p = Quant(1536, 1536, 16384, DataType::kFloat8E4M3, DataType::kFloat16);
    SetScale(p, DataType::kFloat8E8M0, {256, 1536, 2});
    SetPertoken(p, DataType::kFloat8E8M0, {1536, 256, 2});
    return p;
  });
  add("mx_batch", "MX_BASIC_API_ASW", KernelId::kQuantBasic, [] {
    MatmulProblem p = Quant(1206, 1048, 8512, DataType::kFloat8E5M2, DataType::kBFloat16);
    p.trans_b = true;
    p.batch.a = p.batch.b = {3};
    SetScale(p, DataType::kFloat8E8M0, {3, 1048, 133, 2});
    SetPertoken(p, DataType::kFloat8E8M0, {3, 1206, 133, 2});
    return p;
  });
  add("mx_fp4_without_tensor_api_L227", "MX_BASIC_API_ASW", KernelId::kQuantBasic, [] {
    MatmulProblem p = Quant(5344, 1976, 1260, DataType::kFloat4E2M1, DataType::kBFloat16);
    p.trans_b = true;
    p.batch.a = p.batch.b = {1};
    SetScale(p, DataType::kFloat8E8M0, {1, 1976, 20, 2});
    SetPertoken(p, DataType::kFloat8E8M0, {1, 5344, 20, 2});
    SetBias(p, DataType::kFloat32);
    SetGroups(p, 1, 1, 32);
    p.quant.tensor_api = false;
    return p;
  });
  // CUBE_BASIC_API_ASW: plain (L206), A full load (L385, and L298 with a
  // 1 x 16 tail split), an NZ weight with a 6 x 5 tail split (L405).
  add("cube_L206", "CUBE_BASIC_API_ASW", KernelId::kQuantBasic, [] {
    MatmulProblem p = Quant(4096, 128, 8192, DataType::kInt8, DataType::kFloat16);
    p.batch.a = p.batch.b = {1};
    SetScale(p, DataType::kUint64, {1});
    return p;
  });
  add("cube_a_full_load_L385", "CUBE_BASIC_API_ASW", KernelId::kQuantBasic, [] {
    MatmulProblem p = Quant(403, 15616, 256, DataType::kInt8, DataType::kFloat16);
    p.trans_b = true;
    SetScale(p, DataType::kUint64, {1});
    return p;
  });
  add("cube_a_full_load_tail_split_L298", "CUBE_BASIC_API_ASW", KernelId::kQuantBasic, [] {
    MatmulProblem p = Quant(224, 8360, 64, DataType::kFloat8E5M2, DataType::kFloat16);
    p.batch.a = p.batch.b = {1};
    SetScale(p, DataType::kUint64, {8360});
    SetBias(p, DataType::kFloat32);
    return p;
  });
  add("cube_weight_nz_tail_split_L405", "CUBE_BASIC_API_ASW", KernelId::kQuantBasic, [] {
    MatmulProblem p = Quant(127, 158, 69, DataType::kFloat8E4M3, DataType::kFloat16);
    p.batch.a = p.batch.b = {1};
    p.format_b = Format::kFractalNz;
    SetScale(p, DataType::kUint64, {158});
    SetBias(p, DataType::kFloat32);
    return p;
  });
  // CUBE_ASW (no Tensor API, NZ weight; mix_strategies_test's cube_asw rows).
  add("cube_asw_per_tensor", "CUBE_ASW", KernelId::kQuantHighLevel, [] {
    MatmulProblem p = Quant(4096, 7168, 2048, DataType::kInt8, DataType::kBFloat16);
    p.format_b = Format::kFractalNz;
    SetScale(p, DataType::kUint64, {1});
    SetBias(p, DataType::kInt32);
    p.quant.tensor_api = false;
    return p;
  });
  add("cube_asw_a_full_load", "CUBE_ASW", KernelId::kQuantHighLevel, [] {
    MatmulProblem p = Quant(256, 2048, 1024, DataType::kInt8, DataType::kFloat16);
    p.trans_b = true;
    p.format_b = Format::kFractalNz;
    SetScale(p, DataType::kUint64, {2048});
    p.quant.tensor_api = false;
    return p;
  });
  add("cube_asw_batch", "CUBE_ASW", KernelId::kQuantHighLevel, [] {
    MatmulProblem p = Quant(128, 1024, 512, DataType::kFloat8E4M3, DataType::kBFloat16);
    p.trans_b = true;
    p.batch.a = p.batch.b = {4};
    p.format_b = Format::kFractalNz;
    SetScale(p, DataType::kUint64, {1});
    SetBias(p, DataType::kFloat32);
    p.quant.tensor_api = false;
    return p;
  });
  // MIX_BASIC_API_ASW: 16 words (L423), 38 words with 14 batches and a
  // 2 x 1 tail split (L426), A full load (L427).
  add("mix_basic_L423", "MIX_BASIC_API_ASW", KernelId::kQuantWithoutBatch, [] {
    MatmulProblem p = Quant(128, 4096, 256, DataType::kInt8, DataType::kBFloat16);
    p.batch.a = p.batch.b = {1};
    p.format_b = Format::kFractalNz;
    SetScale(p, DataType::kFloat32, {4096});
    SetPertoken(p, DataType::kFloat32, {128});
    SetBias(p, DataType::kFloat32);
    return p;
  });
  add("mix_basic_batch_L426", "MIX_BASIC_API_ASW", KernelId::kQuantBasic, [] {
    MatmulProblem p = Quant(401, 1034, 7549, DataType::kInt8, DataType::kBFloat16);
    p.batch.a = p.batch.b = {14};
    p.format_b = Format::kFractalNz;
    SetScale(p, DataType::kFloat32, {1034});
    SetBias(p, DataType::kFloat32);
    return p;
  });
  add("mix_basic_a_full_load_L427", "MIX_BASIC_API_ASW", KernelId::kQuantWithoutBatch, [] {
    MatmulProblem p = Quant(128, 16384, 128, DataType::kInt8, DataType::kBFloat16);
    p.batch.a = p.batch.b = {1};
    p.format_b = Format::kFractalNz;
    SetScale(p, DataType::kFloat32, {16384});
    SetPertoken(p, DataType::kFloat32, {128});
    SetBias(p, DataType::kFloat32);
    return p;
  });
  // MIX_ASW: L260, A full load (L271), 28 batches with a 5 x 6 tail split
  // (L293), and a per-token x1 scale under a 2-D weight, which CANN does not
  // fold into M (4 kernel batches of 64 rows; BatchShape's one of 256).
  add("mix_asw_L260", "MIX_ASW", KernelId::kQuantHighLevel, [] {
    MatmulProblem p = Quant(256, 4992, 6656, DataType::kInt8, DataType::kFloat16);
    p.trans_b = true;
    p.batch.a = p.batch.b = {1};
    SetScale(p, DataType::kFloat32, {4992});
    SetPertoken(p, DataType::kFloat32, {256});
    return p;
  });
  add("mix_asw_a_full_load_L271", "MIX_ASW", KernelId::kQuantHighLevel, [] {
    MatmulProblem p = Quant(426, 8192, 1024, DataType::kInt8, DataType::kFloat16);
    p.trans_a = true;
    p.batch.a = p.batch.b = {1};
    SetScale(p, DataType::kFloat32, {8192});
    SetPertoken(p, DataType::kFloat32, {426});
    SetBias(p, DataType::kInt32);
    return p;
  });
  add("mix_asw_batch_L293", "MIX_ASW", KernelId::kQuantHighLevel, [] {
    MatmulProblem p = Quant(129, 178, 328, DataType::kFloat8E5M2, DataType::kBFloat16);
    p.trans_a = p.trans_b = true;
    p.batch.a = {28};
    p.batch.b = {1};
    SetScale(p, DataType::kFloat32, {1});
    SetPertoken(p, DataType::kFloat32, {129});
    SetBias(p, DataType::kFloat32);
    return p;
  });
  add("mix_asw_unfolded_batch", "MIX_ASW", KernelId::kQuantHighLevel, [] {
    MatmulProblem p = Quant(64, 512, 256, DataType::kInt8, DataType::kFloat16);
    p.batch.a = {4};
    SetScale(p, DataType::kFloat32, {512});
    SetPertoken(p, DataType::kFloat32, {64});
    return p;
  });
  // PERBLOCK_BASIC_API_ASW: a 1 x 8 tail split (L344), 17 batches of 81 rows
  // that CANN does not fold (81 is no multiple of the 128-row groups, L368),
  // per-tile with 2 batches and an NZ weight (L486).
  add("perblock_tail_split_L344", "PERBLOCK_BASIC_API_ASW", KernelId::kQuantBasic, [] {
    MatmulProblem p = Quant(7, 132, 19, DataType::kFloat8E4M3, DataType::kBFloat16);
    p.trans_b = true;
    p.batch.a = p.batch.b = {1};
    SetScale(p, DataType::kFloat32, {1, 2, 1});
    SetPertoken(p, DataType::kFloat32, {1, 1, 1});
    SetGroups(p, 128, 128, 128);
    return p;
  });
  add("perblock_unfolded_batch_L368", "PERBLOCK_BASIC_API_ASW", KernelId::kQuantBasic, [] {
    MatmulProblem p = Quant(81, 109, 690, DataType::kFloat8E4M3, DataType::kBFloat16);
    p.batch.a = {17};
    SetScale(p, DataType::kFloat32, {6, 1});
    SetPertoken(p, DataType::kFloat32, {17, 1, 6});
    SetGroups(p, 128, 128, 128);
    return p;
  });
  add("pertile_batch_L486", "PERBLOCK_BASIC_API_ASW", KernelId::kQuantBasic, [] {
    MatmulProblem p = Quant(4, 128, 128, DataType::kFloat8E4M3, DataType::kFloat16);
    p.batch.a = p.batch.b = {2};
    p.format_b = Format::kFractalNz;
    SetScale(p, DataType::kFloat32, {2, 1, 1});
    SetPertoken(p, DataType::kFloat32, {2, 4, 1});
    SetGroups(p, 1, 128, 128);
    return p;
  });
  return cases;
}

// The struct's C: m (after the fold), n, k and batches, by struct kind.
struct StructC {
  uint64_t m = 0, n = 0, k = 0, batch = 1;
};

StructC StructCOf(const TilingPlan& plan) {
  StructC c;
  switch (plan.data.kernel) {
    case KernelId::kQuantWithoutBatch:
      c = {Word(plan, "m"), Word(plan, "n"), Word(plan, "k"), 1};
      break;
    case KernelId::kQuantHighLevel:
      c = {Word(plan, "matmulTiling.M"), Word(plan, "matmulTiling.N"),
           Word(plan, "matmulTiling.Ka"), Word(plan, "params.batchC")};
      break;
    default:
      c = {Word(plan, "matmulTiling.m"), Word(plan, "matmulTiling.n"), Word(plan, "matmulTiling.k"),
           Word(plan, "params.batchC")};
      break;
  }
  return c;
}

// The struct's base block.
std::pair<uint64_t, uint64_t> StructBase(const TilingPlan& plan) {
  if (plan.data.kernel == KernelId::kQuantWithoutBatch) {
    return {Word(plan, "baseM"), Word(plan, "baseN")};
  }
  return {Word(plan, "matmulTiling.baseM"), Word(plan, "matmulTiling.baseN")};
}

class StrategyScheduleTest : public ::testing::TestWithParam<StrategyCase> {};

TEST_P(StrategyScheduleTest, CoversCOnceInTheStructsRounds) {
  const MatmulProblem problem = GetParam().make();
  const ChipSpec chip = Chip950();
  absl::StatusOr<TilingDecision> decision = MakeBuiltinRegistry().Decide(problem, chip);
  ASSERT_THAT(decision.status(), IsOk());
  const TilingPlan& plan = decision->plan;
  ASSERT_EQ(plan.strategy, GetParam().strategy);
  ASSERT_EQ(plan.data.kernel, GetParam().kernel) << KernelRowOf(plan.data.kernel).name;

  absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, problem, chip);
  ASSERT_THAT(schedule.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*schedule, problem), IsOk());

  // The struct's C is CANN's parse of the problem: m after the fold, and
  // the batches the kernel loops over.
  absl::StatusOr<quant::QuantFacts> facts =
      quant::ParseQuantRequest(quant::QuantRequestOf(problem));
  ASSERT_THAT(facts.status(), IsOk());
  const StructC c = StructCOf(plan);
  EXPECT_EQ(c.m, facts->m);
  EXPECT_EQ(c.n, facts->n);
  EXPECT_EQ(c.k, facts->k);
  EXPECT_EQ(c.batch, facts->batch_c);
  // The schedule's stacked C is BatchShape's; the same rows either way.
  EXPECT_EQ(schedule->batch * schedule->batch_rows, c.batch * c.m);

  // The block is the struct's; Stream-K's reductions run on two AIVs per
  // AIC (the other mixed kernels' AIV epilogue is not a schedule unit).
  const auto [base_m, base_n] = StructBase(plan);
  EXPECT_EQ(schedule->base_m, base_m);
  EXPECT_EQ(schedule->base_n, base_n);
  EXPECT_EQ(schedule->aic_cores, plan.block_dim);
  EXPECT_EQ(schedule->aiv_cores,
            plan.data.kernel == KernelId::kQuantStreamK ? 2 * plan.block_dim : 0u);

  const uint64_t tiles = c.batch * CeilDiv(c.m, base_m) * CeilDiv(c.n, base_n);
  switch (plan.data.kernel) {
    case KernelId::kQuantStreamK:
      // Every tile is split in one round; the AIVs reduce.
      EXPECT_EQ(schedule->rounds, 1u);
      EXPECT_EQ(schedule->reductions.size(), tiles);
      break;
    case KernelId::kQuantHighLevel: {
      // ceil(T / usedCoreNum) rounds per batch, replayed for every batch.
      const uint64_t used = Word(plan, "matmulTiling.usedCoreNum");
      EXPECT_EQ(schedule->rounds, c.batch * CeilDiv(tiles / c.batch, used));
      break;
    }
    default:
      // One flat list of batch x MN tiles; a re-split keeps its round.
      EXPECT_EQ(schedule->rounds, CeilDiv(tiles, plan.block_dim));
      break;
  }
  for (const WorkUnit& unit : schedule->units) {
    if (unit.op != UnitOp::kMmad || unit.writes_partial) continue;
    EXPECT_EQ(unit.k, (Range{0, c.k}));  // a tile runs its whole K
    // No unit crosses a kernel batch, nor BatchShape's.
    EXPECT_EQ(unit.m.begin / c.m, (unit.m.end - 1) / c.m);
    EXPECT_EQ(unit.batch, unit.m.begin / schedule->batch_rows);
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, StrategyScheduleTest, ::testing::ValuesIn(StrategyCases()),
                         [](const ::testing::TestParamInfo<StrategyCase>& info) {
                           return info.param.name;
                         });

// The scale inputs of each quant family, for a sweep problem.
enum class Family { kPerTensorInt8, kPerTokenInt8, kMxFp8, kMxFp4, kPerBlockFp8, kPerTileFp8 };

// A problem of `family` whose A has the batch dims `batch_a` and B
// `batch_b` (each scale input shaped to match).
MatmulProblem SweepProblem(Family family, int64_t m, int64_t n, int64_t k, bool trans_a,
                           bool trans_b, std::vector<int64_t> batch_a,
                           std::vector<int64_t> batch_b) {
  MatmulProblem p;
  p.op = MatmulOp::kQuantBatchMatmulV3;
  p.m = m;
  p.n = n;
  p.k = k;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  p.batch.a = std::move(batch_a);
  p.batch.b = std::move(batch_b);
  // A scale of `dims` behind the operand's batch dims.
  auto shaped = [](const std::vector<int64_t>& batch, std::vector<int64_t> dims) {
    std::vector<int64_t> shape = batch;
    shape.insert(shape.end(), dims.begin(), dims.end());
    return shape;
  };
  const int64_t mx_k = CeilDiv(k, 64), mg = CeilDiv(m, 128), ng = CeilDiv(n, 128);
  const int64_t kg = CeilDiv(k, 128);
  switch (family) {
    case Family::kPerTensorInt8:
      p.dtype_a = p.dtype_b = DataType::kInt8;
      p.dtype_c = DataType::kFloat16;
      SetScale(p, DataType::kUint64, {n});
      break;
    case Family::kPerTokenInt8:
      p.dtype_a = p.dtype_b = DataType::kInt8;
      p.dtype_c = DataType::kBFloat16;
      SetScale(p, DataType::kFloat32, {n});
      SetPertoken(p, DataType::kFloat32, {m});
      break;
    case Family::kMxFp8:
    case Family::kMxFp4:
      p.dtype_a = p.dtype_b =
          family == Family::kMxFp8 ? DataType::kFloat8E4M3 : DataType::kFloat4E2M1;
      p.dtype_c = DataType::kBFloat16;
      SetScale(p, DataType::kFloat8E8M0,
               shaped(p.batch.b, trans_b ? std::vector<int64_t>{n, mx_k, 2}
                                         : std::vector<int64_t>{mx_k, n, 2}));
      SetPertoken(p, DataType::kFloat8E8M0,
                  shaped(p.batch.a, trans_a ? std::vector<int64_t>{mx_k, m, 2}
                                            : std::vector<int64_t>{m, mx_k, 2}));
      break;
    case Family::kPerBlockFp8:
    case Family::kPerTileFp8: {
      const bool tile = family == Family::kPerTileFp8;
      p.dtype_a = p.dtype_b = DataType::kFloat8E4M3;
      p.dtype_c = DataType::kBFloat16;
      SetGroups(p, tile ? 1 : 128, 128, 128);
      const int64_t rows = tile ? m : mg;
      SetScale(
          p, DataType::kFloat32,
          shaped(p.batch.b, trans_b ? std::vector<int64_t>{ng, kg} : std::vector<int64_t>{kg, ng}));
      SetPertoken(p, DataType::kFloat32,
                  shaped(p.batch.a, trans_a ? std::vector<int64_t>{kg, rows}
                                            : std::vector<int64_t>{rows, kg}));
      break;
    }
  }
  return p;
}

TEST(QuantScheduleTest, EveryPlanOfASweepCoversCOnce) {
  // Shapes x transposes x weight formats x batches (none, on both, on A
  // only) x Tensor API, for every quant family; the problems CANN refuses
  // are skipped. Every plan's schedule covers C once in the rounds its
  // struct implies, and the sweep reaches all seven strategies.
  const ChipSpec chip = Chip950();
  const StrategyRegistry registry = MakeBuiltinRegistry();
  std::set<std::string> strategies;
  int plans = 0;
  for (Family family : {Family::kPerTensorInt8, Family::kPerTokenInt8, Family::kMxFp8,
                        Family::kMxFp4, Family::kPerBlockFp8, Family::kPerTileFp8}) {
    for (int64_t m : {7, 403, 2049}) {
      for (int64_t n : {100, 256, 2048}) {
        for (int64_t k : {320, 8192}) {
          for (int transposes = 0; transposes < 4; ++transposes) {
            for (Format format_b : {Format::kNd, Format::kFractalNz}) {
              for (int batches = 0; batches < 3; ++batches) {
                for (bool tensor_api : {true, false}) {
                  const std::vector<int64_t> batch_a =
                      batches == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{3};
                  const std::vector<int64_t> batch_b =
                      batches == 1 ? batch_a : std::vector<int64_t>{};
                  MatmulProblem p = SweepProblem(family, m, n, k, transposes & 1, transposes & 2,
                                                 batch_a, batch_b);
                  p.format_b = format_b;
                  p.quant.tensor_api = tensor_api;
                  absl::StatusOr<TilingDecision> decision = registry.Decide(p, chip);
                  if (!decision.ok()) continue;
                  const TilingPlan& plan = decision->plan;
                  SCOPED_TRACE(::testing::Message()
                               << plan.strategy << " m=" << m << " n=" << n << " k=" << k
                               << " transposes=" << transposes
                               << " nz=" << (format_b == Format::kFractalNz)
                               << " batches=" << batches << " tensor_api=" << tensor_api);
                  ++plans;
                  strategies.insert(plan.strategy);
                  absl::StatusOr<Schedule> s = ExpandSchedule(plan, p, chip);
                  ASSERT_THAT(s.status(), IsOk());
                  ASSERT_THAT(CheckScheduleCoverage(*s, p), IsOk());
                  if (plan.data.kernel == KernelId::kQuantStreamK) continue;
                  const StructC c = StructCOf(plan);
                  const auto [base_m, base_n] = StructBase(plan);
                  const uint64_t tiles = CeilDiv(c.m, base_m) * CeilDiv(c.n, base_n);
                  const uint64_t rounds =
                      plan.data.kernel == KernelId::kQuantHighLevel
                          ? c.batch * CeilDiv(tiles, Word(plan, "matmulTiling.usedCoreNum"))
                          : CeilDiv(c.batch * tiles, plan.block_dim);
                  EXPECT_EQ(s->rounds, rounds);
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(plans, 1000);
  EXPECT_EQ(strategies, (std::set<std::string>{
                            "MX_STREAMK", "MX_BASIC_API_ASW", "CUBE_BASIC_API_ASW", "CUBE_ASW",
                            "MIX_BASIC_API_ASW", "MIX_ASW", "PERBLOCK_BASIC_API_ASW"}));
}

TEST(QuantScheduleTest, MxStreamKSlicesKBySingleCoreKAndReducesOnAiv) {
  // L242: one tile, singleCoreK 256 of K 8192: 32 slices, one per core.
  MatmulProblem p = StrategyCases()[0].make();
  const ChipSpec chip = Chip950();
  absl::StatusOr<TilingDecision> decision = MakeBuiltinRegistry().Decide(p, chip);
  ASSERT_THAT(decision.status(), IsOk());
  const TilingPlan& plan = decision->plan;
  ASSERT_EQ(Word(plan, "streamKTiling.singleCoreK"), 256u);
  absl::StatusOr<Schedule> s = ExpandSchedule(plan, p, chip);
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_EQ(s->k_l1, Word(plan, "streamKTiling.kL1"));
  EXPECT_EQ(s->workspace_slots, 32u);
  ASSERT_EQ(s->reductions.size(), 1u);
  EXPECT_EQ(s->reductions[0].slots.size(), 32u);
  EXPECT_EQ(s->reductions[0].workspace_row_stride, 256u);  // never padded
  for (uint32_t core = 0; core < 32; ++core) {
    const std::vector<WorkUnit> units = UnitsOf(*s, core);
    ASSERT_EQ(units.size(), 1u);
    EXPECT_TRUE(units[0].writes_partial);
    EXPECT_EQ(units[0].k.size(), 256u);
  }
  EXPECT_EQ(s->aiv_cores, 64u);
}

TEST(QuantScheduleTest, UnfoldedBatchesKeepTheKernelsTilesInsideBatchShapesRows) {
  // L368: CANN keeps 17 batches of 81 rows; BatchShape folds them into one
  // of 1377 rows. One 81 x 109 tile per core, 17 cores.
  MatmulProblem p = Quant(81, 109, 690, DataType::kFloat8E4M3, DataType::kBFloat16);
  p.batch.a = {17};
  SetScale(p, DataType::kFloat32, {6, 1});
  SetPertoken(p, DataType::kFloat32, {17, 1, 6});
  SetGroups(p, 128, 128, 128);
  const ChipSpec chip = Chip950();
  absl::StatusOr<TilingDecision> decision = MakeBuiltinRegistry().Decide(p, chip);
  ASSERT_THAT(decision.status(), IsOk());
  EXPECT_EQ(Word(decision->plan, "params.batchC"), 17u);
  absl::StatusOr<Schedule> s = ExpandSchedule(decision->plan, p, chip);
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_EQ(s->batch, 1u);
  EXPECT_EQ(s->batch_rows, 17u * 81u);
  ASSERT_EQ(s->units.size(), 17u);
  for (uint32_t core = 0; core < 17; ++core) {
    const std::vector<WorkUnit> units = UnitsOf(*s, core);
    ASSERT_EQ(units.size(), 1u);
    EXPECT_EQ(units[0].m, (Range{81u * core, 81u * (core + 1)}));
    EXPECT_EQ(units[0].n, (Range{0, 109}));
    EXPECT_EQ(units[0].batch, 0u);
  }
}

TEST(QuantScheduleTest, HighLevelKernelsReplayEachBatchFromCoreZero) {
  // cube_asw_batch: 4 batches of 128 x 1024; each batch's walk restarts at
  // core 0 with its tile (0, 0), ceil(T / usedCoreNum) rounds later.
  MatmulProblem p = Quant(128, 1024, 512, DataType::kFloat8E4M3, DataType::kBFloat16);
  p.trans_b = true;
  p.batch.a = p.batch.b = {4};
  p.format_b = Format::kFractalNz;
  SetScale(p, DataType::kUint64, {1});
  SetBias(p, DataType::kFloat32);
  p.quant.tensor_api = false;
  const ChipSpec chip = Chip950();
  absl::StatusOr<TilingDecision> decision = MakeBuiltinRegistry().Decide(p, chip);
  ASSERT_THAT(decision.status(), IsOk());
  const TilingPlan& plan = decision->plan;
  ASSERT_EQ(plan.strategy, "CUBE_ASW");
  absl::StatusOr<Schedule> s = ExpandSchedule(plan, p, chip);
  ASSERT_THAT(s.status(), IsOk());
  const uint64_t base_m = Word(plan, "matmulTiling.baseM"),
                 base_n = Word(plan, "matmulTiling.baseN");
  const uint64_t tiles = CeilDiv(128, base_m) * CeilDiv(1024, base_n);
  const uint64_t rounds = CeilDiv(tiles, Word(plan, "matmulTiling.usedCoreNum"));
  EXPECT_EQ(s->rounds, 4 * rounds);
  const std::vector<WorkUnit> core0 = UnitsOf(*s, 0);
  ASSERT_EQ(core0.size(), 4 * rounds);
  for (uint32_t b = 0; b < 4; ++b) {
    const WorkUnit& first = core0[b * rounds];
    EXPECT_EQ(first.round, b * rounds);
    EXPECT_EQ(first.batch, b);
    EXPECT_EQ(first.m.begin, 128u * b);
    EXPECT_EQ(first.n.begin, 0u);
  }
}

// ---------------------------------------------------------------------------
// Hand-built structs.

// A plan of QuantBatchMatmulV3's `kernel` struct with every member 0 but
// `fields`; `block_dim` cores launched.
TilingPlan HandPlan(KernelId kernel, uint32_t block_dim,
                    const std::vector<std::pair<std::string_view, uint64_t>>& fields) {
  TilingPlan plan;
  plan.key.layout = KeyLayout::kQuant;
  plan.key.api_level = ApiLevel::kTensor;
  plan.block_dim = block_dim;
  plan.kernel_type = KernelType::kAicOnly;
  const std::vector<uint32_t> zeros(StructWords(TilingStructOf(kernel)), 0);
  plan.data = *TilingDataFromWords(kernel, zeros);
  for (const auto& [name, value] : fields) {
    bool found = false;
    for (TilingField& field : plan.data.fields) {
      if (field.name == name) {
        field.value = value;
        found = true;
      }
    }
    EXPECT_TRUE(found) << name;
  }
  return plan;
}

// The 38-word struct of one grid: base 128 x 128, K 64, `batch` batches,
// the tail split `m_tail_tile` x `n_tail_tile`.
TilingPlan BasicPlan(uint64_t m, uint64_t n, uint64_t batch, uint32_t block_dim,
                     uint64_t m_tail_tile, uint64_t n_tail_tile) {
  return HandPlan(KernelId::kQuantBasic, block_dim,
                  {{"params.batchC", batch},
                   {"matmulTiling.m", m},
                   {"matmulTiling.n", n},
                   {"matmulTiling.k", 64},
                   {"matmulTiling.baseM", 128},
                   {"matmulTiling.baseN", 128},
                   {"matmulTiling.baseK", 64},
                   {"matmulTiling.kAL1", 64},
                   {"matmulTiling.kBL1", 64},
                   {"adaptiveSlidingWin.mTailTile", m_tail_tile},
                   {"adaptiveSlidingWin.nTailTile", n_tail_tile},
                   {"adaptiveSlidingWin.mBaseTailSplitCnt", 1},
                   {"adaptiveSlidingWin.nBaseTailSplitCnt", 1}});
}

MatmulProblem Int8Problem(int64_t m, int64_t n, int64_t batch) {
  MatmulProblem p = Quant(m, n, 64, DataType::kInt8, DataType::kFloat16);
  if (batch > 1) p.batch.a = p.batch.b = {batch};
  return p;
}

// (m.begin, n.begin) of each unit of `core`, in round order.
std::vector<std::pair<uint64_t, uint64_t>> Origins(const Schedule& s, uint32_t core) {
  std::vector<std::pair<uint64_t, uint64_t>> origins;
  for (const WorkUnit& u : UnitsOf(s, core)) origins.emplace_back(u.m.begin, u.n.begin);
  return origins;
}

TEST(QuantScheduleTest, TilesWalkWindowsOfFourRowsSerpentine) {
  // 8 x 2 tiles of 128 on 4 cores: tile t = core + 4 * round. Window 0
  // (rows 0-3) walks column 0 then 1; window 1 (rows 4-7) walks backwards,
  // column 1 then 0.
  const MatmulProblem p = Int8Problem(1024, 256, 1);
  absl::StatusOr<Schedule> s = ExpandSchedule(BasicPlan(1024, 256, 1, 4, 1, 1), p, Chip950());
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*s, p), IsOk());
  EXPECT_EQ(s->rounds, 4u);
  using O = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(Origins(*s, 0), (O{{0, 0}, {0, 128}, {512, 128}, {512, 0}}));
  EXPECT_EQ(Origins(*s, 1), (O{{128, 0}, {128, 128}, {640, 128}, {640, 0}}));
  EXPECT_EQ(Origins(*s, 3), (O{{384, 0}, {384, 128}, {896, 128}, {896, 0}}));
}

TEST(QuantScheduleTest, PartialLastRoundIsCutIntoPiecesOfItsTiles) {
  // 3 x 3 tiles (the last row 100, the last column 44) on 4 cores: rounds
  // of 4, 4 and 1. The last tile, serpentine(8) = (2, 2), splits 2 x 2:
  // core c takes M piece c % 2 (50 rows) and N piece c / 2 (22 columns).
  const MatmulProblem p = Int8Problem(356, 300, 1);
  absl::StatusOr<Schedule> s = ExpandSchedule(BasicPlan(356, 300, 1, 4, 2, 2), p, Chip950());
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*s, p), IsOk());
  EXPECT_EQ(s->rounds, 3u);
  const Range rows[] = {{256, 306}, {306, 356}, {256, 306}, {306, 356}};
  const Range cols[] = {{256, 278}, {256, 278}, {278, 300}, {278, 300}};
  for (uint32_t core = 0; core < 4; ++core) {
    const std::vector<WorkUnit> units = UnitsOf(*s, core);
    ASSERT_EQ(units.size(), 3u) << core;
    EXPECT_EQ(units[2].round, 2u);
    EXPECT_EQ(units[2].tile_idx, 8);
    EXPECT_EQ(units[2].m, rows[core]) << core;
    EXPECT_EQ(units[2].n, cols[core]) << core;
  }
}

TEST(QuantScheduleTest, PiecesPastTheirTileAreSkipped) {
  // The last tile has 3 rows; mTailTile 4 cuts them into pieces of 1: core
  // 3's piece starts at row 3 and is skipped (the count is not re-derived).
  const MatmulProblem p = Int8Problem(259, 296, 1);
  absl::StatusOr<Schedule> s = ExpandSchedule(BasicPlan(259, 296, 1, 4, 4, 1), p, Chip950());
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*s, p), IsOk());
  for (uint32_t core = 0; core < 3; ++core) {
    const std::vector<WorkUnit> units = UnitsOf(*s, core);
    ASSERT_EQ(units.size(), 3u);
    EXPECT_EQ(units[2].m, (Range{256 + core, 257 + core}));
    EXPECT_EQ(units[2].n, (Range{256, 296}));
  }
  EXPECT_EQ(UnitsOf(*s, 3).size(), 2u);
}

TEST(QuantScheduleTest, NoReSplitWhenThePiecesExceedTheCores) {
  // 1 tile in the last round x 5 pieces > 4 cores: the kernel runs the tile
  // whole; rounds = ceil(9 tiles / 4 cores).
  const MatmulProblem p = Int8Problem(356, 300, 1);
  absl::StatusOr<Schedule> s = ExpandSchedule(BasicPlan(356, 300, 1, 4, 5, 1), p, Chip950());
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*s, p), IsOk());
  EXPECT_EQ(s->rounds, CeilDiv(9, 4));
  ASSERT_EQ(UnitsOf(*s, 0).size(), 3u);
  EXPECT_EQ(UnitsOf(*s, 0)[2].m, (Range{256, 356}));
  EXPECT_EQ(UnitsOf(*s, 0)[2].n, (Range{256, 300}));
  EXPECT_EQ(UnitsOf(*s, 1).size(), 2u);
  EXPECT_EQ(s->units.size(), 9u);
}

TEST(QuantScheduleTest, ALastRoundAcrossBatchesIsSplitAcrossThem) {
  // 7 batches of 2 x 1 tiles on 11 cores: flat tiles 0-10, then 11-13 (the
  // second tile of batch 5, both of batch 6). Split in M halves: cores
  // 0-5 take their 64-row pieces, cores 6-10 idle.
  const MatmulProblem p = Int8Problem(256, 128, 7);
  absl::StatusOr<Schedule> s = ExpandSchedule(BasicPlan(256, 128, 7, 11, 2, 1), p, Chip950());
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*s, p), IsOk());
  EXPECT_EQ(s->batch, 7u);
  EXPECT_EQ(s->rounds, 2u);
  struct Expected {
    uint64_t tile, batch, row;
  };
  const Expected expected[] = {{11, 5, 5 * 256 + 128}, {11, 5, 5 * 256 + 192},
                               {12, 6, 6 * 256},       {12, 6, 6 * 256 + 64},
                               {13, 6, 6 * 256 + 128}, {13, 6, 6 * 256 + 192}};
  for (uint32_t core = 0; core < 11; ++core) {
    const std::vector<WorkUnit> units = UnitsOf(*s, core);
    if (core >= 6) {
      EXPECT_EQ(units.size(), 1u) << core;
      continue;
    }
    ASSERT_EQ(units.size(), 2u) << core;
    EXPECT_EQ(units[1].tile_idx, static_cast<int64_t>(expected[core].tile)) << core;
    EXPECT_EQ(units[1].batch, expected[core].batch) << core;
    EXPECT_EQ(units[1].m, (Range{expected[core].row, expected[core].row + 64})) << core;
    EXPECT_EQ(units[1].n, (Range{0, 128})) << core;
  }
}

TEST(QuantScheduleTest, MergedTailsFollowTheTransposes) {
  // M 300 in 128-row blocks, the last two merged (mBaseTailSplitCnt 2,
  // mTailMain 96): the 172 rows after the first block become 96 + 76 when
  // A is not transposed; with A transposed the kernel ignores the merge and
  // the blocks are 128, 128 and 44.
  TilingPlan plan = BasicPlan(300, 128, 1, 4, 1, 1);
  for (TilingField& field : plan.data.fields) {
    if (field.name == "adaptiveSlidingWin.mBaseTailSplitCnt") field.value = 2;
    if (field.name == "adaptiveSlidingWin.mTailMain") field.value = 96;
  }
  const MatmulProblem p = Int8Problem(300, 128, 1);
  absl::StatusOr<Schedule> merged = ExpandSchedule(plan, p, Chip950());
  ASSERT_THAT(merged.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*merged, p), IsOk());
  EXPECT_EQ(UnitsOf(*merged, 1)[0].m, (Range{128, 224}));
  EXPECT_EQ(UnitsOf(*merged, 2)[0].m, (Range{224, 300}));

  plan.key.trans_a = true;
  MatmulProblem pt = p;
  pt.trans_a = true;
  absl::StatusOr<Schedule> plain = ExpandSchedule(plan, pt, Chip950());
  ASSERT_THAT(plain.status(), IsOk());
  EXPECT_EQ(UnitsOf(*plain, 1)[0].m, (Range{128, 256}));
  EXPECT_EQ(UnitsOf(*plain, 2)[0].m, (Range{256, 300}));
}

TEST(QuantScheduleTest, PiecesAreRoundedAsTheKernelsRoundThem) {
  // One 45 x 40 tile on 4 cores, split 2 x 2: plain pieces are 23 and 20.
  auto piece_sides = [](TilingPlan plan, MatmulProblem p) {
    absl::StatusOr<Schedule> s = ExpandSchedule(plan, p, Chip950());
    EXPECT_THAT(s.status(), IsOk());
    EXPECT_THAT(CheckScheduleCoverage(*s, p), IsOk());
    const std::vector<WorkUnit> units = UnitsOf(*s, 0);
    return units.empty() ? std::pair<uint64_t, uint64_t>{0, 0}
                         : std::pair<uint64_t, uint64_t>{units[0].m.size(), units[0].n.size()};
  };
  using Sides = std::pair<uint64_t, uint64_t>;
  const MatmulProblem int8 = Int8Problem(45, 40, 1);
  EXPECT_EQ(piece_sides(BasicPlan(45, 40, 1, 4, 2, 2), int8), (Sides{23, 20}));

  // An NZ weight aligns N pieces to C0 (32 int8 columns) when B is not
  // transposed: one piece of 32 and one of 8.
  MatmulProblem nz = int8;
  nz.format_b = Format::kFractalNz;
  EXPECT_EQ(piece_sides(BasicPlan(45, 40, 1, 4, 2, 2), nz), (Sides{23, 32}));

  // fp4 on the cmct MX scheduler (no Tensor API): both sides even.
  TilingPlan mx = BasicPlan(45, 40, 1, 4, 2, 2);
  mx.key.api_level = ApiLevel::kBasic;
  for (TilingField& field : mx.data.fields) {
    if (field.name == "params.x1QuantMode") field.value = 8;  // MX
  }
  MatmulProblem fp4 = Quant(45, 40, 64, DataType::kFloat4E2M1, DataType::kBFloat16);
  EXPECT_EQ(piece_sides(mx, fp4), (Sides{24, 20}));
  // The tensor-API copy rounds N only (B not transposed), M only when A is.
  mx.key.api_level = ApiLevel::kTensor;
  EXPECT_EQ(piece_sides(mx, fp4), (Sides{23, 20}));

  // Per-block (cmct): A per block, not transposed: a power of two (32);
  // B per block, not transposed: 128.
  TilingPlan per_block = BasicPlan(45, 40, 1, 4, 2, 2);
  per_block.key.api_level = ApiLevel::kBasic;
  per_block.key.quant_kernel = 4;
  for (TilingField& field : per_block.data.fields) {
    if (field.name == "params.groupSizeM") field.value = 128;
  }
  EXPECT_EQ(piece_sides(per_block, int8), (Sides{32, 40}));
}

TEST(QuantScheduleTest, AFullLoadKeepsEachCoreOnOneRow) {
  // A-full-load kernel (KERNELTYPE 1), 2 x 6 tiles on 4 cores: core c stays
  // on M row c % 2 and moves along N two columns a round.
  TilingPlan plan = BasicPlan(256, 768, 1, 4, 1, 1);
  plan.key.quant_kernel = 1;
  const MatmulProblem p = Int8Problem(256, 768, 1);
  absl::StatusOr<Schedule> s = ExpandSchedule(plan, p, Chip950());
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*s, p), IsOk());
  using O = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(Origins(*s, 0), (O{{0, 0}, {0, 256}, {0, 512}}));
  EXPECT_EQ(Origins(*s, 3), (O{{128, 128}, {128, 384}, {128, 640}}));
}

// The 96-word struct of one grid: base 128 x 128, `batch` batches.
TilingPlan HighLevelPlan(uint64_t m, uint64_t n, uint64_t batch, uint32_t used,
                         uint64_t m_tail_tile, uint64_t n_tail_tile) {
  return HandPlan(KernelId::kQuantHighLevel, used,
                  {{"params.batchC", batch},
                   {"matmulTiling.usedCoreNum", used},
                   {"matmulTiling.M", m},
                   {"matmulTiling.N", n},
                   {"matmulTiling.Ka", 64},
                   {"matmulTiling.baseM", 128},
                   {"matmulTiling.baseN", 128},
                   {"matmulTiling.baseK", 64},
                   {"matmulTiling.stepKa", 2},
                   {"adaptiveSlidingWin.mTailTile", m_tail_tile},
                   {"adaptiveSlidingWin.nTailTile", n_tail_tile},
                   {"adaptiveSlidingWin.mBaseTailSplitCnt", 1},
                   {"adaptiveSlidingWin.nBaseTailSplitCnt", 1}});
}

TEST(QuantScheduleTest, HighLevelSplitsEveryBatchsLastRoundFromCoreZero) {
  // 2 batches of 3 x 1 tiles on 6 cores, split 2 x 1: per batch one round,
  // core c takes tile c / 2 and M half c % 2; batch 1 starts again at core 0.
  const MatmulProblem p = Int8Problem(384, 128, 2);
  absl::StatusOr<Schedule> s = ExpandSchedule(HighLevelPlan(384, 128, 2, 6, 2, 1), p, Chip950());
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_THAT(CheckScheduleCoverage(*s, p), IsOk());
  EXPECT_EQ(s->rounds, 2u);
  EXPECT_EQ(s->k_l1, 128u);  // stepKa * baseK
  for (uint32_t core = 0; core < 6; ++core) {
    const std::vector<WorkUnit> units = UnitsOf(*s, core);
    ASSERT_EQ(units.size(), 2u);
    for (uint32_t b = 0; b < 2; ++b) {
      const uint64_t row = 384 * b + 128 * (core / 2) + 64 * (core % 2);
      EXPECT_EQ(units[b].round, b);
      EXPECT_EQ(units[b].m, (Range{row, row + 64})) << core << " " << b;
    }
  }
}

TEST(QuantScheduleTest, StructsThatDoNotDescribeTheProblemAreRefused) {
  const MatmulProblem p = Int8Problem(356, 300, 1);
  EXPECT_THAT(ExpandSchedule(BasicPlan(356, 301, 1, 4, 1, 1), p, Chip950()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not the problem's")));
  EXPECT_THAT(ExpandSchedule(BasicPlan(356, 300, 1, 4, 0, 1), p, Chip950()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("mTailTile")));
  TilingPlan stream_k = HandPlan(KernelId::kQuantStreamK, 32,
                                 {{"params.batchC", 2},
                                  {"matmulTiling.m", 178},
                                  {"matmulTiling.n", 300},
                                  {"matmulTiling.k", 64}});
  const MatmulProblem batched = Int8Problem(178, 300, 2);
  EXPECT_THAT(ExpandSchedule(stream_k, batched, Chip950()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("one batch")));
}

}  // namespace
}  // namespace npu::tiling
