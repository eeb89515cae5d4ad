// Per-core instruction streams built from a schedule.
//
// The device runs one scalar unit per core that issues instructions into
// in-order pipes; pipes synchronise through flags (SetFlag / WaitFlag inside
// a core, CrossCoreSetFlag between an AIC and its AIVs, SyncAll among the
// AIVs). `BuildPrograms()` writes, for every core, the instruction stream of
// each pipe the way CANN's arch35 kernels do: L1 ping-pong of A and B stages
// (MTE2 <-> MTE1), L0 ping-pong (MTE1 <-> CUBE), the L0C hand-off to FIXPIPE,
// the AIC -> AIV signal and SyncAll of the Stream-K reduction (buffers.h
// checks first that every buffer the plan asks for fits the chip).
// timing_model.h executes the streams in simulated time.
//
// Cores that share no flag with another core run independently (the timing
// of an op depends on its own core only, timing_model.h), so two such cores
// whose instruction streams are identical have identical timelines. When no
// flag crosses cores, `BuildPrograms()` writes one program per class of
// identical cores and lists the class's other cores as its replicas; the
// timing model simulates the program once and reports it for every core.
#ifndef NPU_EMULATOR_PROGRAM_H_
#define NPU_EMULATOR_PROGRAM_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "emulator/chip.h"
#include "server/tiling/schedule.h"
#include "server/tiling/transpose/transpose_parse.h"
#include "server/tiling/types.h"

