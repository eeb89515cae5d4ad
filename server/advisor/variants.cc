#include "server/advisor/variants.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "emulator/chip.h"
#include "emulator/program.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/registry.h"
#include "server/tiling/strategies/vector_mul.h"
#include "server/tiling/strategy.h"

namespace npu::advisor {
namespace {

using tiling::CeilAlign;
using tiling::CeilDiv;
using tiling::CubeRunState;
using tiling::FloorAlign;
using tiling::kBlock16;
using tiling::kBlock256;
using tiling::kDoubleBuffer;
using tiling::kFp32Bytes;
using tiling::L1Residency;
using tiling::MatmulProblem;
using tiling::ProblemFacts;
using tiling::TilingPlan;

constexpr uint64_t kKiB = 1024;
// The resident matrix (or band) may take 3/4 of L1, CANN's full-load limit
// (seeds/001 2.5.1: "(M·K·dtypeA + bias) <= 3/4·L1"); the rest streams the
// other operand.
uint64_t ResidentLimitBytes(const tiling::ChipSpec& chip) { return chip.l1_bytes * 3 / 4; }
// CANN's streamed branch leaves 256 fp32 of L1 to the bias table staging.
constexpr uint64_t kBiasTableL1Bytes = 256 * 4;
// Full-load style kernels stage at most 4 K slices of the streamed operand.
constexpr uint64_t kMaxStreamedKSteps = 4;
// fp32 data-parallel plans split K inside the core from this K on (CANN's
// ChooseFp32SplitK threshold, see swizzled_data_parallel.cc).
constexpr uint64_t kFp32SplitKThreshold = 2048;
// Tail pieces keep their inner axis above 128 bytes (CANN's tail re-split
// rule, block_heuristics.cc SplitTailRound).
constexpr uint64_t kTailInnerBytes = 128;

// CANN's base_k for a block (block_heuristics.cc ChooseBaseK, which is
// private to the engine): the whole aligned K when it fits the L0A half,
// else a 256-byte multiple, else the largest of 128 / 64 / 32 / 16.
uint64_t CannBaseK(const MatmulProblem& problem, const ProblemFacts& facts,
                   const tiling::ChipSpec& chip, uint64_t base_m, uint64_t base_n) {
  const uint64_t k_aligned = CeilAlign(facts.k, kBlock16);
  const uint64_t max_base_k =
      chip.l0a_bytes / kDoubleBuffer / facts.a_bytes / std::max(base_m, base_n);
  if (k_aligned <= max_base_k) return k_aligned;
  if (problem.trans_a && !problem.trans_b) return FloorAlign(max_base_k, kBlock16);
  if (max_base_k * facts.a_bytes >= 256) return FloorAlign(max_base_k, 256 / facts.a_bytes);
  for (uint64_t candidate : {128, 64, 32, 16}) {
    if (max_base_k >= candidate) return candidate;
  }
  return 0;
}

bool Fp32SplitK(const MatmulProblem& problem, const ProblemFacts& facts) {
  return problem.dtype_a == tiling::DataType::kFloat32 &&
         problem.dtype_b == tiling::DataType::kFloat32 && !problem.hf32 &&
         facts.k >= kFp32SplitKThreshold;
}

// Key, kernel and bookkeeping of a streamed data-parallel plan; the block
// fields come from `state` through CANN's serializer.
TilingPlan FinishAswtPlan(const MatmulProblem& problem, const ProblemFacts& facts,
                          const tiling::ChipSpec& chip, const CubeRunState& state) {
  TilingPlan plan;
  plan.strategy = "BASIC_ASWT";
  plan.key.api_level =
      problem.avoid_tensor_api ? tiling::ApiLevel::kBasic : tiling::ApiLevel::kTensor;
  plan.key.trans_a = problem.trans_a;
  plan.key.trans_b = problem.trans_b;
  plan.key.model =
      Fp32SplitK(problem, facts) ? tiling::KernelModel::kBasicSplitK : tiling::KernelModel::kBasic;
  plan.key.full_load = tiling::FullLoad::kNone;
  plan.key.l0c2out = tiling::L0cToOut::kOnTheFly;
  plan.block_dim = static_cast<uint32_t>(state.used_core_num);
  plan.kernel_type = tiling::KernelType::kAicOnly;
  plan.workspace_bytes = tiling::kRuntimeWorkspaceBytes;
  tiling::FillBasicTilingData(problem, facts, chip, state, plan);
  return plan;
}

uint64_t L0cDoubleBuffer(const tiling::ChipSpec& chip, uint64_t base_m, uint64_t base_n) {
  return base_m * base_n * kFp32Bytes * kDoubleBuffer <= chip.l0c_bytes ? kDoubleBuffer : 1;
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
  const ProblemFacts facts = tiling::DeriveFacts(problem);
  CubeRunState s;
  tiling::ResetBase(facts, chip, s);
  s.base_m = base_m;
  s.base_n = base_n;
  s.base_k = CannBaseK(problem, facts, chip, base_m, base_n);
  if (s.base_k == 0) {
    return Offer::No(
        absl::StrCat("block ", base_m, "x", base_n, " leaves no 16-deep base_k in the L0A half"));
  }
  const uint64_t blocks = CeilDiv(facts.m, base_m) * CeilDiv(facts.n, base_n);
  s.used_core_num = std::min<uint64_t>(blocks, chip.aic_num);
  const uint64_t out_bytes = base_m * base_n * kFp32Bytes;
  s.l0c_db = L0cDoubleBuffer(chip, base_m, base_n);
  s.ub_db = out_bytes <= chip.ub_bytes ? kDoubleBuffer : 1;
  tiling::SplitTailRound(problem, facts, chip, s);
  // CANN's streamed branch: L1 split evenly between double-buffered A and B
  // stages of base_k-deep slices.
  const uint64_t l1_for_ab = problem.has_bias ? chip.l1_bytes - kBiasTableL1Bytes : chip.l1_bytes;
  s.step_ka = l1_for_ab / kDoubleBuffer / ((base_m + base_n) * s.base_k) / facts.a_bytes;
  if (s.step_ka == 0) {
    return Offer::No(absl::StrCat("one base_k=", s.base_k, " stage of A and B for block ", base_m,
                                  "x", base_n, " does not fit L1 twice"));
  }
  s.step_kb = s.step_ka;
  s.depth_a1 = s.step_ka * kDoubleBuffer;
  s.depth_b1 = s.step_kb * kDoubleBuffer;
  s.single_core_m = base_m;
  s.single_core_n = base_n;
  Offer offer;
  offer.plan = FinishAswtPlan(problem, facts, chip, s);
  absl::Status fits = tiling::CheckPlanFits(offer.plan, problem, chip);
  if (!fits.ok()) return Offer::No(std::string(fits.message()));
  offer.ok = true;
  offer.reason = absl::StrCat("base ", base_m, "x", base_n, "x", s.base_k, ", ", blocks,
                              " tiles on ", s.used_core_num, " cores");
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
  const ProblemFacts facts = tiling::DeriveFacts(problem);
  const emu::ChipModel model = emu::ChipModel::FromSpec(chip);
  const uint64_t tiles = CeilDiv(facts.m, base_m) * CeilDiv(facts.n, base_n);
  const double rounds = static_cast<double>(CeilDiv(tiles, chip.aic_num));
  const double cube =
      static_cast<double>(model.MmadCycles(base_m, base_n, facts.k, problem.dtype_a, problem.hf32));
  const double in_bytes =
      static_cast<double>((base_m * facts.a_bytes + base_n * facts.b_bytes) * facts.k);
  const double port = in_bytes / emu::kMte2PortBytesPerCycle;
  const double active = static_cast<double>(std::min<uint64_t>(tiles, chip.aic_num));
  const double l2_share = active * in_bytes / static_cast<double>(model.l2_bytes_per_cycle);
  const double out =
      static_cast<double>(base_m * base_n * facts.c_bytes) / emu::kFixpipeBytesPerCycle;
  const double per_round = std::max(std::max(cube, port), std::max(l2_share, out));
  const double ddr_floor =
      static_cast<double>(facts.m * facts.k * facts.a_bytes + facts.k * facts.n * facts.b_bytes) /
      static_cast<double>(model.ddr_bytes_per_cycle);
  return std::max(rounds * per_round, ddr_floor);
}

uint64_t EstimateBlockOps(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                          uint64_t base_m, uint64_t base_n) {
  const ProblemFacts facts = tiling::DeriveFacts(problem);
  // The streamed plan's shape as far as the work estimate reads it: one
  // base block per L1 tile.
  TilingPlan sketch;
  sketch.kernel_type = tiling::KernelType::kAicOnly;
  sketch.key.model = tiling::KernelModel::kBasic;
  sketch.block.base_m = sketch.block.m_l1 = base_m;
  sketch.block.base_n = sketch.block.n_l1 = base_n;
  sketch.block.base_k =
      std::max<uint64_t>(kBlock16, CannBaseK(problem, facts, chip, base_m, base_n));
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
  const ProblemFacts facts = tiling::DeriveFacts(problem);
  const uint64_t footprint = facts.m * facts.k * facts.a_bytes + facts.k * facts.n * facts.b_bytes +
                             facts.m * facts.n * facts.c_bytes;
  if (footprint <= chip.l2_bytes) {
    return absl::StrCat("A, B and C (", Bytes(footprint), ") fit L2 (", Bytes(chip.l2_bytes),
                        "): every re-read hits L2 whatever the window");
  }
  return "";
}

std::vector<uint32_t> WindowCandidates(const TilingPlan& base, const MatmulProblem& problem,
                                       const tiling::ChipSpec& chip) {
  const ProblemFacts facts = tiling::DeriveFacts(problem);
  const uint64_t m_l1 = std::max<uint64_t>(1, base.block.m_l1);
  const uint64_t n_l1 = std::max<uint64_t>(1, base.block.n_l1);
  const uint64_t m_tiles = CeilDiv(facts.m, m_l1);
  const uint64_t cores = std::max<uint32_t>(1, base.block_dim);
  // One window pass re-reads its W rows of A for every column of tiles, so
  // they should stay in L2 while the pass streams the B columns the cores
  // hold in flight and writes W rows of C (which the L2 also absorbs).
  const uint64_t row_bytes = m_l1 * facts.k * facts.a_bytes + m_l1 * facts.n * facts.c_bytes;
  const uint64_t col_bytes = n_l1 * facts.k * facts.b_bytes;
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
  const ProblemFacts facts = tiling::DeriveFacts(problem);
  const uint64_t limit = ResidentLimitBytes(chip);
  // Band edge: rows of A (a_side) or columns of B, each the whole K deep.
  const uint64_t edge = a_side ? facts.m : facts.n;
  const uint64_t elem = a_side ? facts.a_bytes : facts.b_bytes;
  const uint64_t line_bytes = CeilAlign(facts.k, kBlock16) * elem;
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
                                  Bytes(kBlock16 * line_bytes), ") exceeds 3/4 of L1: K=", facts.k,
                                  " is too deep"));
  }
  // Balanced bands of base blocks of at most 256.
  const uint64_t bands = CeilDiv(edge, max_edge);
  const uint64_t target = CeilAlign(CeilDiv(edge, bands), kBlock16);
  uint64_t steps = CeilDiv(target, kBlock256);
  uint64_t band_base = CeilAlign(CeilDiv(target, steps), kBlock16);
  while (band_base * steps > max_edge) band_base -= kBlock16;
  const uint64_t band = band_base * steps;

  // The streamed side keeps CANN's block edge where L0C allows.
  const uint64_t other_dim = a_side ? facts.n : facts.m;
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
  const uint64_t base_k = CannBaseK(problem, facts, chip, base_m, base_n);
  if (base_k == 0) return Offer::No("no 16-deep base_k fits the L0A half");
  // The streamed operand: double-buffered stages of up to 4 base_k slices
  // in what the band leaves of L1.
  const uint64_t band_bytes = band * line_bytes;
  const uint64_t free_l1 = chip.l1_bytes - band_bytes - bias_l1;
  const uint64_t other_elem = a_side ? facts.b_bytes : facts.a_bytes;
  uint64_t stream_steps = 0;
  for (uint64_t s = 1; s <= kMaxStreamedKSteps; ++s) {
    if (kDoubleBuffer * s * base_k * other_base * other_elem <= free_l1) stream_steps = s;
  }
  if (stream_steps == 0) {
    return Offer::No(absl::StrCat("the ", Bytes(band_bytes), " band leaves ", Bytes(free_l1),
                                  " of L1, less than two stages of the streamed operand"));
  }

  CubeRunState s;
  tiling::ResetBase(facts, chip, s);
  s.base_m = base_m;
  s.base_n = base_n;
  s.base_k = base_k;
  const uint64_t k_slices = CeilDiv(CeilAlign(facts.k, kBlock16), base_k);
  if (a_side) {
    s.step_m = steps;
    s.step_ka = k_slices;
    s.step_kb = stream_steps;
    s.depth_a1 = steps * k_slices;
    s.depth_b1 = stream_steps * kDoubleBuffer;
    s.single_core_m = band;
    s.single_core_n = base_n;
  } else {
    s.step_n = steps;
    s.step_kb = k_slices;
    s.step_ka = stream_steps;
    s.depth_b1 = steps * k_slices;
    s.depth_a1 = stream_steps * kDoubleBuffer;
    s.single_core_m = base_m;
    s.single_core_n = band;
  }
  const uint64_t tiles = CeilDiv(edge, band) * other_tiles;
  s.used_core_num = std::min<uint64_t>(tiles, chip.aic_num);
  s.l0c_db = L0cDoubleBuffer(chip, base_m, base_n);
  s.ub_db = base_m * base_n * kFp32Bytes <= chip.ub_bytes ? kDoubleBuffer : 1;
  // Tail round: split the streamed side only, so every piece keeps the band
  // (CANN's full-load kernels do the same).
  const uint64_t tail = tiles <= chip.aic_num ? 0 : tiles % chip.aic_num;
  s.tail_m_cnt = 1;
  s.tail_n_cnt = 1;
  uint64_t& split = a_side ? s.tail_n_cnt : s.tail_m_cnt;
  const bool inner_is_split_axis = a_side ? !problem.trans_b : problem.trans_a;
  while (tail != 0 && (split + 1) * tail <= chip.aic_num &&
         (!inner_is_split_axis || CeilDiv(other_base, split) * other_elem > kTailInnerBytes)) {
    ++split;
  }

  Offer offer;
  offer.plan = FinishAswtPlan(problem, facts, chip, s);
  offer.plan.l1_residency = side;
  // Walk the tiles so that a core's consecutive units share a band: rows
  // first for an A band (window of one row), columns first for a B band (one
  // window holding every row).
  offer.plan.swat_window_rows =
      a_side ? 1 : static_cast<uint32_t>(CeilDiv(facts.m, offer.plan.block.m_l1));
  offer.plan.detail =
      absl::StrCat(name, " band of ", band, a_side ? " rows" : " columns", " x K=", facts.k, " (",
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
  const ProblemFacts facts = tiling::DeriveFacts(problem);
  absl::StatusOr<TilingPlan> plan = tiling::VectorMulStrategy().DoTiling(problem, facts, chip);
  if (!plan.ok()) return Offer::No(std::string(plan.status().message()));
  Offer offer;
  offer.ok = true;
  offer.plan = *std::move(plan);
  offer.plan.strategy = "TO_MUL";
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
