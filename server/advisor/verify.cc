#include "server/advisor/verify.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "emulator/accuracy.h"
#include "emulator/emulator.h"
#include "emulator/grouped_emulation.h"
#include "emulator/numerics.h"
#include "server/tiling/custom_plans.h"
#include "server/tiling/grouped/gmm_groups.h"
#include "server/tiling/int_math.h"
#include "server/tiling/quant/quant_parse.h"
#include "server/tiling/quant/quant_request.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"

namespace npu::advisor {
namespace {

using tiling::BasicField;
using tiling::CeilDiv;
using tiling::KernelModel;
using tiling::MatmulProblem;
using tiling::TilingData;
using tiling::TilingPlan;
using tiling::ToMulField;
using tiling::ToVectorField;

// Cores of a shrunken data-parallel plan: enough for several rounds and a
// re-split tail round on a handful of tiles.
constexpr uint32_t kShrunkAswtCores = 4;
// Cores of a shrunken Stream-K plan: one data-parallel round of two tiles
// (DP+SK) or none (SK), then one tile split in two K slices.
constexpr uint32_t kShrunkStreamKCores = 2;
// Vector plans: cores and the K kept (a vector unit takes the whole K, so
// K only lengthens each dot product).
constexpr uint32_t kShrunkVectorCores = 4;
constexpr uint64_t kShrunkVectorK = 4096;
// fp32 split-K chunk of the kernels (schedule.cc): the shrunken K keeps two.
constexpr uint64_t kSplitKChunk = 1024;
// Rows / columns kept by the K = 0 clear.
constexpr int64_t kShrunkClearEdge = 300;

uint64_t Macs(const MatmulProblem& p) {
  return static_cast<uint64_t>(p.m) * static_cast<uint64_t>(p.n) * static_cast<uint64_t>(p.k);
}

// The value of `field` in the plan's tiling data, or `fallback` when the
// plan carries no struct of that kind.
template <typename Field>
uint64_t FieldOr(const TilingPlan& plan, Field field, uint64_t fallback) {
  return tiling::Get(plan.data, field).value_or(fallback);
}

// The fields of a vector struct that echo the launch and the problem; the
// K = 0 struct has none of them.
template <typename Field>
void SetVectorDims(TilingData& data, uint64_t used_cores, uint64_t m, uint64_t n, uint64_t k) {
  tiling::Set(data, Field::kUsedCoreNum, used_cores);
  tiling::Set(data, Field::kM, m);
  tiling::Set(data, Field::kN, n);
  tiling::Set(data, Field::kK, k);
}

MatmulProblem NdCopy(const MatmulProblem& problem) {
  MatmulProblem nd = problem;
  nd.format_a = nd.format_b = nd.format_c = tiling::Format::kNd;
  nd.storage_shape_b.clear();
  nd.a_slice = tiling::SliceView{};
  return nd;
}

// `size` cut to `keep` full L1 blocks plus the tail blocks of CANN's tail
// merge (the last `tail_split` blocks), so the remainder is unchanged.
uint64_t ShrinkAxis(uint64_t size, uint64_t l1, uint64_t tail_split, uint64_t keep) {
  const uint64_t tiles = CeilDiv(size, l1);
  const uint64_t norm = tiles > tail_split ? tiles - tail_split : 0;
  return size - (norm - std::min(norm, keep)) * l1;
}

// K cut to `keep` whole units plus the remainder.
uint64_t ShrinkK(uint64_t k, uint64_t unit, uint64_t keep) {
  const uint64_t rest = k % unit;
  return k <= rest + keep * unit ? k : rest + keep * unit;
}

absl::StatusOr<ShrunkCase> ShrinkAswt(const TilingPlan& plan, const MatmulProblem& problem,
                                      uint64_t max_macs) {
  ShrunkCase out;
  out.plan = plan;
  out.problem = NdCopy(problem);
  const tiling::BlockTiling& b = plan.block;
  if (b.m_l1 == 0 || b.n_l1 == 0 || b.base_k == 0) {
    return absl::InvalidArgumentError("plan has an empty L1 block");
  }
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  const uint64_t m_split = FieldOr(plan, BasicField::kMBaseTailSplitCnt, 1);
  const uint64_t n_split = FieldOr(plan, BasicField::kNBaseTailSplitCnt, 1);
  // K keeps its remainder modulo the L1 stage and, for the fp32 in-core
  // split, two whole 1024-element chunks.
  const uint64_t k_l1 = std::max(b.k_l1, b.base_k);
  const bool split_k = plan.key.model == KernelModel::kBasicSplitK;
  const uint64_t k_unit = split_k ? std::lcm(k_l1, kSplitKChunk) : k_l1;
  const uint64_t k2 = ShrinkK(k, k_unit, split_k ? 2 : 1);
  uint64_t keep_m = 2, keep_n = 2;
  uint64_t m2 = 0, n2 = 0;
  while (true) {
    m2 = ShrinkAxis(m, b.m_l1, m_split, keep_m);
    n2 = ShrinkAxis(n, b.n_l1, n_split, keep_n);
    if (m2 * n2 * k2 <= max_macs) break;
    // At least one full block per axis stays, next to the tail blocks.
    if (keep_m > 1 && (m2 >= n2 || keep_n == 1)) {
      --keep_m;
    } else if (keep_n > 1) {
      --keep_n;
    } else {
      break;  // the structure's floor: one full block, the tails, one K unit
    }
  }
  const uint32_t cores = std::min(plan.block_dim, kShrunkAswtCores);
  // The tail re-split must fit the fewer cores: a round holds at most
  // `cores` pieces, and only a partial last round is re-split.
  const uint64_t tiles = CeilDiv(m2, b.m_l1) * CeilDiv(n2, b.n_l1);
  const uint64_t tail = tiles % cores;
  uint64_t mt = b.m_tail_cnt, nt = b.n_tail_cnt;
  if (tail == 0) mt = nt = 1;
  while (mt * nt * tail > cores) (mt >= nt ? mt : nt) -= 1;
  out.problem.m = static_cast<int64_t>(m2);
  out.problem.n = static_cast<int64_t>(n2);
  out.problem.k = static_cast<int64_t>(k2);
  out.plan.block_dim = cores;
  out.plan.block.m_tail_cnt = mt;
  out.plan.block.n_tail_cnt = nt;
  tiling::WriteBlockFields(out.plan.block, out.plan.data);
  tiling::Set(out.plan.data, BasicField::kUsedCoreNum, cores);
  tiling::Set(out.plan.data, BasicField::kM, m2);
  tiling::Set(out.plan.data, BasicField::kN, n2);
  tiling::Set(out.plan.data, BasicField::kK, k2);
  out.note = absl::StrCat("same blocks on ", cores, " cores, ", CeilDiv(m2, b.m_l1), "x",
                          CeilDiv(n2, b.n_l1), " L1 tiles (tails kept), K ", k, "->", k2);
  return out;
}

absl::StatusOr<ShrunkCase> ShrinkStreamK(const TilingPlan& plan, const MatmulProblem& problem) {
  ShrunkCase out;
  out.plan = plan;
  out.problem = NdCopy(problem);
  const tiling::BlockTiling& b = plan.block;
  const uint64_t used = FieldOr(plan, BasicField::kUsedCoreNum, plan.block_dim);
  if (b.base_m == 0 || b.base_n == 0 || b.single_core_k == 0 || used == 0) {
    return absl::InvalidArgumentError("Stream-K plan has an empty block or K slice");
  }
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  const uint64_t mt = CeilDiv(m, b.base_m), nt = CeilDiv(n, b.base_n);
  // The last tile of an axis keeps the remainder.
  auto keep_tiles = [](uint64_t size, uint64_t base, uint64_t tiles, uint64_t keep) {
    return size - (tiles - keep) * base;
  };
  uint64_t m2 = keep_tiles(m, b.base_m, mt, 1), n2 = keep_tiles(n, b.base_n, nt, 1);
  const bool data_parallel_rounds = mt * nt >= used;
  if (data_parallel_rounds) {
    // One data-parallel round of kShrunkStreamKCores tiles plus a one-tile
    // tail round split along K.
    const uint64_t want = kShrunkStreamKCores + 1;
    if (mt >= want) {
      m2 = keep_tiles(m, b.base_m, mt, want);
    } else if (nt >= want) {
      n2 = keep_tiles(n, b.base_n, nt, want);
    } else {
      return absl::UnimplementedError("Stream-K tile grid too small to shrink");
    }
  }
  // Two K slices; SK_SPLIT_K slices stay above one 1024-element chunk so the
  // in-core split still runs.
  const uint64_t k_l1 = std::max(b.k_l1, b.base_k);
  const uint64_t sk = b.single_core_k;
  const uint64_t sk2 = plan.key.model == KernelModel::kStreamKSplitK && sk > kSplitKChunk
                           ? kSplitKChunk + k_l1
                           : std::min(sk, k_l1);
  const uint64_t k_tiles = std::max<uint64_t>(1, CeilDiv(k, sk));
  const uint64_t last = k - (k_tiles - 1) * sk;
  const uint64_t k2 = sk2 + std::min(last, sk2);
  out.problem.m = static_cast<int64_t>(m2);
  out.problem.n = static_cast<int64_t>(n2);
  out.problem.k = static_cast<int64_t>(k2);
  out.plan.block_dim = kShrunkStreamKCores;
  out.plan.block.single_core_k = sk2;
  tiling::WriteBlockFields(out.plan.block, out.plan.data);
  tiling::Set(out.plan.data, BasicField::kUsedCoreNum, kShrunkStreamKCores);
  tiling::Set(out.plan.data, BasicField::kM, m2);
  tiling::Set(out.plan.data, BasicField::kN, n2);
  tiling::Set(out.plan.data, BasicField::kK, k2);
  out.note = absl::StrCat("same blocks on ", kShrunkStreamKCores, " cores, ",
                          CeilDiv(m2, b.base_m) * CeilDiv(n2, b.base_n), " tiles (",
                          data_parallel_rounds ? "one data-parallel round + " : "",
                          "a tail tile in 2 K slices of ", sk2, "), K ", k, "->", k2);
  return out;
}

absl::StatusOr<ShrunkCase> ShrinkVector(const TilingPlan& plan, const MatmulProblem& problem) {
  ShrunkCase out;
  out.plan = plan;
  out.problem = NdCopy(problem);
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  const uint64_t k2 = std::min(k, kShrunkVectorK);
  const uint64_t used = plan.key.model == KernelModel::kToMul
                            ? FieldOr(plan, ToMulField::kUsedCoreNum, plan.block_dim)
                            : FieldOr(plan, ToVectorField::kUsedCoreNum, plan.block_dim);
  const uint32_t cores = static_cast<uint32_t>(std::min<uint64_t>(used, kShrunkVectorCores));
  uint64_t m2 = m, n2 = n;
  switch (plan.key.model) {
    case KernelModel::kToMul: {
      const uint64_t base_mn = FieldOr(plan, ToMulField::kBaseMN, 0);
      if (base_mn == 0 || (m != 1 && n != 1)) {
        return absl::UnimplementedError("TO_MUL shrink needs baseMN and M == 1 or N == 1");
      }
      // Two rounds for the first core, and the remainder tile.
      const uint64_t outputs = m * n;
      const uint64_t outputs2 = std::min(outputs, (cores + 1) * base_mn + outputs % base_mn);
      (m == 1 ? n2 : m2) = outputs2;
      const uint64_t base_k = std::max<uint64_t>(1, FieldOr(plan, ToMulField::kBaseK, k2));
      tiling::Set(out.plan.data, ToMulField::kTileNum, CeilDiv(outputs2, base_mn));
      tiling::Set(out.plan.data, ToMulField::kTailMN, outputs2 % base_mn);
      tiling::Set(out.plan.data, ToMulField::kLoopK, CeilDiv(k2, base_k));
      tiling::Set(out.plan.data, ToMulField::kTailK, k2 % base_k);
      break;
    }
    case KernelModel::kToMultiMul: {
      const uint64_t base_m = FieldOr(plan, ToVectorField::kBaseM, 0),
                     base_n = FieldOr(plan, ToVectorField::kBaseN, 0);
      if (base_m == 0 || base_n == 0)
        return absl::UnimplementedError("TO_MULTI_MUL without blocks");
      m2 = ShrinkAxis(m, base_m, 1, 2);
      n2 = ShrinkAxis(n, base_n, 1, 2);
      break;
    }
    case KernelModel::kKEqualZero:
      m2 = std::min<uint64_t>(m, kShrunkClearEdge);
      n2 = std::min<uint64_t>(n, kShrunkClearEdge);
      break;
    default:
      return absl::UnimplementedError("not a vector model");
  }
  out.problem.m = static_cast<int64_t>(m2);
  out.problem.n = static_cast<int64_t>(n2);
  out.problem.k = static_cast<int64_t>(plan.key.model == KernelModel::kKEqualZero ? 0 : k2);
  if (plan.key.model != KernelModel::kKEqualZero) out.plan.block_dim = cores;
  const uint64_t k_out = static_cast<uint64_t>(out.problem.k);
  SetVectorDims<ToMulField>(out.plan.data, cores, m2, n2, k_out);
  SetVectorDims<ToVectorField>(out.plan.data, cores, m2, n2, k_out);
  out.note = absl::StrCat("same vector tiles on ", out.plan.block_dim, " cores, M ", m, "->", m2,
                          ", N ", n, "->", n2, ", K ", k, "->", out.problem.k);
  return out;
}

// Sets member `name` of `data` when the struct has it.
void SetMember(TilingData& data, std::string_view name, uint64_t value) {
  for (tiling::TilingField& field : data.fields) {
    if (field.name == name) field.value = value;
  }
}

// The names of the members a QuantBatchMatmulV3 shrink rewrites, by struct.
struct QuantShrinkNames {
  std::string_view m, n, k, kb, used_cores;  // empty: the struct has none
  std::string_view m_tail_tile, n_tail_tile, m_split, n_split;
};
QuantShrinkNames QuantNamesOf(tiling::KernelId kernel) {
  switch (kernel) {
    case tiling::KernelId::kQuantWithoutBatch:
      return {"m",
              "n",
              "k",
              "",
              "",
              "mTailTile",
              "nTailTile",
              "mBaseTailSplitCnt",
              "nBaseTailSplitCnt"};
    case tiling::KernelId::kQuantHighLevel:
      return {"matmulTiling.M",
              "matmulTiling.N",
              "matmulTiling.Ka",
              "matmulTiling.Kb",
              "matmulTiling.usedCoreNum",
              "adaptiveSlidingWin.mTailTile",
              "adaptiveSlidingWin.nTailTile",
              "adaptiveSlidingWin.mBaseTailSplitCnt",
              "adaptiveSlidingWin.nBaseTailSplitCnt"};
    default:
      return {"matmulTiling.m",
              "matmulTiling.n",
              "matmulTiling.k",
              "",
              "",
              "adaptiveSlidingWin.mTailTile",
              "adaptiveSlidingWin.nTailTile",
              "adaptiveSlidingWin.mBaseTailSplitCnt",
              "adaptiveSlidingWin.nBaseTailSplitCnt"};
  }
}

// `problem` at m x n x k: the scales, offset and bias resized with it (MX
// and per-block scales by their group counts, a per-channel scale or
// offset and a bias by n, a per-token scale by m).
absl::StatusOr<MatmulProblem> ResizedQuant(const MatmulProblem& problem, uint64_t m, uint64_t n,
                                           uint64_t k) {
  ASSIGN_OR_RETURN(const tiling::quant::QuantFacts facts,
                   tiling::quant::ParseQuantRequest(tiling::quant::QuantRequestOf(problem)));
  MatmulProblem out = NdCopy(problem);
  out.m = static_cast<int64_t>(m);
  out.n = static_cast<int64_t>(n);
  out.k = static_cast<int64_t>(k);
  auto last_of = [](std::vector<int64_t>& shape, int64_t from, int64_t to) {
    if (!shape.empty() && shape.back() == from && from != 1) shape.back() = to;
  };
  const int64_t m2 = out.m, n2 = out.n;
  tiling::QuantInputs& q = out.quant;
  if (facts.is_mx) {
    constexpr uint64_t kMxPairK = 64;
    const int64_t pairs = static_cast<int64_t>(CeilDiv(k, kMxPairK));
    q.pertoken.shape =
        problem.trans_a ? std::vector<int64_t>{pairs, m2, 2} : std::vector<int64_t>{m2, pairs, 2};
    q.scale.shape =
        problem.trans_b ? std::vector<int64_t>{n2, pairs, 2} : std::vector<int64_t>{pairs, n2, 2};
  } else if (facts.is_per_block) {
    const int64_t mg = static_cast<int64_t>(CeilDiv(m, facts.group_size_m));
    const int64_t ng = static_cast<int64_t>(CeilDiv(n, facts.group_size_n));
    const int64_t kg = static_cast<int64_t>(CeilDiv(k, facts.group_size_k));
    q.pertoken.shape =
        problem.trans_a ? std::vector<int64_t>{kg, mg} : std::vector<int64_t>{mg, kg};
    q.scale.shape = problem.trans_b ? std::vector<int64_t>{ng, kg} : std::vector<int64_t>{kg, ng};
  } else {
    last_of(q.scale.shape, problem.n, n2);
    last_of(q.offset.shape, problem.n, n2);
    last_of(q.pertoken.shape, problem.m, m2);
  }
  last_of(q.bias_shape, problem.n, n2);
  return out;
}

// QuantBatchMatmulV3's sliding-window plans: the same base block, L1 loads,
// edge balancing and kernel on fewer tiles (the tail blocks kept) and fewer
// cores, K cut to whole base_k steps plus its remainder. The quant kernels'
// arithmetic is per output element over the whole K (quant_emulation.h), so
// the copy checks the schedule's cover of C and the path's dequantization.
// A-full-load plans keep their rows of tiles (each core stays on one).
// kUnimplemented for MX_STREAMK and batched problems.
absl::StatusOr<ShrunkCase> ShrinkQuant(const TilingPlan& plan, const MatmulProblem& problem,
                                       uint64_t max_macs) {
  if (!problem.batch.a.empty() || !problem.batch.b.empty()) {
    return absl::UnimplementedError(
        "a batched QuantBatchMatmulV3 problem is checked at full size only");
  }
  if (plan.data.kernel == tiling::KernelId::kQuantStreamK) {
    return absl::UnimplementedError(
        "the shrunken copy keeps sliding-window plans only, not MX_STREAMK's K slices");
  }
  ASSIGN_OR_RETURN(const tiling::quant::QuantBlockChoice block,
                   tiling::quant::QuantBlockOfPlan(plan));
  const QuantShrinkNames names = QuantNamesOf(plan.data.kernel);
  if (block.base_m == 0 || block.base_n == 0 || block.base_k == 0) {
    return absl::InvalidArgumentError("plan has an empty base block");
  }
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  const bool a_rows = tiling::quant::KeepsAInL1(plan);
  const uint64_t m_split = plan.data.Get(names.m_split).value_or(1);
  const uint64_t n_split = plan.data.Get(names.n_split).value_or(1);
  constexpr uint64_t kQuantKUnit = 256;  // whole MX pairs and per-block groups
  const uint64_t k2 = ShrinkK(k, std::lcm(block.base_k, kQuantKUnit), 1);
  uint64_t keep_m = 2, keep_n = 2;
  uint64_t m2 = 0, n2 = 0;
  while (true) {
    m2 = a_rows ? m : ShrinkAxis(m, block.base_m, m_split, keep_m);
    n2 = ShrinkAxis(n, block.base_n, n_split, keep_n);
    if (m2 * n2 * k2 <= max_macs) break;
    if (!a_rows && keep_m > 1 && (m2 >= n2 || keep_n == 1)) {
      --keep_m;
    } else if (keep_n > 1) {
      --keep_n;
    } else {
      break;
    }
  }
  const uint64_t m_tiles = CeilDiv(m2, block.base_m), n_tiles = CeilDiv(n2, block.base_n);
  // An A-full-load kernel deals each core a row of tiles by core % rows:
  // the cores stay a multiple of the rows.
  uint32_t cores = std::min(plan.block_dim, kShrunkAswtCores);
  if (a_rows) {
    cores = static_cast<uint32_t>(m_tiles * std::max<uint64_t>(1, kShrunkAswtCores / m_tiles));
  }
  const uint64_t tail = (m_tiles * n_tiles) % cores;
  uint64_t mt = plan.data.Get(names.m_tail_tile).value_or(1);
  uint64_t nt = plan.data.Get(names.n_tail_tile).value_or(1);
  if (tail == 0) mt = nt = 1;
  while (mt * nt * tail > cores) (mt >= nt ? mt : nt) -= 1;
  ShrunkCase out;
  ASSIGN_OR_RETURN(out.problem, ResizedQuant(problem, m2, n2, k2));
  out.plan = plan;
  out.plan.block_dim = cores;
  TilingData& data = out.plan.data;
  SetMember(data, names.m, m2);
  SetMember(data, names.n, n2);
  SetMember(data, names.k, k2);
  if (!names.kb.empty()) SetMember(data, names.kb, k2);
  if (!names.used_cores.empty()) SetMember(data, names.used_cores, cores);
  SetMember(data, names.m_tail_tile, mt);
  SetMember(data, names.n_tail_tile, nt);
  out.note = absl::StrCat("same ", block.base_m, "x", block.base_n, "x", block.base_k,
                          " blocks on ", cores, " cores, ", m_tiles, "x", n_tiles,
                          " tiles (tails kept), K ", k, "->", k2);
  return out;
}

// Experts a shrunken GroupedMatmul keeps, at most.
constexpr size_t kShrunkGroupedExperts = 4;

// GroupedMatmul's no-quant plans of split M with one x, weight and y: the
// same base block on a few experts (the one with most rows, one with a
// partial last block, the one with fewest rows, an empty one: the cases
// its kernel deals differently; at least two, so the plan stays the
// several-group one), each expert's rows cut to its last block (a partial
// one, or one whole), N to its last block and K to one base_k step plus
// its remainder, re-tiled with the block by CANN's rules
// (GroupedNoQuantPlanWithBlock) for four cores. The other paths and forms:
// kUnimplemented.
absl::StatusOr<ShrunkCase> ShrinkGrouped(const TilingPlan& plan, const MatmulProblem& problem,
                                         const tiling::ChipSpec& chip) {
  using tiling::GroupedTensor;
  if (plan.data.kernel != tiling::KernelId::kGroupedNoQuant) {
    return absl::UnimplementedError(
        "the shrunken copy keeps GroupedMatmul's no-quant plans only");
  }
  ASSIGN_OR_RETURN(const tiling::grouped::GmmGroups groups,
                   tiling::grouped::GroupsOf(problem.grouped));
  const tiling::GroupedTensorList& weight = problem.grouped[GroupedTensor::kWeight];
  if (groups.group_type != tiling::kGroupTypeSplitM || !groups.single_x || !groups.single_w ||
      !groups.single_y || groups.trans_x || weight.format != tiling::Format::kNd) {
    return absl::UnimplementedError(absl::StrCat(
        "the shrunken copy keeps GroupedMatmul's split M with one ND x, weight and y, not ",
        groups.FormName()));
  }
  const tiling::BlockTiling& b = plan.block;
  if (b.base_m == 0 || b.base_n == 0 || b.base_k == 0) {
    return absl::InvalidArgumentError("plan has an empty base block");
  }
  // The experts kept, in their order.
  std::vector<size_t> picks;
  // The first expert by `better` among those `eligible` takes, if new.
  const auto pick = [&](auto eligible, auto better) {
    std::optional<size_t> best;
    for (size_t g = 0; g < groups.groups.size(); ++g) {
      const uint64_t m = groups.groups[g].m;
      if (eligible(m) && (!best.has_value() || better(m, groups.groups[*best].m))) best = g;
    }
    if (best.has_value() && std::find(picks.begin(), picks.end(), *best) == picks.end()) {
      picks.push_back(*best);
    }
  };
  const auto more = [](uint64_t a, uint64_t best) { return a > best; };
  pick([](uint64_t) { return true; }, more);
  pick([&](uint64_t m) { return m % b.base_m != 0; }, more);
  pick([](uint64_t m) { return m > 0; }, [](uint64_t a, uint64_t best) { return a < best; });
  pick([](uint64_t m) { return m == 0; }, more);
  std::vector<int64_t> rows;
  for (size_t g : picks) {
    if (rows.size() == kShrunkGroupedExperts) break;
    const uint64_t m = groups.groups[g].m;
    rows.push_back(static_cast<int64_t>(ShrinkAxis(m, b.base_m, 1, 0)));
  }
  while (rows.size() < 2) rows.push_back(0);
  const uint64_t n = groups.max_n, k = groups.groups.empty() ? 0 : groups.groups[0].k;
  const int64_t n2 = static_cast<int64_t>(ShrinkAxis(n, b.base_n, 1, 0));
  const int64_t k2 = static_cast<int64_t>(ShrinkK(k, b.base_k, 1));
  int64_t m2 = 0;
  for (int64_t r : rows) m2 += r;
  const int64_t experts = static_cast<int64_t>(rows.size());
  ShrunkCase out;
  out.problem = problem;
  tiling::GroupedInputs& g = out.problem.grouped;
  const auto shape = [](std::vector<int64_t> dims) { return tiling::GroupedShape{dims, dims}; };
  g[GroupedTensor::kX].instances = {shape({m2, k2})};
  g[GroupedTensor::kWeight].instances = {
      shape(groups.trans_w ? std::vector<int64_t>{experts, n2, k2}
                           : std::vector<int64_t>{experts, k2, n2})};
  g[GroupedTensor::kY].instances = {shape({m2, n2})};
  g[GroupedTensor::kGroupList].instances = {shape({experts})};
  if (groups.has_bias) g[GroupedTensor::kBias].instances = {shape({experts, n2})};
  g.token_histogram = rows;
  out.chip = chip;
  out.chip.aic_num = std::min(chip.aic_num, kShrunkAswtCores);
  ASSIGN_OR_RETURN(out.plan, tiling::GroupedNoQuantPlanWithBlock(out.problem, out.chip, b.base_m,
                                                                 b.base_n));
  out.note = absl::StrCat("same ", b.base_m, "x", b.base_n, " blocks on ", out.plan.block_dim,
                          " cores, ", experts, " experts of ", absl::StrJoin(rows, "/"),
                          " rows, N ", n, "->", n2, ", K ", k, "->", k2);
  return out;
}

}  // namespace

absl::StatusOr<ShrunkCase> ShrinkForVerification(const TilingPlan& plan,
                                                 const MatmulProblem& problem,
                                                 const tiling::ChipSpec& chip, uint64_t max_macs) {
  // GroupedMatmul's copy is a few experts' last blocks, well within any
  // limit.
  if (problem.op == tiling::MatmulOp::kGroupedMatmul) return ShrinkGrouped(plan, problem, chip);
  absl::StatusOr<ShrunkCase> out;
  switch (plan.key.model) {
    case KernelModel::kBasic:
    case KernelModel::kSlice:
    case KernelModel::kBasicSplitK:
      out = ShrinkAswt(plan, problem, max_macs);
      break;
    case KernelModel::kStreamK:
    case KernelModel::kStreamKSplitK:
      out = ShrinkStreamK(plan, problem);
      break;
    case KernelModel::kKEqualZero:
    case KernelModel::kToMul:
    case KernelModel::kToMultiMul:
      out = ShrinkVector(plan, problem);
      break;
  }
  if (out.ok()) out->chip = chip;
  return out;
}

// How much larger than a MatMulV3 problem a batched one may be and still
// be checked as it is.
constexpr uint64_t kBatchVerifyFactor = 4;

absl::Status VerifyNumerics(const TilingPlan& plan, const MatmulProblem& problem,
                            const tiling::ChipSpec& chip, uint64_t seed, NumericsReport* report,
                            int threads) {
  ShrunkCase run{plan, NdCopy(problem), chip, "the problem as given"};
  const bool nd = problem.format_a == tiling::Format::kNd &&
                  problem.format_b == tiling::Format::kNd &&
                  problem.format_c == tiling::Format::kNd && !problem.a_slice.enabled;
  const uint64_t elements = static_cast<uint64_t>(problem.m) * problem.n +
                            static_cast<uint64_t>(problem.m) * problem.k +
                            static_cast<uint64_t>(problem.k) * problem.n;
  bool shrunk = false;
  if (problem.op == tiling::MatmulOp::kGroupedMatmul) {
    // GroupedMatmul is checked as it is (its experts over the problem's
    // histogram, spread evenly without one), within the batched limits.
    const emu::OperandShapes shapes = emu::ShapesOf(problem);
    uint64_t grouped_elements = 0;
    for (const auto* shape : {&shapes.a, &shapes.b, &shapes.c}) {
      uint64_t count = 1;
      for (int64_t dim : *shape) count *= static_cast<uint64_t>(dim);
      grouped_elements += count;
    }
    const uint64_t macs = emu::GroupedUsefulMacs(problem);
    if (macs > kBatchVerifyFactor * kDirectVerifyMacs ||
        grouped_elements > kBatchVerifyFactor * kDirectVerifyElements) {
      absl::StatusOr<ShrunkCase> small =
          ShrinkForVerification(plan, problem, chip, kDirectVerifyMacs);
      if (!small.ok()) {
        return absl::UnimplementedError(absl::StrCat(
            "a GroupedMatmul problem of ", macs, " MACs and ", grouped_elements,
            " operand elements is above the direct check's limits, and ",
            small.status().message()));
      }
      run = *std::move(small);
      shrunk = true;
    }
  } else if (problem.op == tiling::MatmulOp::kQuantBatchMatmulV3 && problem.batch.a.empty() &&
             problem.batch.b.empty() &&
             (Macs(problem) > kDirectVerifyMacs || elements > kDirectVerifyElements)) {
    ASSIGN_OR_RETURN(ShrunkCase quant, ShrinkQuant(plan, problem, kDirectVerifyMacs));
    run = std::move(quant);
    run.chip = chip;
    shrunk = true;
  } else if (problem.op != tiling::MatmulOp::kMatMulV3) {
    // The shrinking keeps MatMulV3 kernels' structure only: a batched
    // problem is checked as it is, within the direct limits times its
    // batches' worth of slack (kBatchVerifyFactor).
    const emu::OperandShapes shapes = emu::ShapesOf(problem);
    uint64_t batch_elements = 0;
    for (const auto* shape : {&shapes.a, &shapes.b, &shapes.c}) {
      uint64_t count = 1;
      for (int64_t dim : *shape) count *= static_cast<uint64_t>(dim);
      batch_elements += count;
    }
    const uint64_t batches =
        tiling::BatchProduct(shapes.c) / (static_cast<uint64_t>(problem.m) * problem.n);
    const uint64_t macs = Macs(problem) * batches;
    if (macs > kBatchVerifyFactor * kDirectVerifyMacs ||
        batch_elements > kBatchVerifyFactor * kDirectVerifyElements) {
      return absl::UnimplementedError(absl::StrCat(
          "a ", std::string(tiling::MatmulOpName(problem.op)), " problem of ", macs, " MACs and ",
          batch_elements, " operand elements is above the direct check's limits"));
    }
  } else if (Macs(problem) > kDirectVerifyMacs || elements > kDirectVerifyElements) {
    ASSIGN_OR_RETURN(run, ShrinkForVerification(plan, problem, chip, kDirectVerifyMacs));
    shrunk = true;
  }
  if (!nd) absl::StrAppend(&run.note, "; operands as ND (the emulator's layout)");
  emu::EmulatorOptions options;
  options.threads = std::max(1, threads);
  const emu::Tensors inputs = emu::RandomInputs(run.problem, seed);
  ASSIGN_OR_RETURN(emu::EmulationResult result,
                   emu::Emulate(run.plan, run.problem, run.chip, inputs, options));
  ASSIGN_OR_RETURN(emu::AccuracyReport accuracy,
                   emu::CompareWithReference(run.problem, inputs, result.c, options.threads,
                                             /*cancelled=*/nullptr));
  // GroupedMatmul reports its stacked C's sizes (every expert's rows, the
  // widest N and the deepest K).
  const MatmulProblem sizes = problem.op == tiling::MatmulOp::kGroupedMatmul
                                  ? emu::GroupedTimedProblem(run.problem)
                                  : run.problem;
  if (report != nullptr) {
    report->shrunk = shrunk;
    report->m = sizes.m;
    report->n = sizes.n;
    report->k = sizes.k;
    report->cores = run.plan.block_dim;
    report->worst_error_ratio = accuracy.worst_bound_ratio;
    report->note = run.note;
  }
  if (!accuracy.passed) {
    if (problem.op == tiling::MatmulOp::kGroupedMatmul) {
      const emu::GroupedElement worst = emu::GroupedElementOf(run.problem, accuracy.worst_index);
      return absl::InternalError(absl::StrCat(
          accuracy.elements_over_bound, " elements of y exceed the error bound; the worst, y[",
          worst.row, ", ", worst.col, "] of group ", worst.group, ", is ",
          accuracy.worst_bound_ratio, " times its bound ", accuracy.error_bound));
    }
    const uint64_t n = static_cast<uint64_t>(run.problem.n);
    return absl::InternalError(absl::StrCat(
        accuracy.elements_over_bound, " elements of C exceed the error bound; the worst, C[",
        accuracy.worst_index / n, ", ", accuracy.worst_index % n, "], is ",
        accuracy.worst_bound_ratio, " times its bound ", accuracy.error_bound, " (verified ",
        run.problem.m, "x", run.problem.n, "x", run.problem.k, ": ", run.note, ")"));
  }
  return absl::OkStatus();
}

}  // namespace npu::advisor