namespace npu::emu {

// Kernel bugs the emulator can reproduce on purpose (seeds/000 section 7).
// Each one must be reported, never silently produce a result.
struct FaultInjection {
  // Problem 1: workspace offset from the global tile index.
  bool workspace_offset_from_tile_idx = false;
  // Problem 2: idle AIC cores return without signalling their AIV cores.
  bool idle_aic_skips_sync_flag = false;
  // Problem 3: cmatrixInitVal fixed to false, so L0C is never cleared at the
  // first K step of a unit.
  bool l0c_never_initialized = false;
  // Problem 4: the Stream-K schedule run on a shape without a tail round.
  bool stream_k_without_tail = false;
  // Problem 5: base_k doubled past CalBaseK's L0A limit.
  bool oversized_base_k = false;
};

enum class OpKind : uint8_t {
  kCycles,   // fixed cycles on the pipe (cube, vector, MTE1)
  kGmRead,   // bytes read from GM through L2 (MTE2)
  kGmWrite,  // bytes written to GM (FIXPIPE, MTE3)
};

// Which traffic counter an op feeds.
enum class Traffic : uint8_t { kNone, kL1ToL0, kL0cOut, kUbIn, kUbOut };

inline constexpr int kMaxWaits = 4;
inline constexpr int kMaxSets = 3;

struct Op {
  OpKind kind = OpKind::kCycles;
  Traffic traffic = Traffic::kNone;
  bool workspace = false;  // partial-sum traffic
  uint8_t n_waits = 0, n_sets = 0;
  // Bit s set: flag sets[s] is set when the op starts rather than when it
  // ends (what a FIXPIPE under UnitFlag waits for: the tile's last MMAD
  // under way).
  uint8_t sets_at_start = 0;
  // The last wait bounds the op's end, not its start: the op runs once the
  // other waits passed, and ends no earlier than `tail_cycles` after that
  // flag (UnitFlag: FIXPIPE drains L0C as the last MMAD finishes it).
  bool last_wait_bounds_end = false;
  // A GM read nothing prefetched (a single-buffered operand, a one-off
  // load): it streams at the latency-bound rate (chip.h).
  bool cold = false;
  // The 950 L1 banks the op touches (bit b: bank b): MTE2's write of an L1
  // stage, MTE1's reads; 0 where the placement is unknown. An MTE1 op that
  // starts while its core's MTE2 writes one of its banks is slowed
  // (chip.h kL1BankConflictSlowdown).
  uint8_t l1_banks = 0;
  std::array<uint32_t, kMaxWaits> waits{};  // flags waited before the op starts
  std::array<uint32_t, kMaxSets> sets{};    // flags set when it completes
  // kCycles: the duration. Transfers: fixed cycles besides the bytes
  // (instruction cost, bursts, unaligned rows); MTE2 adds the GM latency
  // when it starts from idle and bytes over its share of the bandwidth.
  uint64_t cycles = 0;
  uint64_t tail_cycles = 0;
  uint64_t bytes = 0;  // transfers; MTE1 bytes for kCycles on MTE1
  uint64_t port_bytes_per_cycle = 0;
  uint64_t macs = 0;  // useful MACs of a cube op
};

struct CoreProgram {
  tiling::CoreKind kind = tiling::CoreKind::kAic;
  uint32_t core = 0;
  uint32_t units = 0;
  std::array<std::vector<Op>, kPipeCount> pipes;
  // Other cores of the same kind that run exactly this program (with flags
  // of their own, shared with no other core), in increasing order: simulated
  // once, reported for each.
  std::vector<uint32_t> replicas;
};

struct FlagInfo {
  // A core's own flag is named only when a report needs it (FlagName()):
  // "<AIC|AIV> <core> <what>[ <event>]", e.g. "AIC 3 MTE2_MTE1 event 1".
  // The few flags between cores carry their whole name, e.g.
  // "AIC_SYNC_AIV to AIV 6 from AIC 3".
  const char* what = "";
  tiling::CoreKind kind = tiling::CoreKind::kAic;
  uint32_t core = 0;
  int32_t event = -1;  // appended when >= 0
  std::string name;    // set for flags between cores
  uint32_t initial_sets = 0;
  bool barrier = false;  // SyncAll: a wait passes once `participants` sets arrived
  uint32_t participants = 0;
};

// The printable name of `flag`, as deadlock reports show it.
std::string FlagName(const FlagInfo& flag);

struct ProgramSet {
  // One program per core, or per class of identical cores (replicas); AIC
  // cores first, then AIV, each kind in core order.
  std::vector<CoreProgram> cores;
  std::vector<FlagInfo> flags;
  // Operations of every core, replicas included.
  uint64_t total_ops = 0;
};

// The L1 buffers of a kernel, in PipelineConfig::l1_banks order.
enum class L1Buffer : uint8_t {
  kAPing,
  kAPong,
  kBPing,
  kBPong,
  kScaleAPing,
  kScaleAPong,
  kScaleBPing,
  kScaleBPong
};
inline constexpr int kL1Buffers = 8;
inline constexpr uint8_t kL1BankUnknown = 0xFF;
constexpr std::array<uint8_t, kL1Buffers> UnplacedL1() {
  return {kL1BankUnknown, kL1BankUnknown, kL1BankUnknown, kL1BankUnknown,
          kL1BankUnknown, kL1BankUnknown, kL1BankUnknown, kL1BankUnknown};
}

// How the AIVs of a mix kernel split the passes over a tile.
enum class RelaySplit : uint8_t {
  kHalves,     // each AIV its half of the tile's rows
  kSingle,     // one AIV runs every pass
  kAlternate,  // two AIVs alternate passes, counted across the core's tiles
};

// A mix kernel's epilogue on the AIV, fed through GM: the AIC's FIXPIPE
// writes each base tile (the raw accumulator or C) to a GM slot and signals
// its AIVs; they read it back pass by pass (pass_rows x pass_cols), run
// `vector_passes` vector instructions over each element, and store C; each
// AIV releases the slot once its reads of the tile are done. With `slots`
// > 0 the AIC writes tile i to slot i % slots and from tile `slots` on
// waits for the release first, its scalar unit issuing nothing after the
// write until then (the kernel's CrossCoreWaitFlag).
struct RelayEpilogue {
  uint32_t aivs = 0;  // AIVs per AIC: 1 or 2 (0: no relay)
  RelaySplit split = RelaySplit::kHalves;
  uint32_t slots = 0;
  uint64_t pass_rows = 0, pass_cols = 0;  // 0: the AIV's whole share
  uint32_t vector_passes = 0;
  // Bytes per element the FIXPIPE writes and the AIV reads back.
  uint64_t in_bytes_per_element = 4;
  // Per tile, the per-column scale the AIV loads (4 bytes per column), and
  // per pass the per-row (per-token) scale (4 bytes per row).
  bool column_scale = false;
  bool row_scale = false;
};

// How a kernel buffers and drains its tiles: what the AIC streams' flags
// look like. CANN's plans derive it from the tiling (PipelineForPlan()); a
// hand-written kernel states it (kernel_schedule.h).
struct PipelineConfig {
  uint32_t l1_stages_a = 2;  // L1 buffers of A: 1 (load, use, reload) or 2 (ping-pong)
  uint32_t l1_stages_b = 2;
  uint32_t l0_stages = 2;   // L0A / L0B halves
  uint32_t l0c_stages = 1;  // output tiles in flight in L0C
  // B's K per L1 stage when it differs from A's (schedule.k_l1); 0: the same.
  uint64_t k_l1_b = 0;
  // FIXPIPE drains L0C while the tile's last MMAD still runs (UnitFlag).
  bool unit_flag = false;
  // B stored FRACTAL_NZ in GM: its L1 loads need no ND -> NZ conversion.
  bool b_nz = false;
  // C leaves through the AIV's UB (FIXPIPE L0C -> UB, AIV MTE3 UB -> GM)
  // instead of straight from FIXPIPE to GM.
  bool output_through_ub = false;
  // What each AIV does to its half of a tile in UB (output_through_ub):
  // vector passes over its fp32 elements, and the bytes per element of an
  // extra operand (FusedMatMul's x3) it reads from GM first.
  uint32_t ub_vector_passes = 2;
  uint64_t ub_x3_bytes_per_element = 0;
  // B reaches L1 through the AIVs (WeightQuantBatchMatmulV2's antiquant):
  // for each L1 stage of B the AIC's two AIVs read the weight from GM at
  // its stored width (b_antiquant_bits per element), run this many vector
  // passes over their halves of it and write it to L1 in A's dtype, then
  // hand it to the AIC over a cross-core flag; the cube waits for it and
  // releases the L1 stage back to them. 0: B is read by the AIC's MTE2.
  uint32_t b_antiquant_passes = 0;
  uint64_t b_antiquant_bits = 0;
  // MX (QuantBatchMatmulV3 with e8m0 scales): the kernel moves scaleA and
  // scaleB (one byte per 32 K values of each row, chip.h kMxScaleGroupK)
  // from GM to L1 in stages of `scale_k_l1` K with `scale_stages` buffers
  // each (0: no scales), and with every K step from L1 to L0A_MX / L0B_MX
  // (LOAD_MX). scaleB is stored [k / 64, n, 2] when `scale_b_kn` (B not
  // transposed), else [n, k / 64, 2]; scaleA [m, k / 64, 2]. A resident A
  // (L1Residency::kABand) keeps its scales for the whole K too.
  uint64_t scale_k_l1 = 0;
  uint32_t scale_stages = 2;
  bool scale_b_kn = false;
  // The 950 L1 bank of each buffer (L1Buffer order), or kL1BankUnknown
  // where the kernel leaves the placement to the compiler: an MTE1 read of
  // a buffer whose bank MTE2 is writing slows (chip.h).
  std::array<uint8_t, kL1Buffers> l1_banks = UnplacedL1();
  // A launch of more blocks than cores (round-robin blocks): the number of
  // blocks, unit u of a core belonging to block tile_idx % launch_blocks;
  // 0 when every core runs one block. A core starts a block once its
  // previous block has ended and its hardware and software init are done.
  uint32_t launch_blocks = 0;
  // A grouped GEMM whose groups each have their own B: units carry their
  // group in WorkUnit::batch, and B's GM panels are the group's.
  bool b_per_group = false;
  // C relayed to the AIV through GM (mix kernels: a dequantizing or GELU
  // epilogue on the AIV); `relay.aivs` 0 when there is none.
  RelayEpilogue relay;
  // The transposed batch matmuls' GM layouts (x1 read and y written through
  // their perms): their transfers are charged by the contiguous runs of the
  // stored tensors, a run per burst, and a y row that starts off a 32-byte
  // boundary costs FIXPIPE its unaligned-row cycles. Unset for the other
  // kernels (one burst per stored row of a tile, rows unaligned when C's
  // row pitch is).
  std::optional<tiling::transpose::TransposeLayout> strided;
};

// The pipeline CANN's kernel runs for `plan`: L1 and L0 ping-pong, l0cDB
// output tiles, no UnitFlag.
PipelineConfig PipelineForPlan(const tiling::TilingPlan& plan);

// Vector passes of FusedMatMul's AIV epilogues over each fp32 element of C
// in UB (an estimate from the ops each runs, not a calibrated figure):
// add / mul cast x3 to fp32, apply the op and cast the result; the GELUs
// evaluate their erf / tanh polynomial (about a dozen multiply-adds).
inline constexpr uint32_t kAddMulVectorPasses = 3;
// WeightQuantBatchMatmulV2's antiquant passes over each weight element on
// the AIV: the cast to x's dtype and the scale's multiply, and the offset's
// add when there is one (the arch35 kernels' MicroAPI Cast / Add / Mul).
inline constexpr uint32_t kAntiquantVectorPasses = 2;
inline constexpr uint32_t kGeluErfVectorPasses = 16;
inline constexpr uint32_t kGeluTanhVectorPasses = 12;

// Vector instructions the dequantizing epilogues run over each element of
// C in UB, counted from the kernels' data flow (asc-devkit
// quant_group_matmul_high_performance README: AscendDequant, the per-token
// Mul with its broadcast, FasterGelu, Cast) and timed at the chip's vector
// rate (chip.h ArchTiming::vector_fp32_lanes, which the same README's aiv_vec
// columns set): the int32 -> fp32 conversion with the per-column scale
// (AscendDequant: two), the per-token scale (its per-row broadcast and the
// Mul: two), the bias (one), FasterGelu (x / (1 + exp(-1.702 x)): Muls, Exp,
// Adds, Div: four), the cast to C (one).
inline constexpr uint32_t kDequantVectorPasses = 2;
inline constexpr uint32_t kPerTokenVectorPasses = 2;
inline constexpr uint32_t kBiasVectorPasses = 1;
inline constexpr uint32_t kFasterGeluVectorPasses = 4;
inline constexpr uint32_t kCastVectorPasses = 1;
// GroupedMatmul's activations in its quant mix kernel, counted from its
// vector function (ops-transformer gqmm_mix_online_dynamic.h): ReLU one
// instruction; SiLU and FastGelu x / (exp(a x) + 1), a multiply, Exp, an
// add, a divide (as FasterGelu above); GELU tanh the same after x^3 (two
// multiplies), an axpy and a multiply.
inline constexpr uint32_t kReluVectorPasses = 1;
inline constexpr uint32_t kSigmoidGateVectorPasses = 4;
inline constexpr uint32_t kGeluTanhGateVectorPasses = 7;
// GroupedMatmul's weight-quant kernels with 8-bit x, counted from their
// vector functions (ops-transformer gmm/grouped_matmul/op_kernel/arch35/
// weight_quant_basic_block/): A8W4 widens each int4 weight element into L1
// with a cast to float16, the group scale's multiply and a cast to int8
// (basic_block_vf_nz.h AntiQuantS8S4NzKnGroupVf: three) and dequantizes
// each element of C in UB with the int32 -> fp32 cast, the scale's and the
// per-token scale's multiplies (the per-token value a broadcast load) and
// the cast to y (anti_quant_y_vf.h AntiQuantYB32: four; its bias add is
// kBiasVectorPasses); MX-A8W4 rewrites each float4 code as float8 with two
// shifts right, one left, a select and an and (basic_block_vf_mx.h
// AntiQuantMxA8W4NzNkVf: five) and dequantizes in the cube and the fixpipe.
// Like the other passes they are timed at the fp32 lane rate.
inline constexpr uint32_t kA8W4AntiquantVectorPasses = 3;
inline constexpr uint32_t kA8W4DequantVectorPasses = 4;
inline constexpr uint32_t kMxA8W4AntiquantVectorPasses = 5;
// The per-block kernel scales and adds every K group's partial (two passes
// per group) before its final cast.
inline constexpr uint32_t kQuantPerBlockPassesPerGroup = 2;

// PipelineForPlan() for a BatchMatMulV3 / FusedMatMul `problem`: C goes
// through the two AIVs' UB when FusedMatMul's epilogue runs on the AIV
// (add, mul, gelu_erf, gelu_tanh: mixed kernels,
// matmul/fused_mat_mul/op_kernel/arch35/fused_mat_mul_tilingkey.h) or the
// plan's L0C2OUT is ND_FIXPIPE_1_2 (the fixpipe applies ReLU / the fp32
// cast and the AIVs only copy out). For QuantBatchMatmulV3, C goes through
// UB in the kernels with a vector epilogue (mixed kernels other than
// Stream-K's, whose AIVs reduce the partial sums instead); the cube-only
// kernels dequantize in FIXPIPE at no extra pass. GroupedMatmul's kernels
// take the same pipes by path: the quant path's vector and per-block
// kernels through UB, the weight-quant kernels' antiquant on the AIVs.
// MatMulV3 problems keep the pipeline above.
PipelineConfig PipelineForPlan(const tiling::TilingPlan& plan,
                               const tiling::MatmulProblem& problem);

struct ProgramOptions {
  PipelineConfig pipeline;
  FaultInjection faults;
  uint64_t max_ops = 0;  // 0: unlimited
  // Write one program per class of identical cores when no flag crosses
  // cores; off writes every core's own (the reference the shortcut is
  // tested against).
  bool share_identical_cores = true;
};

// Builds the instruction streams of every core. kResourceExhausted past
// `max_ops` operations of all cores (replicas count as the cores they
// stand for, so the verdict does not depend on sharing); kInternal reports a
// kernel hazard (L0C accumulated without initialisation).
absl::StatusOr<ProgramSet> BuildPrograms(const tiling::Schedule& schedule,
                                         const tiling::TilingPlan& plan,
                                         const tiling::MatmulProblem& problem,
                                         const ChipModel& chip, const ProgramOptions& options);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_PROGRAM_H_
