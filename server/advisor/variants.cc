#include "server/advisor/variants.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "emulator/chip.h"
#include "emulator/work_estimate.h"
#include "server/tiling/custom_plans.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/registry.h"
#include "server/tiling/strategy_id.h"

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

}  // namespace

std::string VariantObstacle(const MatmulProblem& problem) {
  if (problem.format_a != tiling::Format::kNd || problem.format_b != tiling::Format::kNd ||
      problem.format_c != tiling::Format::kNd) {
    return "FRACTAL_NZ operands: the emulator checks numerics on ND data only";
  }
  if (problem.a_slice.enabled) return "A is a slice view: the emulator models contiguous A only";
  if (problem.k == 0) return "K=0: C is the bias or zero, nothing to tile";
  return "";
}

Offer BlockPlan(const MatmulProblem& problem, const tiling::ChipSpec& chip, uint64_t base_m,
                uint64_t base_n) {
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
  // Multiples of 32 cover the block edges CANN's own search walks (16 / 32 /
  // 64 / 128-byte steps); the even splits add blocks that leave no tail.
  constexpr uint64_t kGridStep = 32;
  constexpr uint64_t kMaxEvenSplits = 8;
  auto axis = [&](uint64_t dim) {
    std::set<uint64_t> values;
    const uint64_t cap = std::min(kBlock256, CeilAlign(dim, kBlock16));
    values.insert(cap);
    for (uint64_t v = kGridStep; v <= cap; v += kGridStep) values.insert(v);
    for (uint64_t t = 1; t <= kMaxEvenSplits; ++t) {
      const uint64_t v = CeilAlign(CeilDiv(dim, t), kBlock16);
      if (v <= kBlock256) values.insert(v);
    }
    return values;
  };
  const std::set<uint64_t> ms = axis(static_cast<uint64_t>(problem.m));
  const std::set<uint64_t> ns = axis(static_cast<uint64_t>(problem.n));
  std::vector<std::pair<uint64_t, uint64_t>> grid;
  for (uint64_t bm : ms) {
    for (uint64_t bn : ns) {
      if (bm * bn * kFp32Bytes <= chip.l0c_bytes) grid.emplace_back(bm, bn);
    }
  }
  return grid;
}

double EstimateBlockCycles(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                           uint64_t base_m, uint64_t base_n) {
  const Sizes sizes = SizesOf(problem);
  const emu::ChipModel model = emu::ChipModel::FromSpec(chip);
  const uint64_t tiles = CeilDiv(sizes.m, base_m) * CeilDiv(sizes.n, base_n);
  const double rounds = static_cast<double>(CeilDiv(tiles, chip.aic_num));
  const double cube =
      static_cast<double>(model.MmadCycles(base_m, base_n, sizes.k, problem.dtype_a, problem.hf32));
  const double in_bytes =
      static_cast<double>((base_m * sizes.a_bytes + base_n * sizes.b_bytes) * sizes.k);
  const double port = in_bytes / emu::kMte2PortBytesPerCycle;
  const double active = static_cast<double>(std::min<uint64_t>(tiles, chip.aic_num));
  const double l2_share = active * in_bytes / static_cast<double>(model.l2_bytes_per_cycle);
  const double out =
      static_cast<double>(base_m * base_n * sizes.c_bytes) / emu::kFixpipeBytesPerCycle;
  const double per_round = std::max(std::max(cube, port), std::max(l2_share, out));
  const double ddr_floor =
      static_cast<double>(sizes.m * sizes.k * sizes.a_bytes + sizes.k * sizes.n * sizes.b_bytes) /
      static_cast<double>(model.ddr_bytes_per_cycle);
  return std::max(rounds * per_round, ddr_floor);
}

