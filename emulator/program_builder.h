// The builder of the per-core instruction streams (program.h), shared by
// the files that write them: program.cc (the AIV streams and the assembly)
// and aic_program.cc (the AIC streams). Internal to `npu_emulator`.
#ifndef NPU_EMULATOR_PROGRAM_BUILDER_H_
#define NPU_EMULATOR_PROGRAM_BUILDER_H_

#include <cassert>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "emulator/program.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"

namespace npu::emu::internal {

using tiling::CoreKind;
using tiling::FullLoad;
using tiling::kFp32Bytes;
using tiling::Range;
using tiling::Schedule;
using tiling::UnitOp;
using tiling::WorkUnit;

using tiling::CeilDiv;

// Bytes of `elements` values of `bits` each, as stored (4-bit values two per
// byte).
inline uint64_t PackedBytes(uint64_t elements, uint64_t bits) {
  return CeilDiv(elements * bits, 8);
}

// One AIC core's instruction streams while they are written: the core's
// flags, its operand residency and the ping-pong positions.
struct AicCursor {
  CoreProgram program;
  // Bits per element of A and B (4-bit types pack two per byte) and bytes
  // per element of C.
  uint64_t a_bits = 0, b_bits = 0, c_bytes = 0;
  bool a_full = false, b_full = false;  // whole matrix resident (full load)
  // Partial residency (advisor plans): a band of A rows or B columns, the
  // whole K deep, stays in L1 while consecutive units of this core use it.
  bool a_band = false, b_band = false;
  bool a_resident = false, b_resident = false;
  uint64_t l0c_db = 1;
  uint64_t l1_stages_a = 2, l1_stages_b = 2, l0_stages = 2;
  bool unit_flag = false;
  // The unit is a further batch of the previous unit's tile
  // (Schedule::batches_share_loads): its L1 reads ride on that tile's
  // transfers and pay no instruction cost of their own.
  bool tile_continues = false;
  uint64_t base_m = 0, base_n = 0, base_k = 0, k_l1 = 0;
  uint64_t k_l1_b = 0;  // B's K per L1 stage (k_l1 unless the kernel says)
  // B's current L1 stage: where it ends in K, its slot, stages so far.
  uint64_t b_stage_end = 0;
  uint32_t b_buf = 2;
  uint64_t b_count = 0;
  uint64_t uf_k = 0;  // UnitFlag: the K step whose MMAD sees the FIXPIPE issued
  // L1 stages: A ping / pong, B ping / pong (the Stream-K kernel's layout,
  // seeds/000 3.1), each released by MTE1 and filled by MTE2; a single
  // buffer uses the ping of each.
  uint32_t l1_free[4] = {}, l1_ready[4] = {};
  uint32_t l0_free[2] = {}, l0_ready[2] = {};
  std::vector<uint32_t> l0c_free, l0c_ready;
  // UnitFlag: set when the MMAD starts by which the scalar unit has issued
  // the block's FIXPIPE.
  uint32_t uf_issued = 0;
  uint32_t full_flag = 0;
  bool full_pending = false;  // the first MTE1 still has to wait for it
  // MX scales: the current scale stage (where it ends in K, its buffer,
  // stages so far) and its buffers' flags.
  uint64_t scale_k_l1 = 0;
  uint64_t scale_stage_end = 0;
  uint32_t scale_buf = 0;
  uint64_t scale_count = 0;
  uint32_t scale_free[2] = {}, scale_ready[2] = {};
  // The L1 bank mask of each buffer (L1Buffer order; 0 unknown).
  std::array<uint8_t, kL1Buffers> bank_mask{};
  // A launch with more blocks than cores: the block of the core's previous
  // unit, and the flag its last FIXPIPE sets.
  int64_t block = -1;
  bool ends_block = false;  // the current unit is its block's last on the core
  uint32_t block_done = 0;
  // A relay kernel whose AIC waits for a slot: the next MTE2 op (in the
  // scalar unit's order, after the FIXPIPE) waits until the FIXPIPE was
  // issued.
  uint32_t issue_gate = 0;
  bool gate_pending = false;
  // The resident band: MTE2 refills it when a unit needs another band, once
  // MTE1 has released the previous one (a single L1 slot: two bands never
  // fit at once).
  uint32_t band_free = 0, band_ready = 0;
  bool band_pending = false;
  bool band_release = false;    // the current unit releases its band
  uint64_t unit_mte1_left = 0;  // MTE1 ops of the unit still to emit
  uint64_t l1_count = 0, l0_count = 0, l0c_count = 0;
};

// A base block of C inside a unit.
struct BlockAt {
  uint64_t m = 0, n = 0;    // origin
  uint64_t sm = 0, sn = 0;  // extent
  bool last = false;        // the unit's last block
};

// The flags of one AIV core's single UB buffer: loads -> vector -> store.
struct AivFlags {
  uint32_t in_ready = 0;   // MTE2 -> V
  uint32_t out_ready = 0;  // V -> MTE3
  uint32_t ub_free = 0;    // MTE3 -> MTE2
};

class Builder {
 public:
  Builder(const Schedule& schedule, const tiling::TilingPlan& plan,
          const tiling::MatmulProblem& problem, const ChipModel& chip,
          const ProgramOptions& options)
      : schedule_(schedule), plan_(plan), problem_(problem), chip_(chip), options_(options) {}

