// The AIC streams of BuildPrograms(): L1 ping-pong of A and B stages
// (MTE2 <-> MTE1), L0 ping-pong (MTE1 <-> CUBE), the L0C hand-off to FIXPIPE
// and the signal to the AIV cores.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "emulator/program_builder.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/status_macros.h"

namespace npu::emu::internal {
namespace {

// MTE1's move of one base_k step of A (sm x bk) and B (bk x sn) from L1
// into L0A and L0B: two LoadData instructions at the architecture's rates.
Op L1ToL0Step(const ChipModel& chip, uint64_t sm, uint64_t sn, uint64_t bk, uint64_t a_bits,
              uint64_t b_bits) {
  Op mte1;
  mte1.traffic = Traffic::kL1ToL0;
  const uint64_t a = PackedBytes(sm * bk, a_bits), b = PackedBytes(bk * sn, b_bits);
  mte1.bytes = a + b;
  mte1.cycles = 2 * chip.arch.mte1_instruction_cycles +
                CeilDiv(a, chip.arch.mte1_l0a_bytes_per_cycle) +
                CeilDiv(b, chip.arch.mte1_l0b_bytes_per_cycle);
  return mte1;
}

// MTE1's LOAD_MX of one base_k step's scales: scaleA (sm x bk / 32 bytes)
// into L0A_MX and scaleB (bk / 32 x sn) into L0B_MX, two LoadData
// instructions at the MX load rate.
Op L1ToL0MxStep(const ChipModel& chip, uint64_t sm, uint64_t sn, uint64_t bk) {
  Op mte1;
  mte1.traffic = Traffic::kL1ToL0;
  const uint64_t groups = CeilDiv(bk, kMxScaleGroupK);
  mte1.bytes = (sm + sn) * groups;
  mte1.cycles = 2 * chip.arch.mte1_instruction_cycles +
                static_cast<uint64_t>(std::ceil(static_cast<double>(mte1.bytes) /
                                                std::max(1.0, chip.arch.mte1_mx_bytes_per_cycle)));
  return mte1;
}

// MX scale bytes of `rows` rows over `k` of K as stored: one byte per 32 K
// values, in pairs.
uint64_t ScaleBytes(uint64_t rows, uint64_t k) { return rows * CeilDiv(k, 2 * kMxScaleGroupK) * 2; }

// The cube's MMAD of one base_k step into L0C; its useful MACs feed the
// utilisation statistics.
Op MmadStep(const ChipModel& chip, const tiling::MatmulProblem& problem, uint64_t sm, uint64_t sn,
            uint64_t bk) {
  Op mmad;
  mmad.cycles = chip.arch.mmad_instruction_cycles +
                chip.MmadCycles(sm, sn, bk, problem.dtype_a, problem.hf32);
  mmad.macs = sm * sn * bk;
  return mmad;
}

}  // namespace

Op Builder::StageRead(uint64_t bytes, uint64_t bursts) const {
  Op load;
  load.kind = OpKind::kGmRead;
  load.port_bytes_per_cycle = 0;  // the timing model's MTE2 port
  load.bytes = bytes;
  load.cycles = chip_.arch.mte2_transfer_cycles +
                static_cast<uint64_t>(static_cast<double>(bursts) * chip_.arch.mte2_burst_cycles);
  return load;
}

uint64_t Builder::StageBursts(bool operand_a, uint64_t sm, uint64_t sn, uint64_t stage_k) const {
  // A contiguous run of GM per row of the stored tile: A [m, k] has a row
  // per m (per k when transposed), B [k, n] a row per k (per n when
  // transposed); NZ B holds each 16-wide fractal column contiguously.
  if (!operand_a && options_.pipeline.b_nz) return CeilDiv(sn, tiling::kBlock16);
  if (const auto& layout = options_.pipeline.strided) {
    // The transposed kernels: rows that follow each other in GM are one run.
    // x1's rows do when the stage holds the whole K of a [batch, m, k] x1
    // (or of one batch); a [1, 0, 2] x1's rows sit batch * k apart.
    if (operand_a) {
      const bool adjacent = stage_k == layout->k && (!layout->x1_batch_inner || layout->batch == 1);
      return adjacent ? 1 : sm;
    }
    if (layout->x2_transposed) return stage_k == layout->k ? 1 : sn;
    return sn == layout->n ? 1 : stage_k;
  }
  if (operand_a) return problem_.trans_a ? stage_k : sm;
  return problem_.trans_b ? sn : stage_k;
}

uint64_t Builder::UnalignedOutputRows(const BlockAt& block, uint64_t out_bytes) const {
  const tiling::transpose::TransposeLayout& layout = *options_.pipeline.strided;
  // y's rows of one batch sit YRowPitch() apart from the batch's offset.
  const uint64_t b = block.m / layout.m, i = block.m % layout.m;
  const uint64_t start = layout.YOffset(b, i, block.n) * out_bytes;
  const uint64_t pitch = layout.YRowPitch() * out_bytes;
  if (pitch % 32 == 0) return start % 32 == 0 ? 0 : block.sm;
  uint64_t rows = 0;
  for (uint64_t r = 0; r < block.sm; ++r) rows += (start + r * pitch) % 32 != 0 ? 1 : 0;
  return rows;
}

AicCursor Builder::StartAic(uint32_t core, const std::vector<const WorkUnit*>& units) {
  AicCursor aic;
  aic.program.kind = CoreKind::kAic;
  aic.program.core = core;
  aic.program.units = static_cast<uint32_t>(units.size());
  aic.a_bits = tiling::DataTypeBits(problem_.dtype_a);
  // B in L1 is x's dtype when the AIVs dequantize it there.
  aic.b_bits = tiling::DataTypeBits(options_.pipeline.b_antiquant_passes > 0 ? problem_.dtype_a
                                                                             : problem_.dtype_b);
  aic.c_bytes = tiling::DataTypeBytes(problem_.dtype_c);
  aic.a_full = schedule_.full_load == FullLoad::kA || schedule_.full_load == FullLoad::kAB;
  aic.b_full = schedule_.full_load == FullLoad::kB || schedule_.full_load == FullLoad::kAB;
  aic.a_band = schedule_.l1_residency == tiling::L1Residency::kABand;
  aic.b_band = schedule_.l1_residency == tiling::L1Residency::kBBand;
  aic.a_resident = aic.a_full || aic.a_band;
  aic.b_resident = aic.b_full || aic.b_band;
  const PipelineConfig& pipe = options_.pipeline;
  aic.l0c_db = std::max<uint32_t>(1, pipe.l0c_stages);
  aic.l1_stages_a = std::clamp<uint32_t>(pipe.l1_stages_a, 1, 2);
  aic.l1_stages_b = std::clamp<uint32_t>(pipe.l1_stages_b, 1, 2);
  aic.l0_stages = std::clamp<uint32_t>(pipe.l0_stages, 1, 2);
  aic.unit_flag = pipe.unit_flag;
  aic.base_m = schedule_.base_m;
  aic.base_n = schedule_.base_n;
  aic.base_k = schedule_.base_k;
  aic.k_l1 = std::max(schedule_.k_l1, aic.base_k);
  aic.k_l1_b = pipe.k_l1_b == 0 ? aic.k_l1 : std::max<uint64_t>(pipe.k_l1_b, aic.base_k);
  for (int i = 0; i < 4; ++i) {
    aic.l1_free[i] = NewFlag(CoreKind::kAic, core, "MTE1_MTE2 event", i, 1);
    aic.l1_ready[i] = NewFlag(CoreKind::kAic, core, "MTE2_MTE1 event", i);
  }
  for (int i = 0; i < 2; ++i) {
    aic.l0_free[i] = NewFlag(CoreKind::kAic, core, "M_MTE1 event", i, 1);
    aic.l0_ready[i] = NewFlag(CoreKind::kAic, core, "MTE1_M event", i);
  }
  if (aic.unit_flag) aic.uf_issued = NewFlag(CoreKind::kAic, core, "UnitFlag FIXPIPE issued");
  aic.scale_k_l1 = pipe.scale_k_l1;
  if (aic.scale_k_l1 > 0) {
    for (int i = 0; i < 2; ++i) {
      aic.scale_free[i] = NewFlag(CoreKind::kAic, core, "MTE1_MTE2 scale event", i, 1);
      aic.scale_ready[i] = NewFlag(CoreKind::kAic, core, "MTE2_MTE1 scale event", i);
    }
  }
  for (int i = 0; i < kL1Buffers; ++i) {
    aic.bank_mask[i] =
        pipe.l1_banks[i] == kL1BankUnknown ? 0 : static_cast<uint8_t>(1u << pipe.l1_banks[i]);
  }
  if (pipe.launch_blocks > 0) {
    aic.block_done = NewFlag(CoreKind::kAic, core, "block ended");
  }
  if (pipe.relay.aivs > 0 && pipe.relay.slots > 0) {
    aic.issue_gate = NewFlag(CoreKind::kAic, core, "FIXPIPE issued after the slot wait");
  }
  aic.l0c_free.resize(aic.l0c_db);
  aic.l0c_ready.resize(aic.l0c_db);
  for (uint64_t i = 0; i < aic.l0c_db; ++i) {
    aic.l0c_free[i] = NewFlag(CoreKind::kAic, core, "FIX_M event", static_cast<int32_t>(i), 1);
    aic.l0c_ready[i] = NewFlag(CoreKind::kAic, core, "M_FIX event", static_cast<int32_t>(i));
  }
  return aic;
}

void Builder::SignalAiv(uint32_t core, Op& op) const {
  if (2 * core + 1 < aic_sync_flags_.size()) {
    Set(op, aic_sync_flags_[2 * core]);
    Set(op, aic_sync_flags_[2 * core + 1]);
  }
}

void Builder::EmitFullLoad(AicCursor& aic) {
  // The full-loaded matrix enters L1 once, before the tile loop.
  aic.full_flag = NewFlag(CoreKind::kAic, aic.program.core, "MTE2_MTE1 full load");
  const uint64_t m = problem_.m, n = problem_.n, k = problem_.k;
  Op load = aic.a_full ? StageRead(PackedBytes(m * k, aic.a_bits), StageBursts(true, m, n, k))
                       : StageRead(PackedBytes(k * n, aic.b_bits), StageBursts(false, m, n, k));
  load.cold = true;
  Set(load, aic.full_flag);
  Push(aic.program, Pipe::kMte2, load);
  aic.full_pending = true;
}

void Builder::EmitBandLoad(AicCursor& aic, const std::vector<const WorkUnit*>& units, size_t u) {
  // Load the band when it differs from the previous unit's, and release it
  // after the unit's last MTE1 when the next unit needs another one.
  auto band_of = [&](const WorkUnit& unit) { return aic.a_band ? unit.m : unit.n; };
  const Range band = band_of(*units[u]);
  aic.band_pending = false;
  if (u == 0 || !(band_of(*units[u - 1]) == band)) {
    const uint64_t k = problem_.k;
    Op load = StageRead(PackedBytes(band.size() * k, aic.a_band ? aic.a_bits : aic.b_bits),
                        StageBursts(aic.a_band, band.size(), band.size(), k));
    load.cold = true;
    load.l1_banks =
        aic.bank_mask[static_cast<int>(aic.a_band ? L1Buffer::kAPing : L1Buffer::kBPing)];
    GateLoad(aic, load);
    Wait(load, aic.band_free);
    if (aic.scale_k_l1 > 0 && aic.a_band) {
      // A resident A keeps its scales for the whole K, loaded with it.
      Op scales = StageRead(ScaleBytes(band.size(), k), band.size());
      scales.cold = true;
      scales.l1_banks = aic.bank_mask[static_cast<int>(L1Buffer::kScaleAPing)];
      Push(aic.program, Pipe::kMte2, load);
      Set(scales, aic.band_ready);
      Push(aic.program, Pipe::kMte2, scales);
    } else {
      Set(load, aic.band_ready);
      Push(aic.program, Pipe::kMte2, load);
    }
    aic.band_pending = true;
  }
  aic.band_release = u + 1 < units.size() && !(band_of(*units[u + 1]) == band);
  aic.unit_mte1_left = aic.band_release ? CountMte1Ops(*units[u]) : 0;
}

uint64_t Builder::CountMte1Ops(const WorkUnit& unit) const {
  const uint64_t base_k = schedule_.base_k;
  const uint64_t k_l1 = std::max(schedule_.k_l1, base_k);
  const std::vector<Range> chunks = tiling::SplitKChunks(unit.k, schedule_.split_k_chunk);
  const uint64_t blocks =
      CeilDiv(unit.m.size(), schedule_.base_m) * CeilDiv(unit.n.size(), schedule_.base_n);
  uint64_t steps = 0;
  for (const Range& chunk : chunks) {
    for (uint64_t ks = chunk.begin; ks < chunk.end; ks += k_l1) {
      steps += CeilDiv(std::min(k_l1, chunk.end - ks), base_k);
    }
  }
  return blocks * steps;
}

void Builder::EmitStage(AicCursor& aic, const BlockAt& block, const Range& chunk, uint64_t ks,
                        uint64_t l0c, bool& first_step) {
  // Locals, not cursor fields, in the loop: every Push may reallocate, after
  // which the compiler would reload each field the loop reads.
  const uint64_t sm = block.sm, sn = block.sn;
  const uint64_t a_bits = aic.a_bits, b_bits = aic.b_bits;
  const uint64_t base_k = aic.base_k, k_l1 = aic.k_l1, k_l1_b = aic.k_l1_b;
  const bool a_resident = aic.a_resident, b_resident = aic.b_resident;
  const uint64_t stage_k = std::min(k_l1, chunk.end - ks);
  const uint64_t buf_a = aic.l1_count++ % aic.l1_stages_a;
  const bool last_stage = ks + k_l1 >= chunk.end;
  const bool mx = aic.scale_k_l1 > 0;
  const auto bank = [&aic](L1Buffer buffer, uint64_t pong) {
    return aic.bank_mask[static_cast<int>(buffer) + pong];
  };
  // L1 slots 0 and 1 are A's ping-pong, 2 and 3 B's; a resident operand is
  // already in L1 and is not read again per stage. A's stages are this
  // stage's K range; B's are k_l1_b deep and may start and end inside it.
  if (!a_resident) {
    Op load = StageRead(PackedBytes(sm * stage_k, a_bits), StageBursts(true, sm, sn, stage_k));
    if (aic.tile_continues) load.cycles -= std::min(load.cycles, chip_.arch.mte2_transfer_cycles);
    load.cold = aic.l1_stages_a == 1;
    load.l1_banks = bank(L1Buffer::kAPing, buf_a);
    GateLoad(aic, load);
    Wait(load, aic.l1_free[buf_a]);
    Set(load, aic.l1_ready[buf_a]);
    Push(aic.program, Pipe::kMte2, load);
  }
  uint64_t l0_count = aic.l0_count;
  const uint64_t l0_stages = aic.l0_stages;
  for (uint64_t kk = ks; kk < ks + stage_k; kk += base_k) {
    const uint64_t bk = std::min(base_k, ks + stage_k - kk);
    const uint64_t half = l0_count++ % l0_stages;
    const bool stage_first = kk == ks;
    const bool stage_last = kk + base_k >= ks + stage_k;
    const bool chunk_last = stage_last && last_stage;
    bool b_first = false;
    if (!b_resident && (kk == chunk.begin || kk >= aic.b_stage_end)) {
      const uint64_t b_k = std::min(k_l1_b, chunk.end - kk);
      aic.b_stage_end = kk + b_k;
      aic.b_buf = 2 + aic.b_count++ % aic.l1_stages_b;
      if (!antiquant_.empty()) {
        // The AIVs dequantize the stage into L1 (PipelineConfig::b_antiquant_passes).
        EmitAntiquantStage(aic.program.core, b_k * sn);
      } else {
        Op load = StageRead(PackedBytes(b_k * sn, b_bits), StageBursts(false, sm, sn, b_k));
        if (aic.tile_continues) {
          load.cycles -= std::min(load.cycles, chip_.arch.mte2_transfer_cycles);
        }
        load.cold = aic.l1_stages_b == 1;
        load.l1_banks = bank(L1Buffer::kBPing, aic.b_buf - 2);
        GateLoad(aic, load);
        Wait(load, aic.l1_free[aic.b_buf]);
        Set(load, aic.l1_ready[aic.b_buf]);
        Push(aic.program, Pipe::kMte2, load);
      }
      b_first = true;
    }
    bool scale_first = false;
    if (mx && (kk == chunk.begin || kk >= aic.scale_stage_end)) {
      // MX: the scales of the next scale_k_l1 of K, into their own buffers
      // (a resident A brought its scales with it).
      const uint64_t scale_k = std::min(aic.scale_k_l1, chunk.end - kk);
      aic.scale_stage_end = kk + scale_k;
      aic.scale_buf = static_cast<uint32_t>(aic.scale_count++ % options_.pipeline.scale_stages);
      Op scale_b =
          StageRead(ScaleBytes(sn, scale_k),
                    options_.pipeline.scale_b_kn ? CeilDiv(scale_k, 2 * kMxScaleGroupK) : sn);
      scale_b.cold = options_.pipeline.scale_stages == 1;
      scale_b.l1_banks = bank(L1Buffer::kScaleBPing, aic.scale_buf);
      Set(scale_b, aic.scale_ready[aic.scale_buf]);
      if (!a_resident) {
        Op scale_a = StageRead(ScaleBytes(sm, scale_k), sm);
        scale_a.cold = scale_b.cold;
        scale_a.l1_banks = bank(L1Buffer::kScaleAPing, aic.scale_buf);
        GateLoad(aic, scale_a);
        Wait(scale_a, aic.scale_free[aic.scale_buf]);
        Push(aic.program, Pipe::kMte2, scale_a);
      } else {
        GateLoad(aic, scale_b);
        Wait(scale_b, aic.scale_free[aic.scale_buf]);
      }
      Push(aic.program, Pipe::kMte2, scale_b);
      scale_first = true;
    }
    const bool b_last = !b_resident && kk + base_k >= aic.b_stage_end;
    if (mx) {
      // LOAD_MX of the step's scales into L0A_MX / L0B_MX, ahead of the
      // data's LoadData into the same L0 half.
      Op load_mx = L1ToL0MxStep(chip_, sm, sn, bk);
      load_mx.l1_banks =
          static_cast<uint8_t>(bank(L1Buffer::kScaleAPing, a_resident ? 0 : aic.scale_buf) |
                               bank(L1Buffer::kScaleBPing, aic.scale_buf));
      Wait(load_mx, aic.l0_free[half]);
      if (scale_first) Wait(load_mx, aic.scale_ready[aic.scale_buf]);
      if (kk + base_k >= aic.scale_stage_end) Set(load_mx, aic.scale_free[aic.scale_buf]);
      Push(aic.program, Pipe::kMte1, load_mx);
    }
    Op mte1 = L1ToL0Step(chip_, sm, sn, bk, a_bits, b_bits);
    mte1.l1_banks = static_cast<uint8_t>(bank(L1Buffer::kAPing, a_resident ? 0 : buf_a) |
                                         bank(L1Buffer::kBPing, b_resident ? 0 : aic.b_buf - 2));
    if (!mx) Wait(mte1, aic.l0_free[half]);
    // Only a stage's first step needs its L1 data; a pending full or band
    // load is waited for once, by the first step after it was issued.
    if (stage_first && !a_resident) Wait(mte1, aic.l1_ready[buf_a]);
    if (b_first) {
      Wait(mte1,
           antiquant_.empty() ? aic.l1_ready[aic.b_buf] : antiquant_[aic.program.core].b_ready);
    }
    if (stage_first) {
      if (aic.full_pending) {
        Wait(mte1, aic.full_flag);
        aic.full_pending = false;
      }
      if (aic.band_pending) {
        Wait(mte1, aic.band_ready);
        aic.band_pending = false;
      }
    }
    Set(mte1, aic.l0_ready[half]);
    if (stage_last && !a_resident) Set(mte1, aic.l1_free[buf_a]);
    if (b_last) {
      Set(mte1, antiquant_.empty() ? aic.l1_free[aic.b_buf] : antiquant_[aic.program.core].b_free);
    }
    if (aic.band_release && --aic.unit_mte1_left == 0) Set(mte1, aic.band_free);
    Push(aic.program, Pipe::kMte1, mte1);

    Op mmad = MmadStep(chip_, problem_, sm, sn, bk);
    Wait(mmad, aic.l0_ready[half]);
    if (first_step) Wait(mmad, aic.l0c_free[l0c]);
    Set(mmad, aic.l0_free[half]);
    if (chunk_last) Set(mmad, aic.l0c_ready[l0c]);
    if (aic.unit_flag && kk == aic.uf_k) {
      mmad.sets_at_start |= uint8_t{1} << mmad.n_sets;
      Set(mmad, aic.uf_issued);
    }
    Push(aic.program, Pipe::kCube, mmad);
    first_step = false;
  }
  aic.l0_count = l0_count;
}

void Builder::EmitOutput(AicCursor& aic, const WorkUnit& unit, const BlockAt& block, bool fp32_out,
                         uint64_t l0c, bool signal) {
  Op out;
  out.kind = OpKind::kGmWrite;
  out.traffic = Traffic::kL0cOut;
  out.port_bytes_per_cycle = chip_.fixpipe_gm_bytes_per_cycle;
  const uint64_t out_bytes = fp32_out ? kFp32Bytes : aic.c_bytes;
  out.bytes = block.sm * block.sn * out_bytes;
  out.workspace = unit.writes_partial;
  out.cycles = chip_.arch.fixpipe_instruction_cycles;
  // Rows of C that start off a 32-byte boundary cost FIXPIPE extra (the
  // partial sums' workspace rows are padded).
  const uint64_t row_pitch = (unit.writes_partial ? tiling::kWorkspaceSlotElements / 256
                                                  : static_cast<uint64_t>(problem_.n)) *
                             out_bytes;
  if (options_.pipeline.strided.has_value() && !unit.writes_partial) {
    // The transposed kernels write y's rows through their perm (and batch
    // split): each row's own start decides.
    if (ub_epilogues_.empty()) {
      out.cycles +=
          static_cast<uint64_t>(static_cast<double>(UnalignedOutputRows(block, out_bytes)) *
                                chip_.arch.fixpipe_unaligned_row_cycles);
    }
  } else if (row_pitch % 32 != 0 && ub_epilogues_.empty() &&
             !options_.pipeline.relay.column_scale) {
    out.cycles += static_cast<uint64_t>(static_cast<double>(block.sm) *
                                        chip_.arch.fixpipe_unaligned_row_cycles);
  }
  if (aic.unit_flag) {
    // Issued ahead of the block's last MMAD (EmitChunk), it drains L0C as
    // the MMAD completes it, ending one fractal row after it.
    Wait(out, aic.uf_issued);
    out.last_wait_bounds_end = true;
    out.tail_cycles = chip_.arch.fixpipe_instruction_cycles +
                      CeilDiv(out.bytes, out.port_bytes_per_cycle) * tiling::kBlock16 /
                          std::max<uint64_t>(tiling::kBlock16, block.sm);
  }
  if (!relay_.empty()) {
    // A relay kernel: FIXPIPE writes the tile to its GM slot (the raw
    // accumulator, or C) for the AIVs. With slots it first waits, issued by
    // an op of its own, until the AIVs released the slot it reuses; the
    // core's next loads are issued after that wait.
    const RelayEpilogue& relay = options_.pipeline.relay;
    RelayCore& rc = relay_[aic.program.core];
    out.bytes = block.sm * block.sn * relay.in_bytes_per_element;
    out.workspace = relay.column_scale;
    if (relay.slots > 0) {
      Op issue;
      issue.cycles = 0;
      for (const RelayAiv& aiv : rc.aivs) Wait(issue, aiv.release);
      Set(issue, aic.issue_gate);
      Push(aic.program, Pipe::kFixpipe, issue);
      aic.gate_pending = true;
    }
    for (const RelayAiv& aiv : rc.aivs) Set(out, aiv.tile_ready);
    EmitRelayTile(aic.program.core, block);
  }
  const bool through_ub = !ub_epilogues_.empty() && !unit.writes_partial;
  if (through_ub) {
    // FIXPIPE L0C -> UB at its port rate, the rows split between the AIC's
    // two AIVs, each waiting for a free UB stage; no GM write here.
    const uint32_t core = aic.program.core;
    out.kind = OpKind::kCycles;
    out.traffic = Traffic::kNone;
    out.cycles = chip_.arch.fixpipe_instruction_cycles +
                 CeilDiv(block.sm * block.sn * kFp32Bytes, chip_.arch.fixpipe_bytes_per_cycle);
    Wait(out, ub_epilogues_[2 * core].ub_free);
    Wait(out, ub_epilogues_[2 * core + 1].ub_free);
    Set(out, ub_epilogues_[2 * core].ub_ready);
    Set(out, ub_epilogues_[2 * core + 1].ub_ready);
    const uint64_t upper = CeilDiv(block.sm, 2);
    EmitUbEpilogue(2 * core, upper, block.sn);
    EmitUbEpilogue(2 * core + 1, block.sm - upper, block.sn);
  }
  Wait(out, aic.l0c_ready[l0c]);
  Set(out, aic.l0c_free[l0c]);
  if (signal) SignalAiv(aic.program.core, out);
  if (aic.ends_block && block.last) Set(out, aic.block_done);
  Push(aic.program, Pipe::kFixpipe, out);
}

absl::Status Builder::EmitChunk(AicCursor& aic, const WorkUnit& unit, const BlockAt& block,
                                const std::vector<Range>& chunks, size_t ci) {
  const Range chunk = chunks[ci];
  const uint64_t l0c = aic.l0c_count++ % aic.l0c_db;
  // L0C hazard check (seeds/000 problem 3): the first MMAD of every
  // accumulation must clear L0C (cmatrixInitVal) unless it starts from the
  // bias, which only the first chunk of K slice 0 loads.
  const bool bias_init = problem_.has_bias && unit.k_slice == 0 && ci == 0;
  const bool cmatrix_init = !options_.faults.l0c_never_initialized;
  if (!cmatrix_init && !bias_init) {
    return absl::InternalError(
        absl::StrCat("hazard: AIC core ", aic.program.core, " pipe CUBE accumulates tile ",
                     unit.tile_idx, " (m ", block.m, ", n ", block.n, ", k ", chunk.begin,
                     ") onto L0C it never initialised (cmatrixInitVal=false on the first K step; "
                     "seeds/000 section 7, problem 3)"));
  }
  if (chunk.empty()) {
    // K = 0 with bias: L0C is loaded from the bias table only.
    Op init;
    init.cycles = 1;
    Wait(init, aic.l0c_free[l0c]);
    Set(init, aic.l0c_ready[l0c]);
    Push(aic.program, Pipe::kCube, init);
  }
  bool first_step = true;
  if (aic.unit_flag && !chunk.empty()) {
    // Under UnitFlag no flag holds the FIXPIPE back: it enters its queue as
    // soon as the scalar unit issues it, which runs ahead of the cube by its
    // instruction queue, and waits there, busy, for L0C.
    const uint64_t steps = CeilDiv(chunk.size(), aic.base_k);
    // Instructions the scalar unit issues per K step: two LoadData, the
    // MMAD and the L0 wait / set, and per L1 stage of a streamed operand its
    // load with its wait / set, shared by the stage's steps.
    double per_step = 5;
    if (!aic.a_resident) per_step += 3.0 / CeilDiv(aic.k_l1, aic.base_k);
    if (!aic.b_resident) per_step += 3.0 / CeilDiv(aic.k_l1_b, aic.base_k);
    const uint64_t ahead = static_cast<uint64_t>(
        std::llround(static_cast<double>(chip_.arch.scalar_run_ahead_instructions) / per_step));
    aic.uf_k = chunk.begin + (steps > ahead ? steps - ahead : 0) * aic.base_k;
  }
  for (uint64_t ks = chunk.begin; ks < chunk.end; ks += aic.k_l1) {
    EmitStage(aic, block, chunk, ks, l0c, first_step);
  }
  // Partial sums and fp32 split-K chunks leave L0C in fp32.
  const bool fp32_out = unit.writes_partial || chunks.size() > 1;
  const bool signal = unit.signals_aiv && block.last && ci + 1 == chunks.size();
  EmitOutput(aic, unit, block, fp32_out, l0c, signal);
  return absl::OkStatus();
}

absl::Status Builder::BuildAic(uint32_t core, const std::vector<const WorkUnit*>& units) {
  AicCursor aic = StartAic(core, units);
  if (units.empty()) {
    // Seeds/000 problem 2: an idle AIC must still release its AIV cores.
    if (!aic_sync_flags_.empty() && !options_.faults.idle_aic_skips_sync_flag) {
      Op op;
      SignalAiv(core, op);
      Push(aic.program, Pipe::kFixpipe, op);
    }
    set_.cores.push_back(std::move(aic.program));
    return absl::OkStatus();
  }
  // One MTE1 and one MMAD per base_k step; an MTE2 read per L1 stage of A
  // and of B (a step count over k_l1 / base_k, B's stages possibly more).
  // Reserved up front: growing the streams op by op copies them repeatedly.
  uint64_t steps = 0;
  for (const WorkUnit* unit : units) steps += CountMte1Ops(*unit);
  std::array<std::vector<Op>, kPipeCount>& pipes = aic.program.pipes;
  pipes[static_cast<int>(Pipe::kMte1)].reserve(steps);
  pipes[static_cast<int>(Pipe::kCube)].reserve(steps + units.size());
  pipes[static_cast<int>(Pipe::kMte2)].reserve(
      2 * CeilDiv(steps, aic.base_k == 0 ? 1 : std::max<uint64_t>(1, aic.k_l1 / aic.base_k)) +
      units.size() + 1);
  if (aic.a_full || aic.b_full) EmitFullLoad(aic);
  if (aic.a_band || aic.b_band) {
    aic.band_free = NewFlag(CoreKind::kAic, core, "MTE1_MTE2 resident band", -1, 1);
    aic.band_ready = NewFlag(CoreKind::kAic, core, "MTE2_MTE1 resident band");
  }
  for (size_t u = 0; u < units.size(); ++u) {
    const WorkUnit& unit = *units[u];
    aic.tile_continues =
        schedule_.batches_share_loads && u > 0 && units[u - 1]->tile_idx == unit.tile_idx;
    if (const uint32_t blocks = options_.pipeline.launch_blocks; blocks > 0) {
      // A further block on this core starts once the previous one ended,
      // after the block's hardware and software init.
      const int64_t block = unit.tile_idx % blocks;
      if (aic.block >= 0 && block != aic.block) {
        Op start;
        start.cycles = chip_.NsToCycles(chip_.arch.block_start_ns);
        Wait(start, aic.block_done);
        Push(aic.program, Pipe::kMte2, start);
      }
      aic.block = block;
      aic.ends_block =
          u + 1 < units.size() && static_cast<int64_t>(units[u + 1]->tile_idx % blocks) != block;
    }
    if (aic.a_band || aic.b_band) EmitBandLoad(aic, units, u);
    const std::vector<Range> chunks = tiling::SplitKChunks(unit.k, schedule_.split_k_chunk);
    for (uint64_t mo = unit.m.begin; mo < unit.m.end; mo += aic.base_m) {
      for (uint64_t no = unit.n.begin; no < unit.n.end; no += aic.base_n) {
        BlockAt block;
        block.m = mo;
        block.n = no;
        block.sm = std::min(aic.base_m, unit.m.end - mo);
        block.sn = std::min(aic.base_n, unit.n.end - no);
        block.last = mo + aic.base_m >= unit.m.end && no + aic.base_n >= unit.n.end;
        for (size_t ci = 0; ci < chunks.size(); ++ci) {
          RETURN_IF_ERROR(EmitChunk(aic, unit, block, chunks, ci));
        }
      }
    }
    RETURN_IF_ERROR(CheckOps());
  }
  set_.cores.push_back(std::move(aic.program));
  return absl::OkStatus();
}

}  // namespace npu::emu::internal
