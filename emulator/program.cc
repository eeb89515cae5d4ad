#include "emulator/program.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "emulator/kernel_schedule.h"
#include "emulator/kernel_traits.h"
#include "emulator/program_builder.h"
#include "server/tiling/grouped/gmm_groups.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/operator_table.h"
#include "server/tiling/schedule.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"

namespace npu::emu {
namespace {

// QuantBatchMatmulV3's KERNELTYPE values (the key's kernel_type field,
// server/tiling/key_layout.cc kQuantKernels) whose kernels run a vector
// epilogue on the AIV: VEC_EPILOGUE_WITH_MMAPI, _CUSTOM_GMTOAL1_WITH_MMAPI,
// _WITH_CUSTOM_MM (per-block), _CUSTOM_GMTOABL1_WITH_MMAPI and
// _WITH_BMMAPI.
constexpr uint8_t kQuantKernelVecEpilogue = 2;
constexpr uint8_t kQuantKernelVecAFullLoad = 3;
constexpr uint8_t kQuantKernelPerBlock = 4;
constexpr uint8_t kQuantKernelVecAbFullLoad = 5;
constexpr uint8_t kQuantKernelVecBatch = 7;

}  // namespace

namespace internal {

uint64_t Builder::ReduceLoads(const WorkUnit& unit, std::vector<Op>& loads) const {
  const uint64_t rows = unit.m.size(), cols = unit.n.size();
  const tiling::ReductionGroup& group = schedule_.reductions[unit.reduction];
  for (size_t slot = 0; slot < group.slots.size(); ++slot) {
    Op load;
    load.kind = OpKind::kGmRead;
    load.traffic = Traffic::kUbIn;
    load.workspace = true;
    load.bytes = rows * group.workspace_row_stride * kFp32Bytes;
    load.cycles = chip_.arch.mte2_transfer_cycles;
    load.cold = true;
    loads.push_back(load);
  }
  // kCnt - 1 adds and one cast per element.
  uint64_t passes = group.slots.size();
  const PipelineConfig& pipeline = options_.pipeline;
  if (pipeline.output_through_ub) {
    // A fused epilogue runs in the reduction (BlockEpilogueStreamK's fusion
    // variant): x3's rows come in with the partials, and the op's passes
    // follow the sum.
    passes += pipeline.ub_vector_passes;
    if (pipeline.ub_x3_bytes_per_element > 0) {
      Op x3 = loads.back();
      x3.workspace = false;
      x3.bytes = rows * cols * pipeline.ub_x3_bytes_per_element;
      loads.push_back(x3);
    }
  }
  return chip_.VectorCycles(passes, rows * cols);
}

uint64_t Builder::VectorMulLoads(const WorkUnit& unit, std::vector<Op>& loads) const {
  const uint64_t rows = unit.m.size(), cols = unit.n.size();
  const uint64_t a_bytes = tiling::DataTypeBytes(problem_.dtype_a);
  const uint64_t b_bytes = tiling::DataTypeBytes(problem_.dtype_b);
  Op load_a;
  load_a.kind = OpKind::kGmRead;
  load_a.traffic = Traffic::kUbIn;
  load_a.bytes = rows * unit.k.size() * a_bytes;
  load_a.cycles = chip_.arch.mte2_transfer_cycles;
  load_a.cold = true;
  Op load_b = load_a;
  load_b.bytes = cols * unit.k.size() * b_bytes;
  loads = {load_a, load_b};
  // Mul and ReduceSum: two vector passes over every product.
  uint64_t vec_cycles = chip_.VectorCycles(2, rows * cols * unit.k.size());
  // 16-bit operands (the advisor's AIV path; CANN's TO_MUL is fp32 only) are
  // first cast to fp32 in UB: one more pass over every loaded element, at
  // the fp32 element rate.
  if (a_bytes == 2 || b_bytes == 2) {
    vec_cycles += chip_.VectorCycles(1, (rows + cols) * unit.k.size());
  }
  return vec_cycles;
}

void Builder::EmitAivUnit(CoreProgram& program, const WorkUnit& unit, std::vector<Op>& loads,
                          uint64_t vec_cycles, const AivFlags& flags) {
  if (!loads.empty()) {
    Wait(loads.front(), flags.ub_free);
    Set(loads.back(), flags.in_ready);
    for (const Op& load : loads) Push(program, Pipe::kMte2, load);
    Op vec;
    vec.cycles = std::max<uint64_t>(1, vec_cycles);
    Wait(vec, flags.in_ready);
    Set(vec, flags.out_ready);
    Push(program, Pipe::kVec, vec);
  }
  Op store;
  store.kind = OpKind::kGmWrite;
  store.traffic = Traffic::kUbOut;
  store.port_bytes_per_cycle = chip_.mte3_gm_bytes_per_cycle;
  store.bytes = unit.m.size() * unit.n.size() * tiling::DataTypeBytes(problem_.dtype_c);
  if (!loads.empty()) {
    Wait(store, flags.out_ready);
    Set(store, flags.ub_free);
  }
  Push(program, Pipe::kMte3, store);
}

void Builder::EmitUbEpilogue(uint32_t aiv, uint64_t rows, uint64_t cols) {
  UbEpilogue& e = ub_epilogues_[aiv];
  ++e.program.units;
  const PipelineConfig& pipeline = options_.pipeline;
  Op relu;
  // The epilogue's passes over the fp32 half tile (ReLU and the cast to C's
  // type: two).
  relu.cycles = std::max<uint64_t>(1, chip_.VectorCycles(pipeline.ub_vector_passes, rows * cols));
  if (pipeline.ub_x3_bytes_per_element > 0) {
    // x3's rows of the half tile, read by MTE2 into a buffer of its own
    // while the cube works (the wait on x3_free keeps one in flight).
    Op load;
    load.kind = OpKind::kGmRead;
    load.traffic = Traffic::kUbIn;
    load.bytes = rows * cols * pipeline.ub_x3_bytes_per_element;
    load.cycles = chip_.arch.mte2_transfer_cycles;
    Wait(load, e.x3_free);
    Set(load, e.x3_ready);
    Push(e.program, Pipe::kMte2, load);
    Wait(relu, e.x3_ready);
    Set(relu, e.x3_free);
  }
  Wait(relu, e.ub_ready);
  Set(relu, e.vec_done);
  Push(e.program, Pipe::kVec, relu);
  Op store;
  store.kind = OpKind::kGmWrite;
  store.traffic = Traffic::kUbOut;
  store.port_bytes_per_cycle = chip_.mte3_gm_bytes_per_cycle;
  store.bytes = rows * cols * tiling::DataTypeBytes(problem_.dtype_c);
  store.cycles = chip_.arch.mte2_transfer_cycles;
  Wait(store, e.vec_done);
  Set(store, e.ub_free);
  Push(e.program, Pipe::kMte3, store);
}

void Builder::EmitAntiquantStage(uint32_t core, uint64_t elements) {
  AntiquantAiv& q = antiquant_[core];
  const PipelineConfig& pipeline = options_.pipeline;
  ++q.program.units;
  // Each AIV of the pair takes half of the stage; they run side by side.
  const uint64_t half = CeilDiv(elements, 2);
  Op load;
  load.kind = OpKind::kGmRead;
  load.traffic = Traffic::kUbIn;
  load.bytes = PackedBytes(half, pipeline.b_antiquant_bits);
  load.cycles = chip_.arch.mte2_transfer_cycles;
  Wait(load, q.b_free);
  Set(load, q.in_ready);
  Push(q.program, Pipe::kMte2, load);
  Op vec;
  vec.cycles = std::max<uint64_t>(1, chip_.VectorCycles(pipeline.b_antiquant_passes, half));
  Wait(vec, q.in_ready);
  Set(vec, q.vec_done);
  Push(q.program, Pipe::kVec, vec);
  // UB -> L1 in x's dtype, then the cross-core flag to the AIC.
  Op store;
  store.cycles = chip_.arch.mte2_transfer_cycles +
                 CeilDiv(half * tiling::DataTypeBytes(problem_.dtype_a), kMte3BytesPerCycle);
  Wait(store, q.vec_done);
  Set(store, q.b_ready);
  Push(q.program, Pipe::kMte3, store);
}

void Builder::EmitRelayTile(uint32_t core, const BlockAt& block) {
  const RelayEpilogue& relay = options_.pipeline.relay;
  RelayCore& rc = relay_[core];
  const uint64_t aivs = rc.aivs.size();
  struct Pass {
    uint64_t rows = 0, cols = 0;
  };
  std::vector<std::vector<Pass>> passes(aivs);
  // The passes over `rows` x `cols` of the tile, pass_rows x pass_cols
  // each, dealt by `deal`.
  const auto cut = [&](uint64_t rows, uint64_t cols, const auto& deal) {
    const uint64_t pass_rows = relay.pass_rows != 0 ? relay.pass_rows : std::max<uint64_t>(1, rows);
    const uint64_t pass_cols = relay.pass_cols != 0 ? relay.pass_cols : std::max<uint64_t>(1, cols);
    for (uint64_t r = 0; r < rows; r += pass_rows) {
      for (uint64_t c = 0; c < cols; c += pass_cols) {
        deal(Pass{std::min(pass_rows, rows - r), std::min(pass_cols, cols - c)});
      }
    }
  };
  switch (relay.split) {
    case RelaySplit::kHalves: {
      const uint64_t upper = CeilDiv(block.sm, aivs);
      for (uint64_t a = 0; a < aivs; ++a) {
        const uint64_t begin = std::min(block.sm, a * upper);
        const uint64_t rows = std::min(block.sm, begin + upper) - begin;
        cut(rows, block.sn, [&](Pass pass) { passes[a].push_back(pass); });
      }
      break;
    }
    case RelaySplit::kSingle:
      cut(block.sm, block.sn, [&](Pass pass) { passes[0].push_back(pass); });
      break;
    case RelaySplit::kAlternate:
      // The pass counter runs across the core's tiles; pass p goes to AIV
      // (p + 1) % 2.
      cut(block.sm, block.sn, [&](Pass pass) { passes[(rc.passes++ + 1) % aivs].push_back(pass); });
      break;
  }
  const uint64_t c_bytes = tiling::DataTypeBytes(problem_.dtype_c);
  for (uint64_t a = 0; a < aivs; ++a) {
    RelayAiv& v = rc.aivs[a];
    ++v.program.units;
    // The tile's signal, and the per-column scale of the tile when the
    // epilogue dequantizes.
    Op head;
    if (relay.column_scale && !passes[a].empty()) {
      head.kind = OpKind::kGmRead;
      head.traffic = Traffic::kUbIn;
      head.bytes = block.sn * kFp32Bytes;
      head.cycles = chip_.arch.mte2_transfer_cycles;
      head.cold = true;
    }
    Wait(head, v.tile_ready);
    if (passes[a].empty()) {
      Set(head, v.release);
      Push(v.program, Pipe::kMte2, head);
      continue;
    }
    Push(v.program, Pipe::kMte2, head);
    for (size_t i = 0; i < passes[a].size(); ++i) {
      const Pass& pass = passes[a][i];
      const uint64_t elements = pass.rows * pass.cols;
      Op load;
      load.kind = OpKind::kGmRead;
      load.traffic = Traffic::kUbIn;
      load.workspace = relay.column_scale;
      load.bytes = elements * relay.in_bytes_per_element;
      load.cycles = chip_.arch.mte2_transfer_cycles;
      if (relay.row_scale) {
        // The pass's per-token scales: a transfer of their own.
        load.bytes += pass.rows * kFp32Bytes;
        load.cycles += chip_.arch.mte2_transfer_cycles;
      }
      load.cold = true;
      Wait(load, v.in_free);
      Set(load, v.in_ready);
      if (i + 1 == passes[a].size()) Set(load, v.release);
      Push(v.program, Pipe::kMte2, load);
      Op vec;
      vec.cycles = std::max<uint64_t>(1, chip_.VectorCycles(relay.vector_passes, elements));
      Wait(vec, v.in_ready);
      Wait(vec, v.out_free);
      Set(vec, v.in_free);
      Set(vec, v.out_ready);
      Push(v.program, Pipe::kVec, vec);
      Op store;
      store.kind = OpKind::kGmWrite;
      store.traffic = Traffic::kUbOut;
      store.port_bytes_per_cycle = chip_.mte3_gm_bytes_per_cycle;
      store.bytes = elements * c_bytes;
      store.cycles = chip_.arch.mte2_transfer_cycles;
      Wait(store, v.out_ready);
      Set(store, v.out_free);
      Push(v.program, Pipe::kMte3, store);
    }
  }
}

absl::Status Builder::BuildAiv(uint32_t core, const std::vector<const WorkUnit*>& units) {
  CoreProgram program;
  program.kind = CoreKind::kAiv;
  program.core = core;
  program.units = static_cast<uint32_t>(units.size());
  AivFlags flags;
  flags.in_ready = NewFlag(CoreKind::kAiv, core, "MTE2_V event", 0);
  flags.out_ready = NewFlag(CoreKind::kAiv, core, "V_MTE3 event", 0);
  flags.ub_free = NewFlag(CoreKind::kAiv, core, "MTE3_MTE2 event", 0, 1);
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
    std::vector<Op> loads;
    uint64_t vec_cycles = 0;
    switch (unit->op) {
      case UnitOp::kReduce:
        vec_cycles = ReduceLoads(*unit, loads);
        break;
      case UnitOp::kVectorMul:
        vec_cycles = VectorMulLoads(*unit, loads);
        break;
      case UnitOp::kClear:
        break;
      case UnitOp::kMmad:
        return absl::InternalError("MMAD unit scheduled on an AIV core");
    }
    EmitAivUnit(program, *unit, loads, vec_cycles, flags);
  }
  RETURN_IF_ERROR(CheckOps());
  set_.cores.push_back(std::move(program));
  return absl::OkStatus();
}

std::vector<uint64_t> Builder::CoreClassKey(CoreKind kind,
                                            const std::vector<const WorkUnit*>& units) const {
  // Programs depend on the units' sizes, not their place in C: the block,
  // stage and chunk loops run relative to each unit's origin. Besides the
  // sizes, an AIC unit's program depends on the flags below and, with a
  // resident band, on whether it keeps the previous unit's band; an AIV
  // unit's on the partial sums it reduces.
  const bool a_band = schedule_.l1_residency == tiling::L1Residency::kABand;
  const bool b_band = schedule_.l1_residency == tiling::L1Residency::kBBand;
  std::vector<uint64_t> key;
  key.reserve(units.size() * 6);
  for (size_t u = 0; u < units.size(); ++u) {
    const WorkUnit& unit = *units[u];
    key.push_back(static_cast<uint64_t>(unit.op));
    key.push_back(unit.m.size());
    key.push_back(unit.n.size());
    key.push_back(unit.k.size());
    // The transposed kernels' y rows are aligned or not by where the unit
    // sits in y (UnalignedOutputRows()).
    if (options_.pipeline.strided.has_value()) {
      key.push_back(unit.m.begin);
      key.push_back(unit.n.begin);
    }
    if (kind == CoreKind::kAic) {
      const bool same_band =
          u > 0 && ((a_band && units[u - 1]->m == unit.m) || (b_band && units[u - 1]->n == unit.n));
      const bool same_tile =
          schedule_.batches_share_loads && u > 0 && units[u - 1]->tile_idx == unit.tile_idx;
      key.push_back(uint64_t{unit.writes_partial} | uint64_t{unit.k_slice == 0} << 1 |
                    uint64_t{unit.signals_aiv} << 2 | uint64_t{unit.reduction != -1} << 3 |
                    uint64_t{same_band} << 4 | uint64_t{same_tile} << 5);
    } else if (unit.op == UnitOp::kReduce) {
      const tiling::ReductionGroup& group = schedule_.reductions[unit.reduction];
      key.push_back(group.slots.size());
      key.push_back(group.workspace_row_stride);
    }
  }
  return key;
}

absl::Status Builder::BuildCores(CoreKind kind, uint32_t count,
                                 const std::vector<std::vector<const WorkUnit*>>& units,
                                 bool share) {
  // Each class's program is written for its first core; a later core of the
  // class adds its operations to the count (and the work limit) as if its
  // own were written, so limits and errors come out as without sharing.
  std::map<std::vector<uint64_t>, size_t> classes;
  for (uint32_t core = 0; core < count; ++core) {
    if (share) {
      const auto [it, added] =
          classes.try_emplace(CoreClassKey(kind, units[core]), set_.cores.size());
      if (!added) {
        CoreProgram& program = set_.cores[it->second];
        program.replicas.push_back(core);
        for (const std::vector<Op>& pipe : program.pipes) set_.total_ops += pipe.size();
        RETURN_IF_ERROR(CheckOps());
        continue;
      }
    }
    RETURN_IF_ERROR(kind == CoreKind::kAic ? BuildAic(core, units[core])
                                           : BuildAiv(core, units[core]));
  }
  return absl::OkStatus();
}

absl::StatusOr<ProgramSet> Builder::Build() {
  uint32_t aic_count = schedule_.aic_cores, aiv_count = schedule_.aiv_cores;
  for (const WorkUnit& unit : schedule_.units) {
    uint32_t& count = unit.core_kind == CoreKind::kAic ? aic_count : aiv_count;
    count = std::max(count, unit.core + 1);
  }
  std::vector<std::vector<const WorkUnit*>> aic_units(aic_count), aiv_units(aiv_count);
  for (const WorkUnit& unit : schedule_.units) {
    (unit.core_kind == CoreKind::kAic ? aic_units : aiv_units)[unit.core].push_back(&unit);
  }
  const bool stream_k = schedule_.model == tiling::KernelModel::kStreamK ||
                        schedule_.model == tiling::KernelModel::kStreamKSplitK;
  if (stream_k) {
    for (uint32_t aiv = 0; aiv < schedule_.aiv_cores; ++aiv) {
      aic_sync_flags_.push_back(
          NewCrossCoreFlag(absl::StrCat("AIC_SYNC_AIV to AIV ", aiv, " from AIC ", aiv / 2)));
    }
    sync_all_ = NewCrossCoreFlag("SyncAll of the AIV cores");
    set_.flags[sync_all_].barrier = true;
    set_.flags[sync_all_].participants = schedule_.aiv_cores;
  }
  if (options_.pipeline.output_through_ub && schedule_.aiv_cores == 0) {
    // Two UB stages per AIV when two half tiles fit: FIXPIPE fills one while
    // MTE3 drains the other.
    const uint64_t half_tile = CeilDiv(schedule_.base_m, 2) * schedule_.base_n * kFp32Bytes;
    const uint32_t ub_stages = 2 * half_tile <= chip_.spec.ub_bytes ? 2 : 1;
    ub_epilogues_.resize(2 * schedule_.aic_cores);
    for (uint32_t aiv = 0; aiv < ub_epilogues_.size(); ++aiv) {
      UbEpilogue& e = ub_epilogues_[aiv];
      e.program.kind = CoreKind::kAiv;
      e.program.core = aiv;
      const std::string prefix = absl::StrCat("AIV ", aiv, " ");
      e.ub_ready = NewCrossCoreFlag(absl::StrCat(prefix, "FIX_V from AIC ", aiv / 2));
      e.ub_free = NewCrossCoreFlag(absl::StrCat(prefix, "MTE3_FIX to AIC ", aiv / 2));
      set_.flags[e.ub_free].initial_sets = ub_stages;
      e.vec_done = NewFlag(CoreKind::kAiv, aiv, "V_MTE3 event", 0);
      if (options_.pipeline.ub_x3_bytes_per_element > 0) {
        e.x3_ready = NewFlag(CoreKind::kAiv, aiv, "MTE2_V event", 1);
        e.x3_free = NewFlag(CoreKind::kAiv, aiv, "V_MTE2 event", 1, 1);
      }
    }
  }
  if (options_.pipeline.b_antiquant_passes > 0 && schedule_.aiv_cores == 0) {
    antiquant_.resize(schedule_.aic_cores);
    const uint32_t l1_stages_b = std::clamp<uint32_t>(options_.pipeline.l1_stages_b, 1, 2);
    for (uint32_t aic = 0; aic < antiquant_.size(); ++aic) {
      AntiquantAiv& q = antiquant_[aic];
      q.program.kind = CoreKind::kAiv;
      q.program.core = 2 * aic;
      const std::string prefix = absl::StrCat("AIV ", 2 * aic, " ");
      q.b_ready = NewCrossCoreFlag(absl::StrCat(prefix, "antiquant B stage to AIC ", aic));
      q.b_free = NewCrossCoreFlag(absl::StrCat(prefix, "B stage freed by AIC ", aic));
      set_.flags[q.b_free].initial_sets = l1_stages_b;
      q.in_ready = NewFlag(CoreKind::kAiv, 2 * aic, "MTE2_V event", 2);
      q.vec_done = NewFlag(CoreKind::kAiv, 2 * aic, "V_MTE3 event", 3);
    }
  }
  const RelayEpilogue& relay = options_.pipeline.relay;
  if (relay.aivs > 0 && schedule_.aiv_cores == 0) {
    relay_.resize(schedule_.aic_cores);
    for (uint32_t aic = 0; aic < relay_.size(); ++aic) {
      relay_[aic].aivs.resize(relay.aivs);
      for (uint32_t a = 0; a < relay.aivs; ++a) {
        RelayAiv& v = relay_[aic].aivs[a];
        const uint32_t core = relay.aivs * aic + a;
        v.program.kind = CoreKind::kAiv;
        v.program.core = core;
        const std::string prefix = absl::StrCat("AIV ", core, " ");
        v.tile_ready = NewCrossCoreFlag(absl::StrCat(prefix, "tile in GM from AIC ", aic));
        v.release = NewCrossCoreFlag(absl::StrCat(prefix, "slot released to AIC ", aic));
        set_.flags[v.release].initial_sets = relay.slots;
        v.in_ready = NewFlag(CoreKind::kAiv, core, "MTE2_V event", 0);
        v.in_free = NewFlag(CoreKind::kAiv, core, "V_MTE2 event", 0, 2);
        v.out_ready = NewFlag(CoreKind::kAiv, core, "V_MTE3 event", 0);
        v.out_free = NewFlag(CoreKind::kAiv, core, "MTE3_V event", 0, 2);
      }
    }
  }
  // Only Stream-K's flags and the UB epilogue's, the relay's and
  // antiquant's cross cores (AIC -> AIV, SyncAll, FIXPIPE <-> AIV, AIV ->
  // MTE1): without them every core's timeline is its own, and identical
  // programs time alike.
  const bool share = options_.share_identical_cores && !stream_k && ub_epilogues_.empty() &&
                     antiquant_.empty() && relay_.empty();
  RETURN_IF_ERROR(BuildCores(CoreKind::kAic, schedule_.aic_cores, aic_units, share));
  RETURN_IF_ERROR(BuildCores(CoreKind::kAiv, schedule_.aiv_cores, aiv_units, share));
  for (UbEpilogue& e : ub_epilogues_) set_.cores.push_back(std::move(e.program));
  for (AntiquantAiv& q : antiquant_) set_.cores.push_back(std::move(q.program));
  for (RelayCore& rc : relay_) {
    for (RelayAiv& v : rc.aivs) set_.cores.push_back(std::move(v.program));
  }
  return std::move(set_);
}

}  // namespace internal

