// A hand-written kernel's schedule, replayed instead of CANN's tiling.
//
// CANN's host tiling (server/tiling) decides one family of kernels. Kernel
// authors using catlass or the Ascend C Matmul API write others: a static
// core grid, round-robin tiles, catlass's identity swizzle, its ASWT
// scheduler, a Stream-K variant. `KernelSchedule` describes such a kernel by
// the facts its source fixes (tile shapes, buffering, the block scheduler),
// the way published measurements describe the kernels they time
// (bench/CALIBRATION.md), so the emulator can answer "what would my kernel's
// schedule cost on this chip" and check it computes C.
//
// `ValidateKernelSchedule()` checks every field against the problem and the
// chip (kInvalidArgument naming "kernel_schedule.<field>" and the limit, and
// nothing that overflows a buffer passes); `ExpandKernelSchedule()` turns a
// valid schedule into per-core work units with the scheduler's own index
// formulas, in the same `tiling::Schedule` form as CANN's plans, so the
// program builder, the timing model and the numerics run it unchanged.
// Part of `npu_emulator`.
#ifndef NPU_EMULATOR_KERNEL_SCHEDULE_H_
#define NPU_EMULATOR_KERNEL_SCHEDULE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/tiling/schedule.h"
#include "server/tiling/types.h"

