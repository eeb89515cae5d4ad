#include "emulator/program.h"

#include <algorithm>
#include <cassert>
#include <limits>
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

// Products and sums that saturate instead of wrapping: the work estimates
// only compare against a limit.
constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();
uint64_t SatMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > kSaturated / a) return kSaturated;
  return a * b;
}
uint64_t SatAdd(uint64_t a, uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }
// a / b rounded up (a when b is 0), without the overflow of a + b - 1.
uint64_t CeilDiv(uint64_t a, uint64_t b) { return b == 0 ? a : a / b + (a % b != 0 ? 1 : 0); }

// Identities of GM regions for the L2 model.
enum class Region : uint64_t { kA = 1, kB = 2, kC = 3, kWorkspace = 4, kAFull = 5, kBFull = 6 };
uint64_t L2Key(Region region, uint64_t x, uint64_t y) {
  uint64_t h = static_cast<uint64_t>(region) * 0x9E3779B97F4A7C15ull;
  h ^= (x + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
  h = (h << 31) | (h >> 33);
  h ^= (y + 0x85EBCA77C2B2AE63ull) * 0x165667B19E3779F9ull;
  return h;
}

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

absl::Status Builder::BuildAic(uint32_t core, const std::vector<const WorkUnit*>& units) {
  CoreProgram program;
  program.kind = CoreKind::kAic;
  program.core = core;
  program.units = static_cast<uint32_t>(units.size());
  const std::string prefix = absl::StrCat("AIC ", core, " ");
  const uint64_t a_bytes = tiling::DataTypeBytes(problem_.dtype_a);
  const uint64_t b_bytes = tiling::DataTypeBytes(problem_.dtype_b);
  const uint64_t c_bytes = tiling::DataTypeBytes(problem_.dtype_c);
  const bool a_full = schedule_.full_load == FullLoad::kA || schedule_.full_load == FullLoad::kAB;
  const bool b_full = schedule_.full_load == FullLoad::kB || schedule_.full_load == FullLoad::kAB;
  // Partial residency (advisor plans): a band of A rows or B columns, the
  // whole K deep, stays in L1 while consecutive units of this core use it.
  const bool a_band = schedule_.l1_residency == tiling::L1Residency::kABand;
  const bool b_band = schedule_.l1_residency == tiling::L1Residency::kBBand;
  const bool a_resident = a_full || a_band;
  const bool b_resident = b_full || b_band;
  const uint64_t l0c_db = std::max<uint64_t>(1, plan_.block.l0c_db);

  // L1 stages: A ping / pong, B ping / pong (the Stream-K kernel's layout,
  // seeds/000 3.1), each released by MTE1 and filled by MTE2.
  uint32_t l1_free[4], l1_ready[4];
  for (int i = 0; i < 4; ++i) {
    l1_free[i] = NewFlag(absl::StrCat(prefix, "MTE1_MTE2 event ", i), 1);
    l1_ready[i] = NewFlag(absl::StrCat(prefix, "MTE2_MTE1 event ", i));
  }
  uint32_t l0_free[2], l0_ready[2];
  for (int i = 0; i < 2; ++i) {
    l0_free[i] = NewFlag(absl::StrCat(prefix, "M_MTE1 event ", i), 1);
    l0_ready[i] = NewFlag(absl::StrCat(prefix, "MTE1_M event ", i));
  }
  std::vector<uint32_t> l0c_free(l0c_db), l0c_ready(l0c_db);
  for (uint64_t i = 0; i < l0c_db; ++i) {
    l0c_free[i] = NewFlag(absl::StrCat(prefix, "FIX_M event ", i), 1);
    l0c_ready[i] = NewFlag(absl::StrCat(prefix, "M_FIX event ", i));
  }
  const bool idle = units.empty();
  auto signal_aiv = [&](Op& op) {
    if (2 * core + 1 < aic_sync_flags_.size()) {
      Set(op, aic_sync_flags_[2 * core]);
      Set(op, aic_sync_flags_[2 * core + 1]);
    }
  };
  if (idle) {
    // Seeds/000 problem 2: an idle AIC must still release its AIV cores.
    if (!aic_sync_flags_.empty() && !options_.faults.idle_aic_skips_sync_flag) {
      Op op;
      signal_aiv(op);
      Push(program, Pipe::kFixpipe, op);
    }
    set_.cores.push_back(std::move(program));
    return absl::OkStatus();
  }

  uint32_t full_flag = 0;
  bool full_pending = false;
  if (a_full || b_full) {
    // The full-loaded matrix enters L1 once, before the tile loop.
    full_flag = NewFlag(absl::StrCat(prefix, "MTE2_MTE1 full load"));
    Op load;
    load.kind = OpKind::kGmRead;
    load.port_bytes_per_cycle = kMte2PortBytesPerCycle;
    load.bytes = a_full ? problem_.m * problem_.k * a_bytes : problem_.k * problem_.n * b_bytes;
    load.l2_key = L2Key(a_full ? Region::kAFull : Region::kBFull, 0, 0);
    Set(load, full_flag);
    Push(program, Pipe::kMte2, load);
    full_pending = true;
  }

  // The resident band: MTE2 refills it when a unit needs another band, once
  // MTE1 has released the previous one (a single L1 slot: two bands never
  // fit at once).
  uint32_t band_free = 0, band_ready = 0;
  if (a_band || b_band) {
    band_free = NewFlag(absl::StrCat(prefix, "MTE1_MTE2 resident band"), 1);
    band_ready = NewFlag(absl::StrCat(prefix, "MTE2_MTE1 resident band"));
  }
  auto band_of = [&](const WorkUnit& unit) { return a_band ? unit.m : unit.n; };

  uint64_t l1_count = 0, l0_count = 0, l0c_count = 0;
  const uint64_t base_m = schedule_.base_m, base_n = schedule_.base_n, base_k = schedule_.base_k;
  const uint64_t k_l1 = std::max(schedule_.k_l1, base_k);
  for (size_t u = 0; u < units.size(); ++u) {
    const WorkUnit& unit = *units[u];
    const bool last_unit_signal = unit.signals_aiv;
    // Band residency: load the band when it differs from the previous
    // unit's, and release it after the unit's last MTE1 when the next unit
    // needs another one.
    bool band_pending = false;
    bool band_release = false;
    if (a_band || b_band) {
      const Range band = band_of(unit);
      if (u == 0 || !(band_of(*units[u - 1]) == band)) {
        Op load;
        load.kind = OpKind::kGmRead;
        load.port_bytes_per_cycle = kMte2PortBytesPerCycle;
        load.bytes = band.size() * problem_.k * (a_band ? a_bytes : b_bytes);
        load.l2_key = L2Key(a_band ? Region::kAFull : Region::kBFull, band.begin, band.end);
        Wait(load, band_free);
        Set(load, band_ready);
        Push(program, Pipe::kMte2, load);
        band_pending = true;
      }
      band_release = u + 1 < units.size() && !(band_of(*units[u + 1]) == band);
    }
    uint64_t unit_mte1_left = 0;  // MTE1 ops of this unit still to emit
    if (band_release) {
      const std::vector<Range> unit_chunks = tiling::SplitKChunks(unit.k, schedule_.split_k_chunk);
      const uint64_t blocks = CeilDiv(unit.m.size(), base_m) * CeilDiv(unit.n.size(), base_n);
      uint64_t steps = 0;
      for (const Range& chunk : unit_chunks) {
        for (uint64_t ks = chunk.begin; ks < chunk.end; ks += k_l1) {
          steps += CeilDiv(std::min(k_l1, chunk.end - ks), base_k);
        }
      }
      unit_mte1_left = blocks * steps;
    }
    const std::vector<Range> chunks = tiling::SplitKChunks(unit.k, schedule_.split_k_chunk);
    for (uint64_t mo = unit.m.begin; mo < unit.m.end; mo += base_m) {
      for (uint64_t no = unit.n.begin; no < unit.n.end; no += base_n) {
        const uint64_t sm = std::min(base_m, unit.m.end - mo);
        const uint64_t sn = std::min(base_n, unit.n.end - no);
        const bool last_block = mo + base_m >= unit.m.end && no + base_n >= unit.n.end;
        for (size_t ci = 0; ci < chunks.size(); ++ci) {
          const Range chunk = chunks[ci];
          const uint64_t l0c = l0c_count++ % l0c_db;
          bool first_step = true;
          // L0C hazard check (seeds/000 problem 3): the first MMAD of every
          // accumulation must clear L0C (cmatrixInitVal) unless it starts
          // from the bias, which only the first chunk of K slice 0 loads.
          const bool bias_init = problem_.has_bias && unit.k_slice == 0 && ci == 0;
          const bool cmatrix_init = !options_.faults.l0c_never_initialized;
          if (!cmatrix_init && !bias_init) {
            return absl::InternalError(absl::StrCat(
                "hazard: AIC core ", core, " pipe CUBE accumulates tile ", unit.tile_idx, " (m ",
                mo, ", n ", no, ", k ", chunk.begin,
                ") onto L0C it never initialised (cmatrixInitVal=false on the first K step; "
                "seeds/000 section 7, problem 3)"));
          }
          if (chunk.empty()) {
            // K = 0 with bias: L0C is loaded from the bias table only.
            Op init;
            init.cycles = 1;
            Wait(init, l0c_free[l0c]);
            Set(init, l0c_ready[l0c]);
            Push(program, Pipe::kCube, init);
          }
          for (uint64_t ks = chunk.begin; ks < chunk.end; ks += k_l1) {
            const uint64_t stage_k = std::min(k_l1, chunk.end - ks);
            const uint64_t buf = l1_count++ & 1;
            if (!a_resident) {
              Op load;
              load.kind = OpKind::kGmRead;
              load.port_bytes_per_cycle = kMte2PortBytesPerCycle;
              load.bytes = sm * stage_k * a_bytes;
              load.l2_key = L2Key(Region::kA, mo, ks);
              Wait(load, l1_free[buf]);
              Set(load, l1_ready[buf]);
              Push(program, Pipe::kMte2, load);
            }
            if (!b_resident) {
              Op load;
              load.kind = OpKind::kGmRead;
              load.port_bytes_per_cycle = kMte2PortBytesPerCycle;
              load.bytes = stage_k * sn * b_bytes;
              load.l2_key = L2Key(Region::kB, ks, no);
              Wait(load, l1_free[buf + 2]);
              Set(load, l1_ready[buf + 2]);
              Push(program, Pipe::kMte2, load);
            }
            for (uint64_t kk = ks; kk < ks + stage_k; kk += base_k) {
              const uint64_t bk = std::min(base_k, ks + stage_k - kk);
              const uint64_t half = l0_count++ & 1;
              const bool stage_first = kk == ks;
              const bool stage_last = kk + base_k >= ks + stage_k;
              const bool chunk_last = stage_last && ks + k_l1 >= chunk.end;
              Op mte1;
              mte1.traffic = Traffic::kL1ToL0;
              mte1.bytes = sm * bk * a_bytes + bk * sn * b_bytes;
              mte1.cycles = CeilDiv(mte1.bytes, kMte1BytesPerCycle);
              Wait(mte1, l0_free[half]);
              if (stage_first) {
                if (!a_resident) Wait(mte1, l1_ready[buf]);
                if (!b_resident) Wait(mte1, l1_ready[buf + 2]);
                if (full_pending) {
                  Wait(mte1, full_flag);
                  full_pending = false;
                }
                if (band_pending) {
                  Wait(mte1, band_ready);
                  band_pending = false;
                }
              }
              Set(mte1, l0_ready[half]);
              if (stage_last) {
                if (!a_resident) Set(mte1, l1_free[buf]);
                if (!b_resident) Set(mte1, l1_free[buf + 2]);
              }
              if (band_release && --unit_mte1_left == 0) Set(mte1, band_free);
              Push(program, Pipe::kMte1, mte1);

              Op mmad;
              mmad.cycles = chip_.MmadCycles(sm, sn, bk, problem_.dtype_a, problem_.hf32);
              mmad.macs = sm * sn * bk;
              Wait(mmad, l0_ready[half]);
              if (first_step) Wait(mmad, l0c_free[l0c]);
              Set(mmad, l0_free[half]);
              if (chunk_last) Set(mmad, l0c_ready[l0c]);
              Push(program, Pipe::kCube, mmad);
              first_step = false;
            }
          }
          Op out;
          out.kind = OpKind::kGmWrite;
          out.traffic = Traffic::kL0cOut;
          out.port_bytes_per_cycle = kFixpipeBytesPerCycle;
          // Partial sums and fp32 split-K chunks leave L0C in fp32.
          const bool fp32_out = unit.writes_partial || chunks.size() > 1;
          out.bytes = sm * sn * (fp32_out ? kFp32Bytes : c_bytes);
          out.workspace = unit.writes_partial;
          out.l2_key = unit.writes_partial ? L2Key(Region::kWorkspace, unit.workspace_slot, 0)
                                           : L2Key(Region::kC, mo, no);
          Wait(out, l0c_ready[l0c]);
          Set(out, l0c_free[l0c]);
          if (last_unit_signal && last_block && ci + 1 == chunks.size()) signal_aiv(out);
          Push(program, Pipe::kFixpipe, out);
        }
      }
    }
    RETURN_IF_ERROR(CheckOps());
  }
  set_.cores.push_back(std::move(program));
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

EmulationWork EstimateEmulationWork(const tiling::TilingPlan& plan,
                                    const tiling::MatmulProblem& problem) {
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  auto field = [&](std::string_view name, uint64_t fallback) {
    return plan.data.Get(name).value_or(fallback);
  };
  EmulationWork work;
  if (plan.kernel_type == tiling::KernelType::kAivOnly) {
    // Every vector unit stores its part of C: at least one operation each.
    switch (plan.key.model) {
      case tiling::KernelModel::kToMul:
        work.units = CeilDiv(SatMul(m, n), field("baseMN", 0));
        break;
      case tiling::KernelModel::kToMultiMul:
        work.units = SatMul(CeilDiv(m, field("baseM", 0)), CeilDiv(n, field("baseN", 0)));
        break;
      default:
        work.units = field("aivNum", plan.block_dim);
        break;
    }
    work.min_ops = work.expected_ops = work.units;
    work.why = absl::StrCat(work.units, " vector work units");
    return work;
  }
  // Every base block takes one MMAD per baseK step of its K range, and every
  // work unit (an L1 tile, or a K slice of a Stream-K tile) at least one
  // operation.
  const tiling::BlockTiling& b = plan.block;
  work.base_blocks = SatMul(CeilDiv(m, b.base_m), CeilDiv(n, b.base_n));
  work.k_steps = std::max<uint64_t>(1, CeilDiv(k, b.base_k));
  if (plan.key.model == tiling::KernelModel::kStreamK ||
      plan.key.model == tiling::KernelModel::kStreamKSplitK) {
    const uint64_t used = std::max<uint64_t>(1, field("usedCoreNum", plan.block_dim));
    const uint64_t tail = work.base_blocks % used;
    work.units = SatAdd(work.base_blocks - tail, SatMul(tail, CeilDiv(k, b.single_core_k)));
  } else {
    work.units = SatMul(CeilDiv(m, b.m_l1), CeilDiv(n, b.n_l1));
  }
  const uint64_t steps = SatMul(work.base_blocks, work.k_steps);
  work.min_ops = steps;
  work.why = absl::StrCat(work.base_blocks, " base blocks x ", work.k_steps, " K steps");
  if (work.units > work.min_ops) {
    work.min_ops = work.units;
    work.why = absl::StrCat(work.units, " work units");
  }
  work.expected_ops = SatAdd(SatMul(3, steps), work.units);
  return work;
}

}  // namespace npu::emu