  absl::StatusOr<ProgramSet> Build();

 private:
  // A flag of `core`'s own pipes, named "<kind> <core> <what>[ <event>]"
  // (FlagName()) when a report needs it.
  uint32_t NewFlag(CoreKind kind, uint32_t core, const char* what, int32_t event = -1,
                   uint32_t initial_sets = 0) {
    FlagInfo& flag = set_.flags.emplace_back();
    flag.what = what;
    flag.kind = kind;
    flag.core = core;
    flag.event = event;
    flag.initial_sets = initial_sets;
    return static_cast<uint32_t>(set_.flags.size() - 1);
  }
  // A flag between cores, named up front.
  uint32_t NewCrossCoreFlag(std::string name) {
    set_.flags.emplace_back().name = std::move(name);
    return static_cast<uint32_t>(set_.flags.size() - 1);
  }
  void Push(CoreProgram& core, Pipe pipe, Op op) {
    core.pipes[static_cast<int>(pipe)].push_back(op);
    ++set_.total_ops;
  }
  static void Wait(Op& op, uint32_t flag) {
    assert(op.n_waits < kMaxWaits);
    op.waits[op.n_waits++] = flag;
  }
  static void Set(Op& op, uint32_t flag) {
    assert(op.n_sets < kMaxSets);
    op.sets[op.n_sets++] = flag;
  }
  // Builds the programs of the `count` cores of `kind`; with `share`, one per
  // class of cores whose programs are identical (CoreClassKey()).
  absl::Status BuildCores(CoreKind kind, uint32_t count,
                          const std::vector<std::vector<const WorkUnit*>>& units, bool share);
  // What a core's program depends on: two cores of a kind with equal keys
  // get identical programs up to their flags' numbering.
  std::vector<uint64_t> CoreClassKey(CoreKind kind,
                                     const std::vector<const WorkUnit*>& units) const;
  absl::Status BuildAic(uint32_t core, const std::vector<const WorkUnit*>& units);
  // Steps of BuildAic(), on the core's cursor.
  AicCursor StartAic(uint32_t core, const std::vector<const WorkUnit*>& units);
  void SignalAiv(uint32_t core, Op& op) const;
  void EmitFullLoad(AicCursor& aic);
  void EmitBandLoad(AicCursor& aic, const std::vector<const WorkUnit*>& units, size_t u);
  uint64_t CountMte1Ops(const WorkUnit& unit) const;
  absl::Status EmitChunk(AicCursor& aic, const WorkUnit& unit, const BlockAt& block,
                         const std::vector<Range>& chunks, size_t ci);
  // Inlined into EmitChunk (its only caller, in aic_program.cc): one call
  // per L1 stage otherwise costs about 1% of a timing-only emulation.
  [[gnu::always_inline]] inline void EmitStage(AicCursor& aic, const BlockAt& block,
                                               const Range& chunk, uint64_t ks, uint64_t l0c,
                                               bool& first_step);
  void EmitOutput(AicCursor& aic, const WorkUnit& unit, const BlockAt& block, bool fp32_out,
                  uint64_t l0c, bool signal);
  // The AIV half of an output through UB: ReLU on the vector unit, then
  // MTE3 to GM, for AIV core `aiv` taking `rows` x `cols` of the block.
  void EmitUbEpilogue(uint32_t aiv, uint64_t rows, uint64_t cols);
  // MTE2's read of one operand's L1 stage: `rows` x `row_bytes` as stored
  // in GM (ND), or `nz_columns` fractal columns when stored FRACTAL_NZ.
  Op StageRead(uint64_t bytes, uint64_t bursts) const;
  uint64_t StageBursts(bool operand_a, uint64_t sm, uint64_t sn, uint64_t stage_k) const;
  // The transposed kernels: the rows of `block` whose start in y is not
  // 32-byte aligned (options_.pipeline.strided must be set).
  uint64_t UnalignedOutputRows(const BlockAt& block, uint64_t out_bytes) const;
  absl::Status BuildAiv(uint32_t core, const std::vector<const WorkUnit*>& units);
  // Steps of BuildAiv(): the GM -> UB loads of a unit (returning the vector
  // cycles that follow), then the loads, the vector op and the store.
  uint64_t ReduceLoads(const WorkUnit& unit, std::vector<Op>& loads) const;
  uint64_t VectorMulLoads(const WorkUnit& unit, std::vector<Op>& loads) const;
  void EmitAivUnit(CoreProgram& program, const WorkUnit& unit, std::vector<Op>& loads,
                   uint64_t vec_cycles, const AivFlags& flags);
  absl::Status CheckOps() const {
    if (options_.max_ops != 0 && set_.total_ops > options_.max_ops) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "emulation needs more than ", options_.max_ops, " pipe operations (work limit)"));
    }
    return absl::OkStatus();
  }

  const Schedule& schedule_;
  const tiling::TilingPlan& plan_;
  const tiling::MatmulProblem& problem_;
  const ChipModel& chip_;
  const ProgramOptions& options_;
  ProgramSet set_;
  std::vector<uint32_t> aic_sync_flags_;  // per AIV core
  uint32_t sync_all_ = 0;
  // Output through UB (PipelineConfig::output_through_ub): the two AIV
  // cores of each AIC, their programs and their UB flags.
  struct UbEpilogue {
    CoreProgram program;
    uint32_t ub_ready = 0;  // FIXPIPE -> AIV: a half tile is in UB
    uint32_t ub_free = 0;   // AIV MTE3 -> FIXPIPE: a UB stage is free again
    uint32_t vec_done = 0;  // V -> MTE3
    uint32_t x3_ready = 0;  // MTE2 -> V: x3's half tile is in UB
    uint32_t x3_free = 0;   // V -> MTE2: x3's buffer may be refilled
  };
  std::vector<UbEpilogue> ub_epilogues_;  // AIV core 2c and 2c + 1 serve AIC c
  // B through the AIVs (PipelineConfig::b_antiquant_passes): the pair of
  // AIVs of AIC c, timed as one program (AIV 2c) over half of each stage,
  // and its flags.
  struct AntiquantAiv {
    CoreProgram program;
    uint32_t b_ready = 0;   // AIV MTE3 -> AIC MTE1: a B stage is in L1
    uint32_t b_free = 0;    // AIC MTE1 -> AIV MTE2: an L1 stage of B is free
    uint32_t in_ready = 0;  // MTE2 -> V
    uint32_t vec_done = 0;  // V -> MTE3
  };
  std::vector<AntiquantAiv> antiquant_;  // indexed by AIC core
  // C relayed through GM (PipelineConfig::relay): per AIC, the programs and
  // flags of its AIVs, and the passes dealt so far (alternate split).
  struct RelayAiv {
    CoreProgram program;
    uint32_t tile_ready = 0;               // AIC FIXPIPE -> AIV: a tile is in its slot
    uint32_t release = 0;                  // AIV MTE2 -> AIC FIXPIPE: the AIV has read its share
    uint32_t in_ready = 0, in_free = 0;    // MTE2 <-> V, two UB buffers
    uint32_t out_ready = 0, out_free = 0;  // V <-> MTE3, two UB buffers
  };
  struct RelayCore {
    std::vector<RelayAiv> aivs;
    uint64_t passes = 0;
  };
  std::vector<RelayCore> relay_;  // indexed by AIC core
  // The AIVs of AIC `core` read, process and store `block`, the tile the
  // FIXPIPE has just written.
  void EmitRelayTile(uint32_t core, const BlockAt& block);
  // The first MTE2 op of a unit's stage: waits for a pending scalar gate.
  void GateLoad(AicCursor& aic, Op& op) const {
    if (!aic.gate_pending) return;
    Wait(op, aic.issue_gate);
    aic.gate_pending = false;
  }
  // The AIV pair of AIC `core` dequantizes `elements` weight elements of one
  // B stage into L1.
  void EmitAntiquantStage(uint32_t core, uint64_t elements);
};

}  // namespace npu::emu::internal

#endif  // NPU_EMULATOR_PROGRAM_BUILDER_H_