namespace npu::emu {

// How the kernel hands C's tiles to its cores.
enum class KernelScheduleKind : uint8_t {
  // One core walks every L1 tile of C in `inner_order`.
  kSingleCore,
  // C cut into single_core_m x single_core_n blocks, numbered down the M
  // axis first (block b: m index b % m_blocks, n index b / m_blocks); block b
  // runs on core b % block_dim, in launch order. Inside a block the core
  // walks its L1 tiles in `inner_order`. With l2_split_rounds R > 1, C's M
  // range is cut into R consecutive parts of equal height (rounded up to
  // l1_m), each gridded this way in turn: part r's block b (global number
  // r * blocks per part + b) runs on core b % block_dim.
  kStaticGrid,
  // L1 tiles numbered row-major; core c takes tiles c, c + block_dim, ...
  kRoundRobinTiles,
  // catlass GemmIdentityBlockSwizzle<swizzle_offset, swizzle_direction>.
  kIdentitySwizzle,
  // An S-shaped window of `aswt_window` tile rows walked serpentine; the
  // last round's tiles re-split when tileNum % block_dim <= block_dim / 2.
  kAswt,
  // Data-parallel rounds of whole tiles, then the tail round's tiles split
  // along K `sk_k_splits` ways into fp32 partial sums that the AIV cores add.
  kStreamKDp,
  // The MX tutorial's and cann-samples' SWAT scheduler: tiles in windows of
  // w = min(aswt_window, m tiles) rows (the last window takes every
  // remaining row), m fastest inside a window, odd windows walking N
  // backwards; tile t on core t % block_dim. With tail_split [ms, ns], when
  // the last round holds tiles % block_dim != 0 tiles and
  // (tiles % block_dim) * ms * ns <= block_dim, each of its tiles is cut into
  // ms x ns pieces: block b takes the round's tile b / (ms * ns), piece
  // p = b % (ms * ns) at m part p % ms, n part p / ms.
  kSwat,
  // A grouped GEMM (group_m): each group's single_core_m x single_core_n
  // blocks numbered in `tile_numbering`, all groups' blocks numbered group
  // after group, core c taking blocks c, c + block_dim, ... (so one group's
  // remainder carries into the next); inside a block the core walks its L1
  // tiles in `inner_order`.
  kGroupedRoundRobin,
};

// Wire names: "single_core", "static_grid", "round_robin_tiles",
// "identity_swizzle", "aswt", "stream_k_dp", "swat", "grouped_round_robin".
std::string_view KernelScheduleKindName(KernelScheduleKind kind);
absl::StatusOr<KernelScheduleKind> ParseKernelScheduleKind(std::string_view name);

// Order of the L1 tiles inside a core's block: along N first (row-major) or
// down M first (column-major, the Matmul API's ORDER_M).
enum class TileOrder : uint8_t { kRowMajor, kColMajor };
// "row_major", "col_major".
std::string_view TileOrderName(TileOrder order);
absl::StatusOr<TileOrder> ParseTileOrder(std::string_view name);

// How round_robin_tiles and grouped_round_robin number C's tiles (blocks):
// row-major (m = t / n tiles), column-major (m = t % m tiles), or SWAT's
// windows (kind swat only, which always numbers this way).
enum class TileNumbering : uint8_t { kRowMajor, kColMajor, kSwatWindow };
// "row_major", "col_major", "swat_window".
std::string_view TileNumberingName(TileNumbering numbering);
absl::StatusOr<TileNumbering> ParseTileNumbering(std::string_view name);

// What happens to C on its way out of L0C.
enum class Epilogue : uint8_t {
  kNone,
  kReluGm,  // FIXPIPE applies ReLU while writing C to GM
  kReluUb,  // FIXPIPE writes C to the AIV's UB, the AIV applies ReLU and stores it
  // FIXPIPE writes the raw accumulator (int32 for integer inputs, fp32
  // otherwise) to a GM workspace slot; the AIV reads it back, dequantizes it
  // (the scale per column and, when the problem has one, the per-token scale
  // per row), casts it to C's type and stores it. A mix kernel.
  kDequantAiv,
  // kDequantAiv with a GELU after the dequantization.
  kDequantGeluAiv,
  // FIXPIPE writes C to the AIV's UB; the AIV applies GELU and stores it.
  kGeluUb,
  // FIXPIPE writes C (fp32 or C's type) to GM; the AIV reads it back (from
  // L2), applies GELU and writes it over.
  kGeluGm,
};
// "none", "relu_gm", "relu_ub", "dequant_aiv", "dequant_gelu_aiv",
// "gelu_ub", "gelu_gm".
std::string_view EpilogueName(Epilogue epilogue);
absl::StatusOr<Epilogue> ParseEpilogue(std::string_view name);
// Whether the AIV handles C after the cube (relu_ub and the four above).
bool EpilogueOnAiv(Epilogue epilogue);

// Where the 950's L1 buffers sit: L1 is two 256 KiB banks, and an MTE2 write
// slows an MTE1 read of the same bank (chip.h kL1BankConflictSlowdown).
enum class L1BankSplit : uint8_t {
  kUnspecified,  // placed by the compiler or the API: banks not modelled
  kPingPong,     // every operand's ping buffer in bank 0, its pong in bank 1
  kAB,           // A's and scaleA's buffers in bank 0, B's and scaleB's in bank 1
  kNone,         // A's and B's data buffers in bank 0, the scales in bank 1
};
// "", "ping_pong", "a_b", "none".
std::string_view L1BankSplitName(L1BankSplit split);
absl::StatusOr<L1BankSplit> ParseL1BankSplit(std::string_view name);

// Byte offsets in L1 of each operand's buffers (ping, then pong), where the
// kernel sets them; they decide the bank of each buffer (offset / 256 KiB)
// over l1_bank_split. Empty: not given.
struct L1Offsets {
  std::vector<uint64_t> a, b, scale_a, scale_b;
  bool empty() const { return a.empty() && b.empty() && scale_a.empty() && scale_b.empty(); }
};

// How a mix kernel's AIVs share the passes over a tile.
enum class AivSplit : uint8_t {
  kHalves,     // each of the AIC's AIVs takes its half of the tile's rows
  kSingle,     // one AIV runs every pass
  kAlternate,  // two AIVs take alternate passes (counted across the tiles)
};
// "halves", "single", "alternate".
std::string_view AivSplitName(AivSplit split);
absl::StatusOr<AivSplit> ParseAivSplit(std::string_view name);

// The most blocks a round_robin_tiles kernel may launch.
inline constexpr uint32_t kMaxKernelBlocks = 65535;

struct KernelSchedule {
  KernelScheduleKind kind = KernelScheduleKind::kSingleCore;
  // Blocks launched: 1..aic_num cube cores (1 for kSingleCore); up to
  // kMaxKernelBlocks for kRoundRobinTiles (see tile_numbering).
  uint32_t block_dim = 1;
  // L0 tile (elements): base_m x base_n outputs, base_k deep.
  uint64_t base_m = 0, base_n = 0, base_k = 0;
  // L1 tile: l1_m x l1_n outputs (multiples of the base tile), l1_k of K per
  // MTE2 transfer of each operand (a multiple of base_k: step_k x base_k).
  uint64_t l1_m = 0, l1_n = 0, l1_k = 0;
  // B's K per MTE2 transfer when it differs from A's (a multiple of
  // base_k). 0: l1_k if B's buffers fit in L1 beside A's, else the largest
  // l1_k / 2^i that does, as the Matmul API's MDL tiling fits stepKb to L1.
  uint64_t l1_kb = 0;
  // L1 buffers per operand: 1 (load, use, reload) or 2 (ping-pong).
  uint32_t depth_a1 = 2, depth_b1 = 2;
  // L0A / L0B ping-pong; L0C ping-pong (two output tiles in flight).
  bool l0_double_buffer = true;
  bool l0c_double_buffer = false;
  // UnitFlag: FIXPIPE drains L0C fractal by fractal while the last MMAD of
  // the tile still runs, instead of waiting for it to finish.
  bool unit_flag = false;
  // The Matmul API's MDL template: several K steps per MTE2 transfer (l1_k
  // above base_k). Recorded; the transfer size is l1_k either way.
  bool mdl = false;
  // Static grid: C's M range cut into this many rounds to keep the
  // operands in L2 (at most 64); 0 or 1 means none.
  uint32_t l2_split_rounds = 0;
  // B as stored in GM: ND, or FRACTAL_NZ (no ND -> NZ conversion on load).
  tiling::Format b_format = tiling::Format::kNd;
  Epilogue epilogue = Epilogue::kNone;
  // kStaticGrid: the block of one core; kSingleCore and kStaticGrid: the
  // order of the L1 tiles inside it.
  uint64_t single_core_m = 0, single_core_n = 0;
  TileOrder inner_order = TileOrder::kRowMajor;
  // kIdentitySwizzle: catlass's SwizzleOffset (>= 1) and SwizzleDirection
  // (0: along M, 1: along N).
  uint32_t swizzle_offset = 1, swizzle_direction = 0;
  // kAswt: tile rows per window (>= 1).
  uint32_t aswt_window = tiling::kCannSwatWindowRows;
  // kStreamKDp: the K splits of each tail tile (>= 2).
  uint32_t sk_k_splits = 2;
  // kRoundRobinTiles and kGroupedRoundRobin: how tiles (blocks) are
  // numbered. kRoundRobinTiles may launch more blocks than cores: block b
  // then runs tile b on core b % aic_num once the core's previous block has
  // finished (the runtime starts blocks on free cores).
  TileNumbering tile_numbering = TileNumbering::kRowMajor;
  // kSwat: the last round's re-split (1 x 1: none).
  uint32_t tail_split_m = 1, tail_split_n = 1;
  // A (and MX scaleA) stays in L1 for the whole K: loaded with a core's
  // first tile of a row band, reused by its later tiles of the band.
  bool full_load_a = false;
  // MX (e8m0 scales per 32 K values on both operands): K covered by one
  // scale transfer (clipped to K; 0: l1_k), and scale buffers in L1 per
  // operand (1 or 2). With full_load_a they describe scaleB; scaleA is
  // loaded once for all K.
  uint64_t scale_l1_k = 0;
  uint32_t scale_l1_buffers = 2;
  // Where the L1 buffers sit in the 950's two banks.
  L1BankSplit l1_bank_split = L1BankSplit::kUnspecified;
  L1Offsets l1_offsets;
  // Mix kernels: AIVs per AIC (1 or 2); 0 for a cube-only kernel (whose
  // relu_ub / gelu_ub epilogue uses the AIC's two AIVs).
  uint32_t aiv_per_aic = 0;
  // kDequantAiv, kDequantGeluAiv, kGeluGm: GM slots per core between AIC and
  // AIV. The AIC writes tile i to slot i % slots and, from tile `slots` on,
  // waits for the AIV to release the slot first (and issues nothing after
  // the write until then). 0: no slots, the AIC never waits.
  uint32_t workspace_slots = 0;
  // Rows x columns one AIV pass handles (0: the AIV's whole share of the
  // tile), and how the AIVs share the passes.
  uint64_t aiv_tile_rows = 0, aiv_tile_cols = 0;
  AivSplit aiv_split = AivSplit::kHalves;
  // kGroupedRoundRobin: the M rows of each group (summing to the problem's
  // m), and whether each group has its own B (the problem's B is then one
  // group's).
  std::vector<uint64_t> group_m;
  bool b_per_group = false;
};

// Whether `problem` is an MX one (QuantBatchMatmulV3 with float8_e8m0
// scales): its kernels load e8m0 scales per 32 K values of both operands.
bool IsMxProblem(const tiling::MatmulProblem& problem);

// Checks every field for `problem` on `chip`: kInvalidArgument naming
// "kernel_schedule.<field>", its value and the limit (zero or misaligned
// tiles, block_dim outside 1..aic_num, a field the schedule kind needs left
// unset, L0A / L0B / L0C / L1 / UB overflow with the bytes needed and had).
absl::Status ValidateKernelSchedule(const KernelSchedule& kernel,
                                    const tiling::MatmulProblem& problem,
                                    const tiling::ChipSpec& chip);

// B's K per MTE2 transfer: `l1_kb`, or when 0 the largest l1_k / 2^i
// (a multiple of base_k) whose depth_b1 buffers fit in L1 beside A's
// depth_a1 ones; l1_k when none does (ValidateKernelSchedule() then reports
// the overflow).
uint64_t KernelBStageK(const KernelSchedule& kernel, const tiling::MatmulProblem& problem,
                       const tiling::ChipSpec& chip);

// The K of one MX scale transfer: scale_l1_k (l1_k when 0), clipped to K.
uint64_t KernelScaleStageK(const KernelSchedule& kernel, const tiling::MatmulProblem& problem);

// Expands a schedule ValidateKernelSchedule() accepts into per-core work
// units: AIC units of one L1 tile (or, under kStreamKDp, a K slice of one)
// in each core's walking order, and the AIV reduction units of kStreamKDp.
// base_* and k_l1 of the result are the kernel's base tile and l1_k.
absl::StatusOr<tiling::Schedule> ExpandKernelSchedule(const KernelSchedule& kernel,
                                                      const tiling::MatmulProblem& problem,
                                                      const tiling::ChipSpec& chip);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_KERNEL_SCHEDULE_H_