std::string FlagName(const FlagInfo& flag) {
  if (!flag.name.empty()) return flag.name;
  std::string name = absl::StrCat(tiling::CoreKindName(flag.kind), " ", flag.core, " ", flag.what);
  if (flag.event >= 0) absl::StrAppend(&name, " ", flag.event);
  return name;
}

PipelineConfig PipelineForPlan(const tiling::TilingPlan& plan) {
  PipelineConfig pipeline;
  pipeline.l0c_stages = static_cast<uint32_t>(std::max<uint64_t>(1, plan.block.l0c_db));
  return pipeline;
}

namespace {

// GroupedMatmul's kernels: the struct's L0C buffers and B's K per L1 stage
// (baseK * stepKb; the MX basic API's kBL1), an NZ weight loaded as it is;
// the quant path's vector dequant (KERNEL_TYPE 1) and per-group / per-block
// (2) kernels take C through the AIVs' UB as QuantBatchMatmulV3's mix
// kernels do, its fixpipe and MX kernels dequantize on the way out of L0C;
// the weight-quant kernels dequantize the weight on the AIVs into L1, as
// WeightQuantBatchMatmulV2's.
PipelineConfig GroupedPipeline(const tiling::TilingPlan& plan,
                               const tiling::MatmulProblem& problem) {
  using tiling::GroupedTensor;
  PipelineConfig pipeline;
  const tiling::BlockTiling block = tiling::KernelBlock(plan, problem);
  // dbL0C: one or two output tiles in flight (a word an explicit tiling may
  // set to anything).
  pipeline.l0c_stages = block.l0c_db >= 2 ? 2 : 1;
  const tiling::GroupedTensorList& weight = problem.grouped[GroupedTensor::kWeight];
  pipeline.b_nz = weight.format == tiling::Format::kFractalNz;
  if (plan.data.kernel == tiling::KernelId::kGroupedQuantBasicApi) {
    pipeline.k_l1_b = tiling::Get(plan.data, tiling::GmmQuantBasicApiField::kKBL1).value_or(0);
  } else {
    pipeline.k_l1_b = block.base_k * std::max<uint64_t>(1, block.step_kb);
  }
  uint64_t k = 0;
  if (absl::StatusOr<tiling::grouped::GmmGroups> groups =
          tiling::grouped::GroupsOf(problem.grouped);
      groups.ok()) {
    for (const tiling::grouped::GmmGroup& g : groups->groups) k = std::max(k, g.k);
  }
  if (plan.data.kernel == tiling::KernelId::kGroupedQuant) {
    const uint64_t kernel_type = (plan.key.grouped_bits >> 4) & 0xF;
    if (kernel_type == 2) {
      pipeline.output_through_ub = true;
      pipeline.ub_vector_passes = static_cast<uint32_t>(
          kQuantPerBlockPassesPerGroup * tiling::CeilDiv(k, 128) + kCastVectorPasses);
    } else if (kernel_type == 1) {
      // The vector dequant: the scale, the per-token scale, a float bias of
      // INT8 x (an int32 one starts L0C), the activation, the cast.
      const tiling::GroupedTensorList& bias = problem.grouped[GroupedTensor::kBias];
      const bool bias_epilogue = bias.present() && bias.dtype != tiling::DataType::kInt32 &&
                                 problem.grouped[GroupedTensor::kX].dtype ==
                                     tiling::DataType::kInt8;
      uint32_t activation = 0;
      switch (problem.grouped.act_type) {
        case 1:
          activation = kReluVectorPasses;
          break;
        case 2:
          activation = kGeluTanhGateVectorPasses;
          break;
        case 4:
        case 5:
          activation = kSigmoidGateVectorPasses;
          break;
        default:
          break;
      }
      pipeline.output_through_ub = true;
      pipeline.ub_vector_passes =
          kDequantVectorPasses +
          (problem.grouped[GroupedTensor::kPerTokenScale].present() ? kPerTokenVectorPasses : 0) +
          (bias_epilogue ? kBiasVectorPasses : 0) + activation + kCastVectorPasses;
    }
  }
  if (plan.data.kernel == tiling::KernelId::kGroupedWeightQuant) {
    // The kernel x's dtype selects (grouped_matmul_apt.cpp): A8W4's (int8
    // x) widens the weight to int8 and dequantizes C on the AIVs, whose
    // matmul hands C to UB as int32 (weight_quant_vcv_basic_block.h);
    // MX-A8W4's (float8_e4m3fn x) rewrites the weight as float8; the A16
    // kernels cast, add the offset and scale.
    const tiling::DataType x = problem.grouped[GroupedTensor::kX].dtype;
    if (x == tiling::DataType::kInt8) {
      pipeline.b_antiquant_passes = kA8W4AntiquantVectorPasses;
      pipeline.output_through_ub = true;
      pipeline.ub_vector_passes =
          kA8W4DequantVectorPasses +
          (problem.grouped[GroupedTensor::kBias].present() ? kBiasVectorPasses : 0);
    } else if (x == tiling::DataType::kFloat8E4M3) {
      pipeline.b_antiquant_passes = kMxA8W4AntiquantVectorPasses;
    } else {
      pipeline.b_antiquant_passes =
          kAntiquantVectorPasses +
          (problem.grouped[GroupedTensor::kAntiquantOffset].present() ? 1 : 0);
    }
    // The GM read is at the codes' width: a packed INT32 / FLOAT32 weight
    // holds eight 4-bit codes per word.
    const tiling::DataType code =
        weight.dtype == tiling::DataType::kInt32
            ? tiling::DataType::kInt4
            : (weight.dtype == tiling::DataType::kFloat32 ? tiling::DataType::kFloat4E2M1
                                                          : weight.dtype);
    pipeline.b_antiquant_bits = tiling::DataTypeBits(code);
    pipeline.l1_stages_b = std::clamp<uint32_t>(
        static_cast<uint32_t>(block.depth_b1 / std::max<uint64_t>(1, block.step_kb)), 1, 2);
  }
  return pipeline;
}

}  // namespace

