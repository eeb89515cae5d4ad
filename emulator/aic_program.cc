// The AIC streams of BuildPrograms(): L1 ping-pong of A and B stages
// (MTE2 <-> MTE1), L0 ping-pong (MTE1 <-> CUBE), the L0C hand-off to FIXPIPE
// and the signal to the AIV cores.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "emulator/program_builder.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/status_macros.h"

namespace npu::emu::internal {
namespace {

// MTE2's read of one operand's L1 stage from GM; `l2_key` names the region
// so that the L2 model can tell a re-read from a first read.
Op StageRead(uint64_t bytes, uint64_t l2_key) {
  Op load;
  load.kind = OpKind::kGmRead;
  load.port_bytes_per_cycle = kMte2PortBytesPerCycle;
  load.bytes = bytes;
  load.l2_key = l2_key;
  return load;
}

// MTE1's move of one base_k step of A (sm x bk) and B (bk x sn) from L1
// into L0A and L0B, costed at MTE1's fixed bandwidth.
Op L1ToL0Step(uint64_t sm, uint64_t sn, uint64_t bk, uint64_t a_bytes, uint64_t b_bytes) {
  Op mte1;
  mte1.traffic = Traffic::kL1ToL0;
  mte1.bytes = sm * bk * a_bytes + bk * sn * b_bytes;
  mte1.cycles = CeilDiv(mte1.bytes, kMte1BytesPerCycle);
  return mte1;
}

// The cube's MMAD of one base_k step into L0C; its useful MACs feed the
// utilisation statistics.
Op MmadStep(const ChipModel& chip, const tiling::MatmulProblem& problem, uint64_t sm, uint64_t sn,
            uint64_t bk) {
  Op mmad;
  mmad.cycles = chip.MmadCycles(sm, sn, bk, problem.dtype_a, problem.hf32);
  mmad.macs = sm * sn * bk;
  return mmad;
}

}  // namespace

AicCursor Builder::StartAic(uint32_t core, const std::vector<const WorkUnit*>& units) {
  AicCursor aic;
  aic.program.kind = CoreKind::kAic;
  aic.program.core = core;
  aic.program.units = static_cast<uint32_t>(units.size());
  aic.prefix = absl::StrCat("AIC ", core, " ");
  aic.a_bytes = tiling::DataTypeBytes(problem_.dtype_a);
  aic.b_bytes = tiling::DataTypeBytes(problem_.dtype_b);
  aic.c_bytes = tiling::DataTypeBytes(problem_.dtype_c);
  aic.a_full = schedule_.full_load == FullLoad::kA || schedule_.full_load == FullLoad::kAB;
  aic.b_full = schedule_.full_load == FullLoad::kB || schedule_.full_load == FullLoad::kAB;
  aic.a_band = schedule_.l1_residency == tiling::L1Residency::kABand;
  aic.b_band = schedule_.l1_residency == tiling::L1Residency::kBBand;
  aic.a_resident = aic.a_full || aic.a_band;
  aic.b_resident = aic.b_full || aic.b_band;
  aic.l0c_db = std::max<uint64_t>(1, plan_.block.l0c_db);
  aic.base_m = schedule_.base_m;
  aic.base_n = schedule_.base_n;
  aic.base_k = schedule_.base_k;
  aic.k_l1 = std::max(schedule_.k_l1, aic.base_k);
  for (int i = 0; i < 4; ++i) {
    aic.l1_free[i] = NewFlag(absl::StrCat(aic.prefix, "MTE1_MTE2 event ", i), 1);
    aic.l1_ready[i] = NewFlag(absl::StrCat(aic.prefix, "MTE2_MTE1 event ", i));
  }
  for (int i = 0; i < 2; ++i) {
    aic.l0_free[i] = NewFlag(absl::StrCat(aic.prefix, "M_MTE1 event ", i), 1);
    aic.l0_ready[i] = NewFlag(absl::StrCat(aic.prefix, "MTE1_M event ", i));
  }
  aic.l0c_free.resize(aic.l0c_db);
  aic.l0c_ready.resize(aic.l0c_db);
  for (uint64_t i = 0; i < aic.l0c_db; ++i) {
    aic.l0c_free[i] = NewFlag(absl::StrCat(aic.prefix, "FIX_M event ", i), 1);
    aic.l0c_ready[i] = NewFlag(absl::StrCat(aic.prefix, "M_FIX event ", i));
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
  aic.full_flag = NewFlag(absl::StrCat(aic.prefix, "MTE2_MTE1 full load"));
  Op load;
  load.kind = OpKind::kGmRead;
  load.port_bytes_per_cycle = kMte2PortBytesPerCycle;
  load.bytes =
      aic.a_full ? problem_.m * problem_.k * aic.a_bytes : problem_.k * problem_.n * aic.b_bytes;
  load.l2_key = L2Key(aic.a_full ? Region::kAFull : Region::kBFull, 0, 0);
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
    Op load;
    load.kind = OpKind::kGmRead;
    load.port_bytes_per_cycle = kMte2PortBytesPerCycle;
    load.bytes = band.size() * problem_.k * (aic.a_band ? aic.a_bytes : aic.b_bytes);
    load.l2_key = L2Key(aic.a_band ? Region::kAFull : Region::kBFull, band.begin, band.end);
    Wait(load, aic.band_free);
    Set(load, aic.band_ready);
    Push(aic.program, Pipe::kMte2, load);
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
  const uint64_t a_bytes = aic.a_bytes, b_bytes = aic.b_bytes;
  const uint64_t base_k = aic.base_k, k_l1 = aic.k_l1;
  const bool a_resident = aic.a_resident, b_resident = aic.b_resident;
  const uint64_t stage_k = std::min(k_l1, chunk.end - ks);
  const uint64_t buf = aic.l1_count++ & 1;
  // L1 slots 0 and 1 are A's ping-pong, 2 and 3 B's; a resident operand is
  // already in L1 and is not read again per stage.
  if (!a_resident) {
    Op load = StageRead(sm * stage_k * a_bytes, L2Key(Region::kA, block.m, ks));
    Wait(load, aic.l1_free[buf]);
    Set(load, aic.l1_ready[buf]);
    Push(aic.program, Pipe::kMte2, load);
  }
  if (!b_resident) {
    Op load = StageRead(stage_k * sn * b_bytes, L2Key(Region::kB, ks, block.n));
    Wait(load, aic.l1_free[buf + 2]);
    Set(load, aic.l1_ready[buf + 2]);
    Push(aic.program, Pipe::kMte2, load);
  }
  uint64_t l0_count = aic.l0_count;
  for (uint64_t kk = ks; kk < ks + stage_k; kk += base_k) {
    const uint64_t bk = std::min(base_k, ks + stage_k - kk);
    const uint64_t half = l0_count++ & 1;
    const bool stage_first = kk == ks;
    const bool stage_last = kk + base_k >= ks + stage_k;
    const bool chunk_last = stage_last && ks + k_l1 >= chunk.end;
    Op mte1 = L1ToL0Step(sm, sn, bk, a_bytes, b_bytes);
    Wait(mte1, aic.l0_free[half]);
    // Only a stage's first step needs its L1 data; a pending full or band
    // load is waited for once, by the first step after it was issued.
    if (stage_first) {
      if (!a_resident) Wait(mte1, aic.l1_ready[buf]);
      if (!b_resident) Wait(mte1, aic.l1_ready[buf + 2]);
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
    if (stage_last) {
      if (!a_resident) Set(mte1, aic.l1_free[buf]);
      if (!b_resident) Set(mte1, aic.l1_free[buf + 2]);
    }
    if (aic.band_release && --aic.unit_mte1_left == 0) Set(mte1, aic.band_free);
    Push(aic.program, Pipe::kMte1, mte1);

    Op mmad = MmadStep(chip_, problem_, sm, sn, bk);
    Wait(mmad, aic.l0_ready[half]);
    if (first_step) Wait(mmad, aic.l0c_free[l0c]);
    Set(mmad, aic.l0_free[half]);
    if (chunk_last) Set(mmad, aic.l0c_ready[l0c]);
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
  out.port_bytes_per_cycle = kFixpipeBytesPerCycle;
  out.bytes = block.sm * block.sn * (fp32_out ? kFp32Bytes : aic.c_bytes);
  out.workspace = unit.writes_partial;
  out.l2_key = unit.writes_partial ? L2Key(Region::kWorkspace, unit.workspace_slot, 0)
                                   : L2Key(Region::kC, block.m, block.n);
  Wait(out, aic.l0c_ready[l0c]);
  Set(out, aic.l0c_free[l0c]);
  if (signal) SignalAiv(aic.program.core, out);
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
  if (aic.a_full || aic.b_full) EmitFullLoad(aic);
  if (aic.a_band || aic.b_band) {
    aic.band_free = NewFlag(absl::StrCat(aic.prefix, "MTE1_MTE2 resident band"), 1);
    aic.band_ready = NewFlag(absl::StrCat(aic.prefix, "MTE2_MTE1 resident band"));
  }
  for (size_t u = 0; u < units.size(); ++u) {
    const WorkUnit& unit = *units[u];
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