uint64_t EstimateBlockOps(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                          uint64_t base_m, uint64_t base_n) {
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
  if (base.key.model != tiling::KernelModel::kBasic &&
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
  const Sizes sizes = SizesOf(problem);
  const uint64_t footprint = sizes.m * sizes.k * sizes.a_bytes + sizes.k * sizes.n * sizes.b_bytes +
                             sizes.m * sizes.n * sizes.c_bytes;
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
  offer.plan.detail = absl::StrCat(base.detail, "; SWAT window of ", window_rows,
                                   " rows instead of ", tiling::kCannSwatWindowRows);
  offer.reason =
      absl::StrCat("SWAT window ", window_rows, " rows (CANN: ", tiling::kCannSwatWindowRows, ")");
  return offer;
}

Offer ResidencyPlan(const TilingPlan& base, const MatmulProblem& problem,
                    const tiling::ChipSpec& chip, L1Residency side) {
  if (std::string why = VariantObstacle(problem); !why.empty()) return Offer::No(why);
  if (side == L1Residency::kStreamed) return Offer::No("no operand chosen for residency");
  const bool a_side = side == L1Residency::kABand;
  const char* name = a_side ? "A" : "B";
  const Sizes sizes = SizesOf(problem);
  const uint64_t limit = ResidentLimitBytes(chip);
  // Band edge: rows of A (a_side) or columns of B, each the whole K deep.
  const uint64_t edge = a_side ? sizes.m : sizes.n;
  const uint64_t elem = a_side ? sizes.a_bytes : sizes.b_bytes;
  const uint64_t line_bytes = CeilAlign(sizes.k, kBlock16) * elem;
  // L1 for the bias staging: the larger of CANN's full-load reservation and
  // the fp32 bias tile the emulator charges.
  const uint64_t bias_l1 = problem.has_bias ? kBlock256 * kDoubleBuffer * kFp32Bytes : 0;
  const uint64_t whole = CeilAlign(edge, kBlock16) * line_bytes + bias_l1;
  if (whole <= limit) {
    return Offer::No(absl::StrCat(name, " (", Bytes(whole), ") fits 3/4 of L1 (", Bytes(limit),
                                  "): CANN's whole-matrix residency covers it"));
  }
  const uint64_t max_edge =
      limit > bias_l1 ? FloorAlign((limit - bias_l1) / line_bytes, kBlock16) : 0;
  if (max_edge < kBlock16) {
    return Offer::No(absl::StrCat("a 16-", a_side ? "row" : "column", " band of ", name, " (",
                                  Bytes(kBlock16 * line_bytes), ") exceeds 3/4 of L1: K=", sizes.k,
                                  " is too deep"));
  }
  const BandSize band_size = BalancedBand(edge, max_edge);
  const uint64_t band_base = band_size.base, steps = band_size.steps;
  const uint64_t band = band_base * steps;

  // The streamed side keeps CANN's block edge where L0C allows.
  const uint64_t other_dim = a_side ? sizes.n : sizes.m;
  const uint64_t cann_other = a_side ? base.block.base_n : base.block.base_m;
  uint64_t other_base = std::min({std::max(cann_other, kBlock16), CeilAlign(other_dim, kBlock16),
                                  FloorAlign(chip.l0c_bytes / (kFp32Bytes * band_base), kBlock16)});
  if (other_base < kBlock16) return Offer::No("L0C cannot hold a 16-wide output block");
  const uint64_t other_tiles = CeilDiv(other_dim, other_base);
  if (other_tiles < 2) {
    return Offer::No(absl::StrCat(a_side ? "N" : "M", "=", other_dim,
                                  " is one tile: the band would be read once anyway"));
  }
  const uint64_t base_m = a_side ? band_base : other_base;
  const uint64_t base_n = a_side ? other_base : band_base;
  const uint64_t base_k = tiling::BlockBaseK(problem, chip, base_m, base_n);
  if (base_k == 0) return Offer::No("no 16-deep base_k fits the L0A half");
  // The streamed operand: double-buffered stages of up to 4 base_k slices
  // in what the band leaves of L1.
  const uint64_t band_bytes = band * line_bytes;
  const uint64_t free_l1 = chip.l1_bytes - band_bytes - bias_l1;
  const uint64_t other_elem = a_side ? sizes.b_bytes : sizes.a_bytes;
  const uint64_t stream_steps = StreamedKSteps(base_k * other_base * other_elem, free_l1);
  if (stream_steps == 0) {
    return Offer::No(absl::StrCat("the ", Bytes(band_bytes), " band leaves ", Bytes(free_l1),
                                  " of L1, less than two stages of the streamed operand"));
  }

  tiling::ResidentBandShape shape;
  shape.side = side;
  shape.band_base = band_base;
  shape.band_steps = steps;
  shape.streamed_base = other_base;
  shape.streamed_k_steps = stream_steps;
  shape.base_k = base_k;
  Offer offer;
  offer.plan = tiling::ResidentBandPlan(problem, chip, shape);
  // Walk the tiles so that a core's consecutive units share a band: rows
  // first for an A band (window of one row), columns first for a B band (one
  // window holding every row).
  offer.plan.swat_window_rows =
      a_side ? 1 : static_cast<uint32_t>(CeilDiv(sizes.m, offer.plan.block.m_l1));
  offer.plan.detail =
      absl::StrCat(name, " band of ", band, a_side ? " rows" : " columns", " x K=", sizes.k, " (",
                   Bytes(band_bytes), ") resident in L1, ", a_side ? "B" : "A", " streamed");
  absl::Status fits = tiling::CheckPlanFits(offer.plan, problem, chip);
  if (!fits.ok()) return Offer::No(std::string(fits.message()));
  offer.ok = true;
  offer.reason = absl::StrCat(name, " (", Bytes(whole), ") exceeds 3/4 of L1 (", Bytes(limit),
                              "), so CANN streams it; a ", band, a_side ? "-row" : "-column",
                              " band (", Bytes(band_bytes), ") stays resident across the ",
                              other_tiles, " ", a_side ? "column" : "row", " tiles");
  return offer;
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
  offer.plan.detail =
      absl::StrCat(offer.plan.detail, "; ", std::string(tiling::DataTypeName(problem.dtype_a)),
                   " operands cast to fp32 in UB, fp32 accumulation");
  offer.reason =
      absl::StrCat(problem.m == 1 ? "M" : "N", "=1 ",
                   std::string(tiling::DataTypeName(problem.dtype_a)), ": dot products on ",
                   offer.plan.block_dim, " AIV cores instead of a cube fractal using 1 of 16 rows");
  return offer;
}

}  // namespace npu::advisor