PipelineConfig PipelineForPlan(const tiling::TilingPlan& plan,
                               const tiling::MatmulProblem& problem) {
  PipelineConfig pipeline = PipelineForPlan(plan);
  if (problem.op == tiling::MatmulOp::kGroupedMatmul) return GroupedPipeline(plan, problem);
  if (problem.op == tiling::MatmulOp::kWeightQuantBatchMatmulV2) {
    // The weight reaches L1 through the AIVs' antiquant; its L1 holds x's
    // dtype, and the GM read is at the weight's packed width.
    pipeline.b_nz = problem.format_b == tiling::Format::kFractalNz;
    pipeline.b_antiquant_passes =
        kAntiquantVectorPasses + (problem.quant.antiquant_offset.present ? 1 : 0);
    const tiling::DataType code =
        problem.dtype_b == tiling::DataType::kInt32
            ? tiling::DataType::kInt4
            : (problem.dtype_b == tiling::DataType::kFloat32 ? tiling::DataType::kFloat4E2M1
                                                             : problem.dtype_b);
    pipeline.b_antiquant_bits = tiling::DataTypeBits(code);
    pipeline.l1_stages_b = std::clamp<uint32_t>(
        static_cast<uint32_t>(plan.block.depth_b1 / std::max<uint64_t>(1, plan.block.step_kb)), 1,
        2);
    return pipeline;
  }
  if (problem.op == tiling::MatmulOp::kQuantBatchMatmulV3) {
    pipeline.b_nz = problem.format_b == tiling::Format::kFractalNz;
    // TransposeQuantBatchMatMul's kernels stage L1 as its high-level struct
    // says.
    if (const auto stages = KernelTraitsOf(plan.data.kernel).stages) stages(plan, pipeline);
    if (IsMxProblem(problem)) {
      // The MX kernels move the e8m0 scales scaleKL1 of K at a time.
      const std::optional<uint64_t> scale_k = plan.data.Get("scaleKL1").has_value()
                                                  ? plan.data.Get("scaleKL1")
                                                  : plan.data.Get("matmulTiling.scaleKL1");
      pipeline.scale_k_l1 =
          std::max<uint64_t>(std::max(plan.block.k_l1, plan.block.base_k), scale_k.value_or(0));
      pipeline.scale_b_kn = !problem.trans_b;
    }
    // The kernels with a vector epilogue (the key's KERNELTYPE VEC_EPILOGUE_*
    // other than Stream-K's, whose AIVs reduce the partial sums) hand C to
    // the AIC's two AIVs through UB; the others dequantize in the cube (MX)
    // or the FIXPIPE.
    const uint8_t kernel = plan.key.quant_kernel;
    const bool vec_epilogue = kernel == kQuantKernelVecEpilogue ||
                              kernel == kQuantKernelVecAFullLoad ||
                              kernel == kQuantKernelPerBlock ||
                              kernel == kQuantKernelVecAbFullLoad || kernel == kQuantKernelVecBatch;
    if (plan.kernel_type == tiling::KernelType::kMixed1To2 && vec_epilogue) {
      pipeline.output_through_ub = true;
      const uint64_t group_k = static_cast<uint64_t>(problem.quant.group_size_k);
      pipeline.ub_vector_passes =
          kernel == kQuantKernelPerBlock && group_k > 0
              ? static_cast<uint32_t>(
                    kQuantPerBlockPassesPerGroup *
                        tiling::CeilDiv(static_cast<uint64_t>(problem.k), group_k) +
                    kCastVectorPasses)
              : kDequantVectorPasses +
                    (problem.quant.pertoken.present ? kPerTokenVectorPasses : 0) +
                    (problem.has_bias ? kBiasVectorPasses : 0) + kCastVectorPasses;
    }
    return pipeline;
  }
  if (!tiling::OperatorSpecOf(problem.op).batched) return pipeline;
  if (const auto stages = KernelTraitsOf(plan.data.kernel).stages) stages(plan, pipeline);
  if (problem.op == tiling::MatmulOp::kFusedMatMul) {
    switch (problem.fused.op) {
      case tiling::FusedOp::kAdd:
      case tiling::FusedOp::kMul:
        pipeline.output_through_ub = true;
        pipeline.ub_vector_passes = kAddMulVectorPasses;
        pipeline.ub_x3_bytes_per_element = tiling::DataTypeBytes(problem.dtype_a);
        return pipeline;
      case tiling::FusedOp::kGeluErf:
        pipeline.output_through_ub = true;
        pipeline.ub_vector_passes = kGeluErfVectorPasses;
        return pipeline;
      case tiling::FusedOp::kGeluTanh:
        pipeline.output_through_ub = true;
        pipeline.ub_vector_passes = kGeluTanhVectorPasses;
        return pipeline;
      default:
        break;
    }
  }
  if (plan.key.l0c2out == tiling::L0cToOut::kNdFixpipe1To2) {
    pipeline.output_through_ub = true;
    pipeline.ub_vector_passes = 0;
  }
  return pipeline;
}

absl::StatusOr<ProgramSet> BuildPrograms(const tiling::Schedule& schedule,
                                         const tiling::TilingPlan& plan,
                                         const tiling::MatmulProblem& problem,
                                         const ChipModel& chip, const ProgramOptions& options) {
  internal::Builder builder(schedule, plan, problem, chip, options);
  return builder.Build();
}

}  // namespace npu::emu
