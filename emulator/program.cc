#include "emulator/program.h"

#include <algorithm>
#include <cassert>
#include <map>

#include "absl/strings/str_cat.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/status_macros.h"

namespace npu::emu {
namespace {

using tiling::CoreKind;
using tiling::FullLoad;
using tiling::kFp32Bytes;
using tiling::Range;
using tiling::Schedule;
using tiling::UnitOp;
using tiling::WorkUnit;

uint64_t CeilDiv(uint64_t a, uint64_t b) { return b == 0 ? a : (a + b - 1) / b; }

// Identities of GM regions for the L2 model.
enum class Region : uint64_t { kA = 1, kB = 2, kC = 3, kWorkspace = 4, kAFull = 5, kBFull = 6 };
uint64_t L2Key(Region region, uint64_t x, uint64_t y) {
  uint64_t h = static_cast<uint64_t>(region) * 0x9E3779B97F4A7C15ull;
  h ^= (x + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
  h = (h << 31) | (h >> 33);
  h ^= (y + 0x85EBCA77C2B2AE63ull) * 0x165667B19E3779F9ull;
  return h;
}

// One AIC core's instruction streams while they are written: the core's
// flags, its operand residency and the ping-pong positions.
struct AicCursor {
  CoreProgram program;
  std::string prefix;  // "AIC <core> " of its flag names
  uint64_t a_bytes = 0, b_bytes = 0, c_bytes = 0;
  bool a_full = false, b_full = false;  // whole matrix resident (full load)
  // Partial residency (advisor plans): a band of A rows or B columns, the
  // whole K deep, stays in L1 while consecutive units of this core use it.
  bool a_band = false, b_band = false;
  bool a_resident = false, b_resident = false;
  uint64_t l0c_db = 1;
  uint64_t base_m = 0, base_n = 0, base_k = 0, k_l1 = 0;
  // L1 stages: A ping / pong, B ping / pong (the Stream-K kernel's layout,
  // seeds/000 3.1), each released by MTE1 and filled by MTE2.
  uint32_t l1_free[4] = {}, l1_ready[4] = {};
  uint32_t l0_free[2] = {}, l0_ready[2] = {};
  std::vector<uint32_t> l0c_free, l0c_ready;
  uint32_t full_flag = 0;
  bool full_pending = false;  // the first MTE1 still has to wait for it
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

class Builder {
 public:
  Builder(const Schedule& schedule, const tiling::TilingPlan& plan,
          const tiling::MatmulProblem& problem, const ChipModel& chip,
          const ProgramOptions& options)
      : schedule_(schedule), plan_(plan), problem_(problem), chip_(chip), options_(options) {}

  absl::StatusOr<ProgramSet> Build();

 private:
  uint32_t NewFlag(std::string name, uint32_t initial_sets = 0) {
    set_.flags.push_back({std::move(name), initial_sets, false, 0});
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
  absl::Status BuildAic(uint32_t core, const std::vector<const WorkUnit*>& units);
  // Steps of BuildAic(), on the core's cursor.
  AicCursor StartAic(uint32_t core, const std::vector<const WorkUnit*>& units);
  void SignalAiv(uint32_t core, Op& op) const;
  void EmitFullLoad(AicCursor& aic);
  void EmitBandLoad(AicCursor& aic, const std::vector<const WorkUnit*>& units, size_t u);
  uint64_t CountMte1Ops(const WorkUnit& unit) const;
  absl::Status EmitChunk(AicCursor& aic, const WorkUnit& unit, const BlockAt& block,
                         const std::vector<Range>& chunks, size_t ci);
  void EmitStage(AicCursor& aic, const BlockAt& block, const Range& chunk, uint64_t ks,
                 uint64_t l0c, bool& first_step);
  void EmitOutput(AicCursor& aic, const WorkUnit& unit, const BlockAt& block, bool fp32_out,
                  uint64_t l0c, bool signal);
  absl::Status BuildAiv(uint32_t core, const std::vector<const WorkUnit*>& units);
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
};

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
  const uint64_t stage_k = std::min(aic.k_l1, chunk.end - ks);
  const uint64_t buf = aic.l1_count++ & 1;
  if (!aic.a_resident) {
    Op load;
    load.kind = OpKind::kGmRead;
    load.port_bytes_per_cycle = kMte2PortBytesPerCycle;
    load.bytes = block.sm * stage_k * aic.a_bytes;
    load.l2_key = L2Key(Region::kA, block.m, ks);
    Wait(load, aic.l1_free[buf]);
    Set(load, aic.l1_ready[buf]);
    Push(aic.program, Pipe::kMte2, load);
  }
  if (!aic.b_resident) {
    Op load;
    load.kind = OpKind::kGmRead;
    load.port_bytes_per_cycle = kMte2PortBytesPerCycle;
    load.bytes = stage_k * block.sn * aic.b_bytes;
    load.l2_key = L2Key(Region::kB, ks, block.n);
    Wait(load, aic.l1_free[buf + 2]);
    Set(load, aic.l1_ready[buf + 2]);
    Push(aic.program, Pipe::kMte2, load);
  }
  for (uint64_t kk = ks; kk < ks + stage_k; kk += aic.base_k) {
    const uint64_t bk = std::min(aic.base_k, ks + stage_k - kk);
    const uint64_t half = aic.l0_count++ & 1;
    const bool stage_first = kk == ks;
    const bool stage_last = kk + aic.base_k >= ks + stage_k;
    const bool chunk_last = stage_last && ks + aic.k_l1 >= chunk.end;
    Op mte1;
    mte1.traffic = Traffic::kL1ToL0;
    mte1.bytes = block.sm * bk * aic.a_bytes + bk * block.sn * aic.b_bytes;
    mte1.cycles = CeilDiv(mte1.bytes, kMte1BytesPerCycle);
    Wait(mte1, aic.l0_free[half]);
    if (stage_first) {
      if (!aic.a_resident) Wait(mte1, aic.l1_ready[buf]);
      if (!aic.b_resident) Wait(mte1, aic.l1_ready[buf + 2]);
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
      if (!aic.a_resident) Set(mte1, aic.l1_free[buf]);
      if (!aic.b_resident) Set(mte1, aic.l1_free[buf + 2]);
    }
    if (aic.band_release && --aic.unit_mte1_left == 0) Set(mte1, aic.band_free);
    Push(aic.program, Pipe::kMte1, mte1);

    Op mmad;
    mmad.cycles = chip_.MmadCycles(block.sm, block.sn, bk, problem_.dtype_a, problem_.hf32);
    mmad.macs = block.sm * block.sn * bk;
    Wait(mmad, aic.l0_ready[half]);
    if (first_step) Wait(mmad, aic.l0c_free[l0c]);
    Set(mmad, aic.l0_free[half]);
    if (chunk_last) Set(mmad, aic.l0c_ready[l0c]);
    Push(aic.program, Pipe::kCube, mmad);
    first_step = false;
  }
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

absl::Status Builder::BuildAiv(uint32_t core, const std::vector<const WorkUnit*>& units) {
  CoreProgram program;
  program.kind = CoreKind::kAiv;
  program.core = core;
  program.units = static_cast<uint32_t>(units.size());
  const std::string prefix = absl::StrCat("AIV ", core, " ");
  const uint64_t a_bytes = tiling::DataTypeBytes(problem_.dtype_a);
  const uint64_t b_bytes = tiling::DataTypeBytes(problem_.dtype_b);
  const uint64_t c_bytes = tiling::DataTypeBytes(problem_.dtype_c);
  const uint32_t in_ready = NewFlag(absl::StrCat(prefix, "MTE2_V event 0"));
  const uint32_t out_ready = NewFlag(absl::StrCat(prefix, "V_MTE3 event 0"));
  const uint32_t ub_free = NewFlag(absl::StrCat(prefix, "MTE3_MTE2 event 0"), 1);
  bool first = true;
  if (!aic_sync_flags_.empty()) {
    // Stream-K: wait for the own AIC's partial sums, then SyncAll so every
    // partial of the round is in the workspace.
    Op wait_aic;
    Wait(wait_aic, aic_sync_flags_[core]);
    Set(wait_aic, sync_all_);
    Push(program, Pipe::kMte2, wait_aic);
    Op barrier;
    Wait(barrier, sync_all_);
    Push(program, Pipe::kMte2, barrier);
  }
  for (const WorkUnit* unit : units) {
    const uint64_t rows = unit->m.size(), cols = unit->n.size();
    std::vector<Op> loads;
    uint64_t vec_cycles = 0;
    switch (unit->op) {
      case UnitOp::kReduce: {
        const tiling::ReductionGroup& group = schedule_.reductions[unit->reduction];
        for (uint32_t slot : group.slots) {
          Op load;
          load.kind = OpKind::kGmRead;
          load.traffic = Traffic::kUbIn;
          load.workspace = true;
          load.port_bytes_per_cycle = kMte2PortBytesPerCycle;
          load.bytes = rows * group.workspace_row_stride * kFp32Bytes;
          load.l2_key = L2Key(Region::kWorkspace, slot, 0);
          loads.push_back(load);
        }
        // kCnt - 1 adds and one cast per element.
        vec_cycles = CeilDiv(group.slots.size() * rows * cols, kVecFp32ElementsPerCycle);
        break;
      }
      case UnitOp::kVectorMul: {
        Op load_a;
        load_a.kind = OpKind::kGmRead;
        load_a.traffic = Traffic::kUbIn;
        load_a.port_bytes_per_cycle = kMte2PortBytesPerCycle;
        load_a.bytes = rows * unit->k.size() * a_bytes;
        load_a.l2_key = L2Key(Region::kA, unit->m.begin, 0);
        Op load_b = load_a;
        load_b.bytes = cols * unit->k.size() * b_bytes;
        load_b.l2_key = L2Key(Region::kB, 0, unit->n.begin);
        loads = {load_a, load_b};
        // Mul and ReduceSum: two vector passes over every product.
        vec_cycles = CeilDiv(2 * rows * cols * unit->k.size(), kVecFp32ElementsPerCycle);
        // 16-bit operands (the advisor's AIV path; CANN's TO_MUL is fp32
        // only) are first cast to fp32 in UB: one more pass over every
        // loaded element, at the fp32 element rate.
        if (a_bytes == 2 || b_bytes == 2) {
          vec_cycles += CeilDiv((rows + cols) * unit->k.size(), kVecFp32ElementsPerCycle);
        }
        break;
      }
      case UnitOp::kClear:
        break;
      case UnitOp::kMmad:
        return absl::InternalError("MMAD unit scheduled on an AIV core");
    }
    if (!loads.empty()) {
      Wait(loads.front(), ub_free);
      Set(loads.back(), in_ready);
      for (const Op& load : loads) Push(program, Pipe::kMte2, load);
      Op vec;
      vec.cycles = std::max<uint64_t>(1, vec_cycles);
      Wait(vec, in_ready);
      Set(vec, out_ready);
      Push(program, Pipe::kVec, vec);
    }
    Op store;
    store.kind = OpKind::kGmWrite;
    store.traffic = Traffic::kUbOut;
    store.port_bytes_per_cycle = kMte3BytesPerCycle;
    store.bytes = rows * cols * c_bytes;
    store.l2_key = L2Key(Region::kC, unit->m.begin, unit->n.begin);
    if (!loads.empty()) {
      Wait(store, out_ready);
      Set(store, ub_free);
    }
    Push(program, Pipe::kMte3, store);
    first = false;
  }
  (void)first;
  RETURN_IF_ERROR(CheckOps());
  set_.cores.push_back(std::move(program));
  return absl::OkStatus();
}

absl::StatusOr<ProgramSet> Builder::Build() {
  std::map<uint32_t, std::vector<const WorkUnit*>> aic_units, aiv_units;
  for (const WorkUnit& unit : schedule_.units) {
    (unit.core_kind == CoreKind::kAic ? aic_units : aiv_units)[unit.core].push_back(&unit);
  }
  const bool stream_k = schedule_.model == tiling::KernelModel::kStreamK ||
                        schedule_.model == tiling::KernelModel::kStreamKSplitK;
  if (stream_k) {
    for (uint32_t aiv = 0; aiv < schedule_.aiv_cores; ++aiv) {
      aic_sync_flags_.push_back(
          NewFlag(absl::StrCat("AIC_SYNC_AIV to AIV ", aiv, " from AIC ", aiv / 2)));
    }
    sync_all_ = NewFlag("SyncAll of the AIV cores");
    set_.flags[sync_all_].barrier = true;
    set_.flags[sync_all_].participants = schedule_.aiv_cores;
  }
  for (uint32_t core = 0; core < schedule_.aic_cores; ++core) {
    RETURN_IF_ERROR(BuildAic(core, aic_units[core]));
  }
  for (uint32_t core = 0; core < schedule_.aiv_cores; ++core) {
    RETURN_IF_ERROR(BuildAiv(core, aiv_units[core]));
  }
  return std::move(set_);
}

}  // namespace

absl::StatusOr<ProgramSet> BuildPrograms(const Schedule& schedule, const tiling::TilingPlan& plan,
                                         const tiling::MatmulProblem& problem,
                                         const ChipModel& chip, const ProgramOptions& options) {
  Builder builder(schedule, plan, problem, chip, options);
  return builder.Build();
}

}  // namespace npu::emu
