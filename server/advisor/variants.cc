#include "server/advisor/variants.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "emulator/chip.h"
#include "emulator/emulator.h"
#include "emulator/grouped_emulation.h"
#include "emulator/work_estimate.h"
#include "server/tiling/custom_plans.h"
#include "server/tiling/grouped/gmm_groups.h"
#include "server/tiling/grouped/gmm_path.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/registry.h"
#include "server/tiling/schedule.h"
#include "server/tiling/strategy_id.h"
#include "server/tiling/tiling_data.h"

namespace npu::advisor {
namespace {

using tiling::CeilAlign;
using tiling::CeilDiv;
using tiling::FloorAlign;
using tiling::kBlock16;
using tiling::kBlock256;
using tiling::kDoubleBuffer;
using tiling::kFp32Bytes;
using tiling::L1Residency;
using tiling::MatmulProblem;
using tiling::TilingPlan;

// The problem's extents as unsigned counts and its element sizes.
struct Sizes {
  uint64_t m = 0, n = 0, k = 0;
  uint64_t a_bytes = 0, b_bytes = 0, c_bytes = 0;
};
Sizes SizesOf(const MatmulProblem& problem) {
  return {static_cast<uint64_t>(problem.m),       static_cast<uint64_t>(problem.n),
          static_cast<uint64_t>(problem.k),       tiling::DataTypeBytes(problem.dtype_a),
          tiling::DataTypeBytes(problem.dtype_b), tiling::DataTypeBytes(problem.dtype_c)};
}

constexpr uint64_t kKiB = 1024;
using tiling::kMaxStreamedKSteps;
using tiling::ResidentLimitBytes;

// A resident band: `steps` base blocks of edge `base`.
struct BandSize {
  uint64_t base = 0, steps = 0;
};

// Balanced bands of base blocks of at most 256 along an edge of `edge`
// rows (columns), each band at most `max_edge` long.
BandSize BalancedBand(uint64_t edge, uint64_t max_edge) {
  const uint64_t bands = CeilDiv(edge, max_edge);
  const uint64_t target = CeilAlign(CeilDiv(edge, bands), kBlock16);
  BandSize band;
  band.steps = CeilDiv(target, kBlock256);
  band.base = CeilAlign(CeilDiv(target, band.steps), kBlock16);
  while (band.base * band.steps > max_edge) band.base -= kBlock16;
  return band;
}

// The base_k slices (at most 4) of the streamed operand one L1 stage holds
// when two stages, of `slice_bytes` per slice, must fit `free_l1`; 0 when
// not even one slice fits twice.
uint64_t StreamedKSteps(uint64_t slice_bytes, uint64_t free_l1) {
  uint64_t steps = 0;
  for (uint64_t s = 1; s <= kMaxStreamedKSteps; ++s) {
    if (kDoubleBuffer * s * slice_bytes <= free_l1) steps = s;
  }
  return steps;
}

std::string Bytes(uint64_t bytes) {
  if (bytes >= kKiB * kKiB) return absl::StrCat(bytes / (kKiB * kKiB), " MiB");
  return absl::StrCat(bytes / kKiB, " KiB");
}

// The sizes ResidencyPlan() works out for a resident band, filled in by its
// steps in order. The band runs along `edge` (rows of A for an A band,
// columns of B for a B band), each line of it the whole K deep; the other
// operand is streamed in blocks of `other_base`.
struct BandLayout {
  bool a_side = false;
  const char* name = "";  // of the resident operand
  uint64_t limit = 0;     // L1 a resident operand may take
  uint64_t edge = 0;
  uint64_t line_bytes = 0;  // one row (column) of the band, K aligned to 16
  uint64_t bias_l1 = 0;
  uint64_t whole = 0;  // the whole operand resident, with the bias staging
  uint64_t band_base = 0, band_steps = 0, band = 0;
  uint64_t other_dim = 0, other_base = 0, other_tiles = 0;
  uint64_t base_k = 0;
  uint64_t band_bytes = 0, free_l1 = 0, stream_steps = 0;
};

// Sizes the band: the longest 16-aligned one that fits the resident limit
// with the bias staging, balanced over the edge. Returns why there is no
// band worth offering, or "".
std::string SizeBand(const MatmulProblem& problem, const tiling::ChipSpec& chip, const Sizes& sizes,
                     BandLayout& layout) {
  layout.limit = ResidentLimitBytes(chip);
  layout.edge = layout.a_side ? sizes.m : sizes.n;
  const uint64_t elem = layout.a_side ? sizes.a_bytes : sizes.b_bytes;
  layout.line_bytes = CeilAlign(sizes.k, kBlock16) * elem;
  // L1 for the bias staging: the larger of CANN's full-load reservation and
  // the fp32 bias tile the emulator charges.
  layout.bias_l1 = problem.has_bias ? kBlock256 * kDoubleBuffer * kFp32Bytes : 0;
  layout.whole = CeilAlign(layout.edge, kBlock16) * layout.line_bytes + layout.bias_l1;
  if (layout.whole <= layout.limit) {
    return absl::StrCat(layout.name, " (", Bytes(layout.whole), ") fits 3/4 of L1 (",
                        Bytes(layout.limit), "): CANN's whole-matrix residency covers it");
  }
  const uint64_t max_edge =
      layout.limit > layout.bias_l1
          ? FloorAlign((layout.limit - layout.bias_l1) / layout.line_bytes, kBlock16)
          : 0;
  if (max_edge < kBlock16) {
    return absl::StrCat("a 16-", layout.a_side ? "row" : "column", " band of ", layout.name, " (",
                        Bytes(kBlock16 * layout.line_bytes), ") exceeds 3/4 of L1: K=", sizes.k,
                        " is too deep");
  }
  const BandSize band_size = BalancedBand(layout.edge, max_edge);
  layout.band_base = band_size.base;
  layout.band_steps = band_size.steps;
  layout.band = layout.band_base * layout.band_steps;
  return "";
}

// Sizes the streamed operand's block. It keeps CANN's block edge where L0C
// allows; a band is only worth keeping when more than one such block reads
// it. Returns why not, or "".
std::string SizeStreamedBlock(const TilingPlan& base, const tiling::ChipSpec& chip,
                              const Sizes& sizes, BandLayout& layout) {
  layout.other_dim = layout.a_side ? sizes.n : sizes.m;
  const uint64_t cann_other = layout.a_side ? base.block.base_n : base.block.base_m;
  layout.other_base =
      std::min({std::max(cann_other, kBlock16), CeilAlign(layout.other_dim, kBlock16),
                FloorAlign(chip.l0c_bytes / (kFp32Bytes * layout.band_base), kBlock16)});
  if (layout.other_base < kBlock16) return "L0C cannot hold a 16-wide output block";
  layout.other_tiles = CeilDiv(layout.other_dim, layout.other_base);
  if (layout.other_tiles < 2) {
    return absl::StrCat(layout.a_side ? "N" : "M", "=", layout.other_dim,
                        " is one tile: the band would be read once anyway");
  }
  return "";
}

// Sizes base_k and the streamed operand's L1 stages: double-buffered stages
// of up to 4 base_k slices in what the band leaves of L1. Returns why they
// do not fit, or "".
std::string SizeStreamedStages(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                               const Sizes& sizes, BandLayout& layout) {
  const uint64_t base_m = layout.a_side ? layout.band_base : layout.other_base;
  const uint64_t base_n = layout.a_side ? layout.other_base : layout.band_base;
  layout.base_k = tiling::BlockBaseK(problem, chip, base_m, base_n);
  if (layout.base_k == 0) return "no 16-deep base_k fits the L0A half";
  layout.band_bytes = layout.band * layout.line_bytes;
  layout.free_l1 = chip.l1_bytes - layout.band_bytes - layout.bias_l1;
  const uint64_t other_elem = layout.a_side ? sizes.b_bytes : sizes.a_bytes;
  layout.stream_steps =
      StreamedKSteps(layout.base_k * layout.other_base * other_elem, layout.free_l1);
  if (layout.stream_steps == 0) {
    return absl::StrCat("the ", Bytes(layout.band_bytes), " band leaves ", Bytes(layout.free_l1),
                        " of L1, less than two stages of the streamed operand");
  }
  return "";
}

// The plan of a sized band, offered only when it passes the registry's own
// buffer check.
Offer BandOffer(const MatmulProblem& problem, const tiling::ChipSpec& chip, const Sizes& sizes,
                L1Residency side, const BandLayout& layout) {
  const bool a_side = layout.a_side;
  tiling::ResidentBandShape shape;
  shape.side = side;
  shape.band_base = layout.band_base;
  shape.band_steps = layout.band_steps;
  shape.streamed_base = layout.other_base;
  shape.streamed_k_steps = layout.stream_steps;
  shape.base_k = layout.base_k;
  Offer offer;
  offer.plan = tiling::ResidentBandPlan(problem, chip, shape);
  // Walk the tiles so that a core's consecutive units share a band: rows
  // first for an A band (window of one row), columns first for a B band (one
  // window holding every row).
  offer.plan.swat_window_rows =
      a_side ? 1 : static_cast<uint32_t>(CeilDiv(sizes.m, offer.plan.block.m_l1));
  offer.plan.detail = absl::StrCat(
      layout.name, " band of ", layout.band, a_side ? " rows" : " columns", " x K=", sizes.k, " (",
      Bytes(layout.band_bytes), ") resident in L1, ", a_side ? "B" : "A", " streamed");
  absl::Status fits = tiling::CheckPlanFits(offer.plan, problem, chip);
  if (!fits.ok()) return Offer::No(std::string(fits.message()));
  offer.ok = true;
  offer.reason = absl::StrCat(layout.name, " (", Bytes(layout.whole), ") exceeds 3/4 of L1 (",
                              Bytes(layout.limit), "), so CANN streams it; a ", layout.band,
                              a_side ? "-row" : "-column", " band (", Bytes(layout.band_bytes),
                              ") stays resident across the ", layout.other_tiles, " ",
                              a_side ? "column" : "row", " tiles");
  return offer;
}

// The block search grid: per axis, multiples of 32 (covering the block
// edges CANN's own search walks, 16 / 32 / 64 / 128-byte steps) and the
// even splits of the axis into at most 8 blocks (no tail block), each
// aligned up to the axis's unit and at most 256 (or the aligned axis); the
// pairs whose fp32 block fits L0C.
std::vector<std::pair<uint64_t, uint64_t>> AlignedBlockGrid(uint64_t m, uint64_t n,
                                                            uint64_t unit_m, uint64_t unit_n,
                                                            const tiling::ChipSpec& chip) {
  constexpr uint64_t kGridStep = 32;
  constexpr uint64_t kMaxEvenSplits = 8;
  auto axis = [&](uint64_t dim, uint64_t unit) {
    std::set<uint64_t> values;
    const uint64_t cap =
        std::max(unit, std::min(FloorAlign(kBlock256, unit), CeilAlign(dim, unit)));
    values.insert(cap);
    for (uint64_t v = kGridStep; v <= cap; v += kGridStep) values.insert(CeilAlign(v, unit));
    for (uint64_t t = 1; t <= kMaxEvenSplits; ++t) {
      const uint64_t v = CeilAlign(CeilDiv(dim, t), unit);
      if (v <= cap) values.insert(v);
    }
    return values;
  };
  std::vector<std::pair<uint64_t, uint64_t>> grid;
  for (uint64_t bm : axis(m, unit_m)) {
    for (uint64_t bn : axis(n, unit_n)) {
      if (bm * bn * kFp32Bytes <= chip.l0c_bytes) grid.emplace_back(bm, bn);
    }
  }
  return grid;
}

}  // namespace

std::string VariantObstacle(const MatmulProblem& problem) {
  // A variant is verified on the emulator, so it needs what the emulator models.
  if (absl::Status modelled = emu::CheckModelled(problem); !modelled.ok()) {
    return std::string(modelled.message());
  }
  // GroupedMatmul: the no-quant path's basic kernel takes any base block
  // (its block search, timed on the problem's token histogram, or the rows
  // spread evenly); the quant and weight-quant structs derive their L1
  // depths, scale buffers and N tail re-split per path, and are ranked on
  // CANN's plan alone.
  if (problem.op == tiling::MatmulOp::kGroupedMatmul) {
    if (tiling::grouped::OnPath(problem, tiling::grouped::GmmPath::kNoQuant)) return "";
    return "GroupedMatmul's quant and weight-quant paths are ranked on CANN's plan alone: their "
           "structs derive the L1 depths, scale buffers and N tail re-split per path (only the "
           "no-quant path's basic kernel is re-blocked)";
  }
  if (problem.k == 0) return "K=0: C is the bias or zero, nothing to tile";
  if (problem.op == tiling::MatmulOp::kWeightQuantBatchMatmulV2) {
    // CANN's own alternatives (its other capable strategies) are still ranked.
    return absl::StrCat("the variants rewrite the float kernels' tiling data; ",
                        std::string(tiling::MatmulOpName(problem.op)),
                        "'s kernels read their own structs");
  }
  return "";
}

Offer QuantBlockPlan(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                     const TilingPlan& cann, const tiling::quant::QuantBlockChoice& choice) {
  if (std::string why = VariantObstacle(problem); !why.empty()) return Offer::No(why);
  absl::StatusOr<TilingPlan> plan = tiling::quant::QuantPlanWithBlock(problem, chip, cann, choice);
  if (!plan.ok()) return Offer::No(std::string(plan.status().message()));
  Offer offer;
  offer.ok = true;
  offer.plan = *std::move(plan);
  const uint64_t tiles = CeilDiv(static_cast<uint64_t>(problem.m), choice.base_m) *
                         CeilDiv(static_cast<uint64_t>(problem.n), choice.base_n);
  offer.reason = absl::StrCat("base ", choice.base_m, "x", choice.base_n, "x", choice.base_k,
                              ", L1 loads of ", choice.step_k * choice.base_k, " K, ", tiles,
                              " tiles on ", offer.plan.block_dim, " cores (", cann.strategy,
                              "'s kernel and struct, its sliding window re-derived)");
  offer.plan.detail = absl::StrCat(cann.strategy, "'s kernel, block ", choice.base_m, "x",
                                   choice.base_n, "x", choice.base_k, " and L1 loads of ",
                                   choice.step_k, " base_k chosen by predicted time");
  return offer;
}

std::vector<std::pair<uint64_t, uint64_t>> QuantBlockSearchGrid(const MatmulProblem& problem,
                                                                const tiling::ChipSpec& chip) {
  const absl::StatusOr<tiling::quant::QuantBlockAlign> align =
      tiling::quant::QuantBlockAlignOf(problem);
  if (!align.ok() || align->m == 0 || align->n == 0) return {};
  return AlignedBlockGrid(static_cast<uint64_t>(problem.m), static_cast<uint64_t>(problem.n),
                          align->m, align->n, chip);
}

double EstimateQuantBlockCycles(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                                uint64_t base_m, uint64_t base_n) {
  const emu::ChipModel model = emu::ChipModel::FromSpec(chip);
  const double m = static_cast<double>(problem.m), n = static_cast<double>(problem.n),
               k = static_cast<double>(problem.k);
  const double a_bytes = static_cast<double>(tiling::DataTypeBits(problem.dtype_a)) / 8;
  const double b_bytes = static_cast<double>(tiling::DataTypeBits(problem.dtype_b)) / 8;
  const uint64_t tiles = CeilDiv(static_cast<uint64_t>(problem.m), base_m) *
                         CeilDiv(static_cast<uint64_t>(problem.n), base_n);
  const double rounds = static_cast<double>(CeilDiv(tiles, chip.aic_num));
  const double cube = static_cast<double>(base_m) * static_cast<double>(base_n) * k /
                      model.PeakMacsPerCycle(problem.dtype_a, false);
  const double in_bytes =
      (static_cast<double>(base_m) * a_bytes + static_cast<double>(base_n) * b_bytes) * k;
  const double port = in_bytes / model.arch.mte2_port_bytes_per_cycle;
  const double active = static_cast<double>(std::min<uint64_t>(tiles, chip.aic_num));
  const double l2_share = active * in_bytes / model.l2_bytes_per_cycle;
  const double per_round = std::max({cube, port, l2_share});
  const double ddr_floor = (m * k * a_bytes + k * n * b_bytes) / model.ddr_bytes_per_cycle;
  return std::max(rounds * per_round, ddr_floor);
}

MatmulProblem OneBatchProblem(const MatmulProblem& problem, uint64_t* batches) {
  if (batches != nullptr) *batches = 1;
  if (problem.op == tiling::MatmulOp::kMatMulV3) return problem;
  MatmulProblem flat = problem;
  const absl::StatusOr<tiling::BatchShape> walk = tiling::BatchShapeOf(problem);
  if (walk.ok()) {
    flat.m = static_cast<int64_t>(walk->rows);
    if (batches != nullptr) *batches = walk->batch;
  }
  flat.op = tiling::MatmulOp::kMatMulV3;
  flat.batch.a.clear();
  flat.batch.b.clear();
  flat.batch.c.clear();
  flat.batch.bias.clear();
  flat.fused.op = tiling::FusedOp::kNone;
  flat.fused.x3_shape.clear();
  flat.fused.inner_precise = 0;
  flat.batch.a_interleaved = flat.batch.b_interleaved = false;
  return flat;
}

Offer BatchBlockPlan(const MatmulProblem& problem, const tiling::ChipSpec& chip, uint64_t base_m,
                     uint64_t base_n) {
  uint64_t batches = 1;
  const MatmulProblem flat = OneBatchProblem(problem, &batches);
  Offer offer = BlockPlan(flat, chip, base_m, base_n);
  if (!offer.ok) return offer;
  TilingPlan& plan = offer.plan;
  tiling::TilingData data = tiling::NewTilingData<tiling::BatchBasicField>();
  for (size_t i = 0; i < plan.data.fields.size() && i < data.fields.size(); ++i) {
    data.fields[i].value = plan.data.fields[i].value;
  }
  const uint64_t tiles = CeilDiv(static_cast<uint64_t>(flat.m), plan.block.m_l1) *
                         CeilDiv(static_cast<uint64_t>(flat.n), plan.block.n_l1);
  const uint32_t cores = static_cast<uint32_t>(std::min<uint64_t>(chip.aic_num, tiles * batches));
  plan.block_dim = cores;
  tiling::Set(data, tiling::BatchBasicField::kUsedCoreNum, cores);
  tiling::Set(data, tiling::BatchBasicField::kBatchDimAll, batches);
  const bool batched_x3 = problem.fused.x3_shape.size() == 3;
  tiling::Set(data, tiling::BatchBasicField::kBatchX3,
              batched_x3 ? static_cast<uint64_t>(problem.fused.x3_shape[0]) : 1);
  plan.data = std::move(data);
  const bool fused = problem.op == tiling::MatmulOp::kFusedMatMul;
  plan.key.api_level = tiling::ApiLevel::kBasic;
  plan.key.layout = tiling::KeyLayoutOf(problem.op);
  plan.key.batch_model = static_cast<uint8_t>(fused && batches > 1 ? tiling::BatchModel::kFusedBatch
                                                                   : tiling::BatchModel::kForBatch);
  plan.key.fused_op = problem.fused.op;
  plan.key.inner_precise = static_cast<uint8_t>(problem.fused.inner_precise);
  plan.kernel_type = tiling::KernelTypeOf(plan.data.kernel, plan.key);
  absl::StrAppend(&offer.reason, ", ", batches, " batch", batches == 1 ? "" : "es");
  return offer;
}

// The transposed batch matmuls' own kernel with another block (their
// BatchMatMulV3TilingData under their key; the batched matmuls' other
// kernels do not read x1 and y through perms).
Offer TransposeBlockPlan(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                         uint64_t base_m, uint64_t base_n) {
  if (std::string why = VariantObstacle(problem); !why.empty()) return Offer::No(why);
  if (base_m == 0 || base_n == 0 || base_m % kBlock16 != 0 || base_n % kBlock16 != 0) {
    return Offer::No(absl::StrCat("block ", base_m, "x", base_n,
                                  " breaks the 16-element cube fractal alignment"));
  }
  absl::StatusOr<TilingPlan> plan = tiling::TransposePlanWithBlock(problem, chip, base_m, base_n);
  if (!plan.ok()) return Offer::No(std::string(plan.status().message()));
  Offer offer;
  offer.plan = *std::move(plan);
  absl::Status fits = tiling::CheckPlanFits(offer.plan, problem, chip);
  if (!fits.ok()) return Offer::No(std::string(fits.message()));
  const uint64_t tiles = CeilDiv(static_cast<uint64_t>(problem.m), offer.plan.block.m_l1) *
                         CeilDiv(static_cast<uint64_t>(problem.n), offer.plan.block.n_l1);
  offer.ok = true;
  offer.reason = absl::StrCat("base ", base_m, "x", base_n, "x", offer.plan.block.base_k, ", ",
                              tiles, " tiles per batch, ", problem.transpose.batch, " batches on ",
                              offer.plan.block_dim,
                              " cores (the op's own kernel, x1 and y through its perms)");
  offer.plan.detail =
      absl::StrCat("BASE's kernel, block ", base_m, "x", base_n, " chosen by predicted time");
  return offer;
}

// GroupedMatmul's no-quant basic kernel with another block: the experts'
// blocks dealt to the cores one expert after another, as CANN's plan.
Offer GroupedBlockPlan(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                       uint64_t base_m, uint64_t base_n) {
  if (std::string why = VariantObstacle(problem); !why.empty()) return Offer::No(why);
  absl::StatusOr<TilingPlan> plan =
      tiling::GroupedNoQuantPlanWithBlock(problem, chip, base_m, base_n);
  if (!plan.ok()) return Offer::No(std::string(plan.status().message()));
  absl::StatusOr<tiling::grouped::GmmGroups> groups = tiling::grouped::GroupsOf(problem.grouped);
  if (!groups.ok()) return Offer::No(std::string(groups.status().message()));
  Offer offer;
  offer.plan = *std::move(plan);
  absl::Status fits = tiling::CheckPlanFits(offer.plan, problem, chip);
  if (!fits.ok()) return Offer::No(std::string(fits.message()));
  uint64_t blocks = 0;
  for (const tiling::grouped::GmmGroup& g : groups->groups) {
    blocks += CeilDiv(g.m, base_m) * CeilDiv(g.n, base_n);
  }
  offer.ok = true;
  offer.reason = absl::StrCat("base ", base_m, "x", base_n, "x", offer.plan.block.base_k, ", ",
                              blocks, " blocks over ", groups->groups.size(), " experts on ",
                              offer.plan.block_dim,
                              " cores (GROUPED_NO_QUANT's basic kernel, its struct re-blocked)");
  offer.plan.detail = absl::StrCat("GROUPED_NO_QUANT's basic kernel, block ", base_m, "x", base_n,
                                   " chosen by predicted time on the experts' rows");
  return offer;
}

Offer BlockPlan(const MatmulProblem& problem, const tiling::ChipSpec& chip, uint64_t base_m,
                uint64_t base_n) {
  if (problem.op == tiling::MatmulOp::kGroupedMatmul) {
    return GroupedBlockPlan(problem, chip, base_m, base_n);
  }
  if (problem.op == tiling::MatmulOp::kTransposeBatchMatMul ||
      problem.op == tiling::MatmulOp::kTransposeQuantBatchMatMul) {
    return TransposeBlockPlan(problem, chip, base_m, base_n);
  }
  if (problem.op != tiling::MatmulOp::kMatMulV3) {
    return BatchBlockPlan(problem, chip, base_m, base_n);
  }
  if (std::string why = VariantObstacle(problem); !why.empty()) return Offer::No(why);
  if (base_m == 0 || base_n == 0 || base_m % kBlock16 != 0 || base_n % kBlock16 != 0) {
    return Offer::No(absl::StrCat("block ", base_m, "x", base_n,
                                  " breaks the 16-element cube fractal alignment"));
  }
  absl::StatusOr<TilingPlan> plan = tiling::StreamedAswtPlan(problem, chip, base_m, base_n);
  if (!plan.ok()) return Offer::No(std::string(plan.status().message()));
  Offer offer;
  offer.plan = *std::move(plan);
  absl::Status fits = tiling::CheckPlanFits(offer.plan, problem, chip);
  if (!fits.ok()) return Offer::No(std::string(fits.message()));
  const Sizes sizes = SizesOf(problem);
  const uint64_t blocks = CeilDiv(sizes.m, base_m) * CeilDiv(sizes.n, base_n);
  offer.ok = true;
  offer.reason = absl::StrCat("base ", base_m, "x", base_n, "x", offer.plan.block.base_k, ", ",
                              blocks, " tiles on ", offer.plan.block_dim, " cores");
  offer.plan.detail =
      absl::StrCat("A/B streamed, block ", base_m, "x", base_n, " chosen by predicted time");
  return offer;
}

std::vector<std::pair<uint64_t, uint64_t>> BlockSearchGrid(const MatmulProblem& problem,
                                                           const tiling::ChipSpec& chip) {
  return AlignedBlockGrid(static_cast<uint64_t>(problem.m), static_cast<uint64_t>(problem.n),
                          kBlock16, kBlock16, chip);
}

// EstimateBlockCycles() of GroupedMatmul: every expert's blocks (its own
// partial ones included) dealt to the cores, each expert's operands read
// from DDR once.
double EstimateGroupedBlockCycles(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                                  uint64_t base_m, uint64_t base_n) {
  absl::StatusOr<tiling::grouped::GmmGroups> groups = tiling::grouped::GroupsOf(problem.grouped);
  if (!groups.ok()) return 0;
  const MatmulProblem stacked = emu::GroupedTimedProblem(problem);
  const Sizes sizes = SizesOf(stacked);
  const emu::ChipModel model = emu::ChipModel::FromSpec(chip);
  double cube = 0, in_bytes = 0, unique_bytes = 0, out = 0;
  uint64_t tiles = 0;
  for (const tiling::grouped::GmmGroup& g : groups->groups) {
    const uint64_t blocks = CeilDiv(g.m, base_m) * CeilDiv(g.n, base_n);
    tiles += blocks;
    cube += static_cast<double>(blocks) *
            static_cast<double>(model.MmadCycles(base_m, base_n, g.k, stacked.dtype_a, false));
    in_bytes += static_cast<double>(blocks * (base_m * sizes.a_bytes + base_n * sizes.b_bytes) * g.k);
    unique_bytes += static_cast<double>(g.m * g.k * sizes.a_bytes + g.k * g.n * sizes.b_bytes);
    out += static_cast<double>(blocks * base_m * base_n * sizes.c_bytes);
  }
  const double cores = static_cast<double>(std::max<uint64_t>(1, std::min<uint64_t>(tiles, chip.aic_num)));
  const double per_core =
      std::max(std::max(cube, in_bytes / model.arch.mte2_port_bytes_per_cycle),
               out / static_cast<double>(model.arch.fixpipe_bytes_per_cycle)) /
      cores;
  return std::max(std::max(per_core, in_bytes / model.l2_bytes_per_cycle),
                  unique_bytes / model.ddr_bytes_per_cycle);
}

double EstimateBlockCycles(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                           uint64_t base_m, uint64_t base_n) {
  if (problem.op == tiling::MatmulOp::kGroupedMatmul) {
    return EstimateGroupedBlockCycles(problem, chip, base_m, base_n);
  }
  const Sizes sizes = SizesOf(problem);
  const emu::ChipModel model = emu::ChipModel::FromSpec(chip);
  const uint64_t tiles = CeilDiv(sizes.m, base_m) * CeilDiv(sizes.n, base_n);
  const double rounds = static_cast<double>(CeilDiv(tiles, chip.aic_num));
  const double cube =
      static_cast<double>(model.MmadCycles(base_m, base_n, sizes.k, problem.dtype_a, problem.hf32));
  const double in_bytes =
      static_cast<double>((base_m * sizes.a_bytes + base_n * sizes.b_bytes) * sizes.k);
  const double port = in_bytes / model.arch.mte2_port_bytes_per_cycle;
  const double active = static_cast<double>(std::min<uint64_t>(tiles, chip.aic_num));
  const double l2_share = active * in_bytes / model.l2_bytes_per_cycle;
  const double out = static_cast<double>(base_m * base_n * sizes.c_bytes) /
                     static_cast<double>(model.arch.fixpipe_bytes_per_cycle);
  const double per_round = std::max(std::max(cube, port), std::max(l2_share, out));
  const double ddr_floor =
      static_cast<double>(sizes.m * sizes.k * sizes.a_bytes + sizes.k * sizes.n * sizes.b_bytes) /
      model.ddr_bytes_per_cycle;
  return std::max(rounds * per_round, ddr_floor);
}

uint64_t EstimateBlockOps(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                          uint64_t base_m, uint64_t base_n) {
  if (problem.op == tiling::MatmulOp::kGroupedMatmul) {
    // The re-blocked plan itself (its tiling costs microseconds); one the
    // tiling refuses costs nothing here and is refused by BlockPlan().
    absl::StatusOr<TilingPlan> plan =
        tiling::GroupedNoQuantPlanWithBlock(problem, chip, base_m, base_n);
    return plan.ok() ? emu::EstimateEmulationWork(*plan, problem).expected_ops : 0;
  }
  // The streamed plan's shape as far as the work estimate reads it: one
  // base block per L1 tile.
  TilingPlan sketch;
  sketch.kernel_type = tiling::KernelType::kAicOnly;
  sketch.key.model = tiling::KernelModel::kBasic;
  sketch.block.base_m = sketch.block.m_l1 = base_m;
  sketch.block.base_n = sketch.block.n_l1 = base_n;
  sketch.block.base_k =
      std::max<uint64_t>(kBlock16, tiling::BlockBaseK(problem, chip, base_m, base_n));
  return emu::EstimateEmulationWork(sketch, problem).expected_ops;
}

std::string WindowObstacle(const TilingPlan& base, const MatmulProblem& problem,
                           const tiling::ChipSpec& chip) {
  if (std::string why = VariantObstacle(problem); !why.empty()) return why;
  if (problem.op == tiling::MatmulOp::kQuantBatchMatmulV3) {
    // The sliding-window schedulers walk rows of tiles in windows; MX_STREAMK
    // and the A-full-load kernels keep each core on its own row of tiles.
    const tiling::KernelId kernel = base.data.kernel;
    if (kernel != tiling::KernelId::kQuantBasic && kernel != tiling::KernelId::kQuantWithoutBatch &&
        kernel != tiling::KernelId::kQuantHighLevel) {
      return absl::StrCat(base.strategy, "'s kernel has no sliding window");
    }
    if (tiling::quant::KeepsAInL1(base)) {
      return absl::StrCat(base.strategy,
                          " keeps A's whole K in L1: each core stays on its row of tiles");
    }
  } else if (base.key.model != tiling::KernelModel::kBasic &&
             base.key.model != tiling::KernelModel::kBasicSplitK) {
    return absl::StrCat("model ", std::string(tiling::KernelModelName(base.key.model)),
                        " is not the data-parallel tile walk");
  }
  if (base.key.full_load != tiling::FullLoad::kNone ||
      base.l1_residency != L1Residency::kStreamed) {
    return "a resident operand leaves one row or column of L1 blocks to walk";
  }
  const uint64_t m_tiles = CeilDiv(problem.m, std::max<uint64_t>(1, base.block.m_l1));
  const uint64_t n_tiles = CeilDiv(problem.n, std::max<uint64_t>(1, base.block.n_l1));
  if (m_tiles < 2 || n_tiles < 2) {
    return absl::StrCat(m_tiles, "x", n_tiles,
                        " tiles: a single row or column, no order to change");
  }
  if (m_tiles * n_tiles <= base.block_dim) {
    return absl::StrCat(m_tiles * n_tiles, " tiles run in one round on ", base.block_dim,
                        " cores: the walk order does not matter");
  }
  // At the dtypes' bit widths (the 4-bit quant types are half a byte).
  const uint64_t m = static_cast<uint64_t>(problem.m), n = static_cast<uint64_t>(problem.n),
                 k = static_cast<uint64_t>(problem.k);
  const uint64_t footprint = (m * k * tiling::DataTypeBits(problem.dtype_a) +
                              k * n * tiling::DataTypeBits(problem.dtype_b) +
                              m * n * tiling::DataTypeBits(problem.dtype_c)) /
                             8;
  if (footprint <= chip.l2_bytes) {
    return absl::StrCat("A, B and C (", Bytes(footprint), ") fit L2 (", Bytes(chip.l2_bytes),
                        "): every re-read hits L2 whatever the window");
  }
  return "";
}

std::vector<uint32_t> WindowCandidates(const TilingPlan& base, const MatmulProblem& problem,
                                       const tiling::ChipSpec& chip) {
  const Sizes sizes = SizesOf(problem);
  const uint64_t m_l1 = std::max<uint64_t>(1, base.block.m_l1);
  const uint64_t n_l1 = std::max<uint64_t>(1, base.block.n_l1);
  const uint64_t m_tiles = CeilDiv(sizes.m, m_l1);
  const uint64_t cores = std::max<uint32_t>(1, base.block_dim);
  // One window pass re-reads its W rows of A for every column of tiles, so
  // they should stay in L2 while the pass streams the B columns the cores
  // hold in flight and writes W rows of C (which the L2 also absorbs).
  const uint64_t row_bytes = m_l1 * sizes.k * sizes.a_bytes + m_l1 * sizes.n * sizes.c_bytes;
  const uint64_t col_bytes = n_l1 * sizes.k * sizes.b_bytes;
  uint64_t fit = 1;
  for (uint64_t w = 1; w <= m_tiles; ++w) {
    if (w * row_bytes + CeilDiv(cores, w) * col_bytes > chip.l2_bytes) break;
    fit = w;
  }
  const uint64_t cann = std::min<uint64_t>(tiling::kCannSwatWindowRows, m_tiles);
  std::vector<uint32_t> out;
  for (uint64_t w : {fit, fit / 2, fit * 2, uint64_t{1}, uint64_t{2}, uint64_t{8}, uint64_t{16}}) {
    w = std::min(w, m_tiles);
    if (w == 0 || w == cann) continue;
    if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(static_cast<uint32_t>(w));
  }
  return out;
}

Offer WindowPlan(const TilingPlan& base, const MatmulProblem& problem, const tiling::ChipSpec& chip,
                 uint32_t window_rows) {
  if (std::string why = WindowObstacle(base, problem, chip); !why.empty()) return Offer::No(why);
  if (window_rows == 0) return Offer::No("a window of 0 rows");
  Offer offer;
  offer.ok = true;
  offer.plan = base;
  offer.plan.swat_window_rows = window_rows;
  offer.plan.detail = absl::StrCat(base.detail.str(), "; SWAT window of ", window_rows,
                                   " rows instead of ", tiling::kCannSwatWindowRows);
  offer.reason =
      absl::StrCat("SWAT window ", window_rows, " rows (CANN: ", tiling::kCannSwatWindowRows, ")");
  return offer;
}

Offer ResidencyPlan(const TilingPlan& base, const MatmulProblem& problem,
                    const tiling::ChipSpec& chip, L1Residency side) {
  if (std::string why = VariantObstacle(problem); !why.empty()) return Offer::No(why);
  if (side == L1Residency::kStreamed) return Offer::No("no operand chosen for residency");
  BandLayout layout;
  layout.a_side = side == L1Residency::kABand;
  layout.name = layout.a_side ? "A" : "B";
  const Sizes sizes = SizesOf(problem);
  // Each step needs the sizes of the ones before it.
  if (std::string why = SizeBand(problem, chip, sizes, layout); !why.empty()) {
    return Offer::No(why);
  }
  if (std::string why = SizeStreamedBlock(base, chip, sizes, layout); !why.empty()) {
    return Offer::No(why);
  }
  if (std::string why = SizeStreamedStages(problem, chip, sizes, layout); !why.empty()) {
    return Offer::No(why);
  }
  return BandOffer(problem, chip, sizes, side, layout);
}

Offer AivDotPlan(const MatmulProblem& problem, const tiling::ChipSpec& chip) {
  if (std::string why = VariantObstacle(problem); !why.empty()) return Offer::No(why);
  if (problem.m != 1 && problem.n != 1) {
    return Offer::No(absl::StrCat("M=", problem.m, " and N=", problem.n,
                                  " are both above 1: the cube's 16-row fractal is used"));
  }
  const uint64_t a_bytes = tiling::DataTypeBytes(problem.dtype_a);
  const uint64_t b_bytes = tiling::DataTypeBytes(problem.dtype_b);
  if (a_bytes != 2 || b_bytes != 2) {
    return Offer::No(
        "A and B are not both float16 / bfloat16 (fp32 has CANN's own TO_MUL under "
        "force_grp_acc_fp32)");
  }
  if (chip.aiv_num == 0) return Offer::No("the chip has no vector cores");
  absl::StatusOr<TilingPlan> plan = tiling::VectorMulPlan(problem, chip);
  if (!plan.ok()) return Offer::No(std::string(plan.status().message()));
  Offer offer;
  offer.ok = true;
  offer.plan = *std::move(plan);
  offer.plan.strategy = std::string(tiling::StrategyName(tiling::StrategyId::kVectorMul));
  offer.plan.detail = absl::StrCat(offer.plan.detail.str(), "; ",
                                   std::string(tiling::DataTypeName(problem.dtype_a)),
                                   " operands cast to fp32 in UB, fp32 accumulation");
  offer.reason =
      absl::StrCat(problem.m == 1 ? "M" : "N", "=1 ",
                   std::string(tiling::DataTypeName(problem.dtype_a)), ": dot products on ",
                   offer.plan.block_dim, " AIV cores instead of a cube fractal using 1 of 16 rows");
  return offer;
}

}  // namespace npu::advisor
