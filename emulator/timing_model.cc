#include "emulator/timing_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"

namespace npu::emu {
namespace {

struct PipeState {
  const std::vector<Op>* ops = nullptr;
  size_t next = 0;
  uint8_t waits_done = 0;
  uint64_t time = 0;
  uint64_t end_floor = 0;  // the op's earliest end (a wait that bounds its end)
  uint64_t busy = 0;
  uint64_t port_cycles = 0;  // pure transfer time of the pipe's port
  bool blocked = false;
  uint32_t blocked_on = 0;
  // When the pipe's previous op ended (0 before the first).
  uint64_t last_end = 0;
  // The last op that touched L1 banks (MTE2: the write in flight).
  uint64_t bank_op_start = 0, bank_op_end = 0;
  uint8_t bank_op_banks = 0;
};

struct FlagState {
  std::vector<uint64_t> set_times;
  size_t consumed = 0;
  std::vector<uint32_t> waiters;  // pipe indices
};

using tiling::CeilDiv;

// One run of the timing model: the pipes of every core, the flags, the
// chip-wide channels and the L2, advanced event by event.
class Simulator {
 public:
  // `aiv_draw`: bytes per cycle the AIV cores read from GM on average,
  // which the AIC cores' reads leave to them (RunTiming()).
  Simulator(const ProgramSet& programs, const ChipModel& chip, const TimingOptions& options,
            double aiv_draw = 0);
  // Bytes the AIC and the AIV cores read from GM.
  double aic_read_bytes() const { return aic_read_bytes_; }
  double aiv_read_bytes() const { return aiv_read_bytes_; }

  // Runs every pipe to its end or to a deadlock.
  absl::Status Run();
  // Reports a pipe left waiting on a flag nobody will set.
  absl::Status CheckDeadlock() const;
  // Fills the per-core and chip statistics and the bound.
  EmulatorStats Collect();

 private:
  // (time, core, pipe): the processing order of ready pipe heads.
  using Event = std::tuple<uint64_t, uint32_t, uint32_t>;

  void Wake(uint32_t flag, uint64_t at);
  // Passes the op's waits in order; false when one is not yet satisfied and
  // the pipe is parked on its flag.
  bool PassWaits(uint32_t id, PipeState& pipe, const Op& op);
  // Counts `cores` simulated operations (one op of a program that stands
  // for that many cores) against the cancellation flag and the work limit.
  absl::Status CountEvent(uint64_t cores);
  // Executes `op` from `start` and returns its completion time; its traffic
  // counts `cores` times.
  uint64_t Execute(const Op& op, uint64_t start, bool aiv, uint64_t cores, PipeState& pipe);
  uint64_t ReadGm(const Op& op, uint64_t start, bool aiv, uint64_t cores, PipeState& pipe);
  uint64_t WriteGm(const Op& op, uint64_t start, bool aiv, uint64_t cores, PipeState& pipe);
  void FillMsprof();
  void ChooseBound(const std::array<uint64_t, kPipeCount>& max_busy,
                   const std::array<uint64_t, kPipeCount>& max_port);

  const ProgramSet& programs_;
  const ChipModel& chip_;
  const TimingOptions& options_;
  std::vector<PipeState> pipes_;
  std::vector<FlagState> flags_;
  // Cores each program stands for: itself and its replicas.
  std::vector<uint64_t> weight_;
  // Bytes per cycle one core gets: GM reads and writes, AIC and AIV.
  double aic_read_rate_ = 1, aiv_read_rate_ = 1, aic_write_rate_ = 1, aiv_write_rate_ = 1;
  // HBM, not L2, limits the chip's read bandwidth (the misses' share).
  bool hbm_bound_ = false;
  double aic_read_bytes_ = 0, aiv_read_bytes_ = 0;
  double write_chip_rate_ = 1;
  uint64_t read_bytes_ = 0;
  EmulatorStats stats_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  uint64_t events_ = 0;
};

Simulator::Simulator(const ProgramSet& programs, const ChipModel& chip,
                     const TimingOptions& options, double aiv_draw)
    : programs_(programs),
      chip_(chip),
      options_(options),
      pipes_(programs.cores.size() * kPipeCount),
      flags_(programs.flags.size()),
      weight_(programs.cores.size()) {
  for (size_t f = 0; f < flags_.size(); ++f) {
    flags_[f].set_times.assign(programs.flags[f].initial_sets, 0);
  }
  uint32_t active_aic = 0, active_aiv = 0;
  for (size_t c = 0; c < programs.cores.size(); ++c) {
    const CoreProgram& core = programs.cores[c];
    weight_[c] = 1 + core.replicas.size();
    if (core.units == 0) continue;
    (core.kind == tiling::CoreKind::kAic ? active_aic : active_aiv) +=
        static_cast<uint32_t>(weight_[c]);
  }
  // The chip's read bandwidth for this run's mix of L2 hits and misses:
  // every byte passes through L2, and the misses also through HBM, the two
  // working in parallel. With the read / write split the misses draw on the
  // DDR read port.
  double ddr_read = chip.ddr_bytes_per_cycle;
  double ddr_write = chip.ddr_bytes_per_cycle;
  if (options.gm_split.enabled) {
    auto port_rate = [&](uint32_t per_core) {
      return static_cast<double>(per_core == 0 ? chip.spec.ddr_bytes_per_cycle : per_core) *
             chip.spec.aic_num * chip.arch.hbm_read_efficiency;
    };
    ddr_read = std::min(ddr_read, port_rate(options.gm_split.read_bytes_per_cycle));
    ddr_write = std::min(ddr_write, port_rate(options.gm_split.write_bytes_per_cycle));
  }
  const double hit = options.read_mix.HitFraction();
  const double read_chip = hit >= 1.0 ? chip.l2_bytes_per_cycle
                                      : std::min(chip.l2_bytes_per_cycle, ddr_read / (1.0 - hit));
  // Writes land in L2 (write-back); with the split they are also written
  // back to DDR through its write port.
  write_chip_rate_ = options.gm_split.enabled ? std::min(chip.l2_bytes_per_cycle, ddr_write)
                                              : chip.l2_bytes_per_cycle;
  const double port = chip.arch.mte2_port_bytes_per_cycle;
  hbm_bound_ = read_chip < chip.l2_bytes_per_cycle;
  // When both core kinds read GM (a mix kernel relaying C through GM, the
  // Stream-K reduction), they share the chip's read bandwidth. The AIVs'
  // reads are small single transfers, bound by their own latency: they take
  // what they need, and the AIC cores' streamed reads share what is left
  // (`aiv_draw`, the AIVs' average draw in a first run, RunTiming()).
  const double aic_read_chip = std::max(read_chip - aiv_draw, read_chip / 2);
  aic_read_rate_ = std::min(port, aic_read_chip / std::max<uint32_t>(1, active_aic));
  aiv_read_rate_ = std::min(port, read_chip / std::max<uint32_t>(1, active_aiv));
  aic_write_rate_ = write_chip_rate_ / std::max<uint32_t>(1, active_aic);
  aiv_write_rate_ = write_chip_rate_ / std::max<uint32_t>(1, active_aiv);
  for (size_t c = 0; c < programs.cores.size(); ++c) {
    for (int p = 0; p < kPipeCount; ++p) {
      PipeState& pipe = pipes_[c * kPipeCount + p];
      pipe.ops = &programs.cores[c].pipes[p];
      if (!pipe.ops->empty()) {
        queue_.emplace(0, static_cast<uint32_t>(c), static_cast<uint32_t>(p));
      }
    }
  }
}

void Simulator::Wake(uint32_t flag, uint64_t at) {
  FlagState& state = flags_[flag];
  for (uint32_t waiter : state.waiters) {
    PipeState& pipe = pipes_[waiter];
    pipe.blocked = false;
    // A wait that bounds the op's end does not delay its start.
    const Op& op = (*pipe.ops)[pipe.next];
    const bool bounds_end = op.last_wait_bounds_end && pipe.waits_done + 1 == op.n_waits;
    if (!bounds_end) pipe.time = std::max(pipe.time, at);
    queue_.emplace(pipe.time, waiter / kPipeCount, waiter % kPipeCount);
  }
  state.waiters.clear();
}

bool Simulator::PassWaits(uint32_t id, PipeState& pipe, const Op& op) {
  while (pipe.waits_done < op.n_waits) {
    const uint32_t flag = op.waits[pipe.waits_done];
    FlagState& state = flags_[flag];
    const FlagInfo& info = programs_.flags[flag];
    bool parked = false;
    if (info.barrier) {
      if (state.set_times.size() < info.participants) {
        parked = true;
      } else {
        pipe.time =
            std::max(pipe.time, *std::max_element(state.set_times.begin(),
                                                  state.set_times.begin() + info.participants));
      }
    } else if (state.set_times.size() <= state.consumed) {
      parked = true;
    } else if (op.last_wait_bounds_end && pipe.waits_done + 1 == op.n_waits) {
      pipe.end_floor = state.set_times[state.consumed++] + op.tail_cycles;
    } else {
      pipe.time = std::max(pipe.time, state.set_times[state.consumed++]);
    }
    if (parked) {
      pipe.blocked = true;
      pipe.blocked_on = flag;
      state.waiters.push_back(id);
      return false;
    }
    ++pipe.waits_done;
  }
  return true;
}

absl::Status Simulator::CountEvent(uint64_t cores) {
  const uint64_t before = events_;
  events_ += cores;
  if ((before >> 12) != (events_ >> 12)) {  // every 4096 operations
    if (options_.cancelled != nullptr && options_.cancelled->load(std::memory_order_relaxed)) {
      return absl::CancelledError(
          absl::StrCat("emulation cancelled after ", events_, " simulated operations"));
    }
  }
  if (options_.max_events != 0 && events_ > options_.max_events) {
    return absl::ResourceExhaustedError(absl::StrCat("emulation exceeds the work limit of ",
                                                     options_.max_events, " simulated operations"));
  }
  return absl::OkStatus();
}

uint64_t Simulator::ReadGm(const Op& op, uint64_t start, bool aiv, uint64_t cores,
                           PipeState& pipe) {
  const double port = op.port_bytes_per_cycle != 0 ? static_cast<double>(op.port_bytes_per_cycle)
                                                   : chip_.arch.mte2_port_bytes_per_cycle;
  pipe.port_cycles += static_cast<uint64_t>(std::ceil(static_cast<double>(op.bytes) / port));
  // A prefetched read (double-buffered L1) streams at the port rate or the
  // core's share of the chip's bandwidth; a cold one at most at the rate its
  // own requests in flight sustain; either pays the transfer's fixed cost.
  // When HBM limits the chip, its queue of misses keeps it busy through
  // every core's fixed latencies: a transfer queued right behind the core's
  // previous one then takes its fixed cost and its bytes at its own rate,
  // or its bytes at its share of HBM, whichever is longer. A transfer that
  // finds the pipe idle pays its latency.
  double own = port;
  if (op.cold) own = std::min(own, chip_.arch.cold_read_bytes_per_cycle);
  const double share = aiv ? aiv_read_rate_ : aic_read_rate_;
  const double bytes_in = static_cast<double>(op.bytes);
  const double serial = static_cast<double>(op.cycles) + bytes_in / std::min(own, share);
  const bool queued = pipe.next > 0 && pipe.last_end == start;
  const double cycles =
      hbm_bound_ && queued
          ? std::max(static_cast<double>(op.cycles) + bytes_in / own, bytes_in / share)
          : serial;
  const uint64_t bytes = op.bytes * cores;
  (aiv ? aiv_read_bytes_ : aic_read_bytes_) += static_cast<double>(bytes);
  if (aiv) stats_.traffic.ub_in_bytes += bytes;
  if (op.workspace) stats_.traffic.workspace_bytes += bytes;
  read_bytes_ += bytes;
  return start + static_cast<uint64_t>(std::ceil(cycles));
}

uint64_t Simulator::WriteGm(const Op& op, uint64_t start, bool aiv, uint64_t cores,
                            PipeState& pipe) {
  const double port = static_cast<double>(op.port_bytes_per_cycle);
  pipe.port_cycles += static_cast<uint64_t>(std::ceil(static_cast<double>(op.bytes) / port));
  const double rate = std::min(port, aiv ? aiv_write_rate_ : aic_write_rate_);
  const uint64_t bytes = op.bytes * cores;
  stats_.traffic.gm_write_bytes += bytes;
  if (options_.gm_split.enabled) stats_.traffic.ddr_write_bytes += bytes;
  if (op.traffic == Traffic::kL0cOut) stats_.traffic.l0c_out_bytes += bytes;
  if (op.traffic == Traffic::kUbOut) stats_.traffic.ub_out_bytes += bytes;
  if (op.workspace) stats_.traffic.workspace_bytes += bytes;
  return start + op.cycles + static_cast<uint64_t>(std::ceil(static_cast<double>(op.bytes) / rate));
}

uint64_t Simulator::Execute(const Op& op, uint64_t start, bool aiv, uint64_t cores,
                            PipeState& pipe) {
  switch (op.kind) {
    case OpKind::kCycles:
      if (op.traffic == Traffic::kL1ToL0) stats_.traffic.l1_to_l0_bytes += op.bytes * cores;
      return start + op.cycles;
    case OpKind::kGmRead:
      return ReadGm(op, start, aiv, cores, pipe);
    case OpKind::kGmWrite:
      return WriteGm(op, start, aiv, cores, pipe);
  }
  return start;
}

absl::Status Simulator::Run() {
  while (!queue_.empty()) {
    auto [now, core, pipe_index] = queue_.top();
    queue_.pop();
    const uint32_t id = core * kPipeCount + pipe_index;
    PipeState& pipe = pipes_[id];
    const Op& op = (*pipe.ops)[pipe.next];
    if (!PassWaits(id, pipe, op)) continue;
    const uint64_t start = pipe.time;
    if (start > now) {
      // Resume in time order so shared channels are granted fairly.
      queue_.emplace(start, core, pipe_index);
      continue;
    }
    const uint64_t cores = weight_[core];
    if (absl::Status status = CountEvent(cores); !status.ok()) return status;
    const bool aiv = programs_.cores[core].kind == tiling::CoreKind::kAiv;
    uint64_t end = Execute(op, start, aiv, cores, pipe);
    if (op.l1_banks != 0) {
      if (pipe_index == static_cast<uint32_t>(Pipe::kMte2)) {
        pipe.bank_op_start = start;
        pipe.bank_op_end = end;
        pipe.bank_op_banks = op.l1_banks;
      } else if (pipe_index == static_cast<uint32_t>(Pipe::kMte1)) {
        // L1 writes take priority: a read of a bank MTE2 is writing slows.
        const PipeState& mte2 = pipes_[core * kPipeCount + static_cast<uint32_t>(Pipe::kMte2)];
        if ((mte2.bank_op_banks & op.l1_banks) != 0 && mte2.bank_op_start <= start &&
            start < mte2.bank_op_end) {
          end = start + static_cast<uint64_t>(std::ceil(static_cast<double>(end - start) *
                                                        (1.0 + kL1BankConflictSlowdown)));
        }
      }
    }
    end = std::max(end, pipe.end_floor);
    pipe.end_floor = 0;
    pipe.busy += end - start;
    pipe.time = end;
    pipe.last_end = end;
    for (uint8_t s = 0; s < op.n_sets; ++s) {
      const uint64_t at = (op.sets_at_start >> s) & 1 ? start : end;
      flags_[op.sets[s]].set_times.push_back(at);
      Wake(op.sets[s], at);
    }
    pipe.waits_done = 0;
    if (++pipe.next < pipe.ops->size()) queue_.emplace(end, core, pipe_index);
  }
  return absl::OkStatus();
}

absl::Status Simulator::CheckDeadlock() const {
  // Anything left is waiting for a flag nobody will set. Report the root
  // cause: a pipe waiting on a flag that no pending operation sets (the
  // others wait on its victims).
  std::vector<bool> pending_set(flags_.size(), false);
  uint64_t blocked = 0;
  for (uint32_t id = 0; id < pipes_.size(); ++id) {
    const PipeState& pipe = pipes_[id];
    if (pipe.ops == nullptr || pipe.next >= pipe.ops->size()) continue;
    blocked += weight_[id / kPipeCount];
    for (size_t i = pipe.next; i < pipe.ops->size(); ++i) {
      const Op& op = (*pipe.ops)[i];
      for (uint8_t s = 0; s < op.n_sets; ++s) pending_set[op.sets[s]] = true;
    }
  }
  const PipeState* first = nullptr;
  uint32_t first_id = 0;
  for (int pass = 0; pass < 2 && first == nullptr; ++pass) {
    for (uint32_t id = 0; id < pipes_.size(); ++id) {
      const PipeState& pipe = pipes_[id];
      if (pipe.ops == nullptr || pipe.next >= pipe.ops->size()) continue;
      if (pass == 0 && (!pipe.blocked || pending_set[pipe.blocked_on])) continue;
      first = &pipe;
      first_id = id;
      break;
    }
  }
  if (first == nullptr) return absl::OkStatus();
  const CoreProgram& program = programs_.cores[first_id / kPipeCount];
  return absl::InternalError(
      absl::StrCat("deadlock: ", tiling::CoreKindName(program.kind), " core ", program.core,
                   " pipe ", PipeName(static_cast<Pipe>(first_id % kPipeCount)),
                   " waits forever on flag \"", FlagName(programs_.flags[first->blocked_on]),
                   "\" at cycle ", first->time, " (", blocked, " pipes blocked)"));
}

EmulatorStats Simulator::Collect() {
  stats_.events = events_;
  std::array<uint64_t, kPipeCount> max_busy{}, max_port{};
  uint64_t kernel_cycles = 0;
  bool replicated = false;
  for (size_t c = 0; c < programs_.cores.size(); ++c) {
    const CoreProgram& program = programs_.cores[c];
    CoreStats core_stats;
    core_stats.kind = program.kind;
    core_stats.core = program.core;
    core_stats.units = program.units;
    for (int p = 0; p < kPipeCount; ++p) {
      const PipeState& pipe = pipes_[c * kPipeCount + p];
      core_stats.pipe_busy_cycles[p] = pipe.busy;
      core_stats.finish_cycle = std::max(core_stats.finish_cycle, pipe.time);
      stats_.pipe_busy_cycles[p] += pipe.busy * weight_[c];
      max_busy[p] = std::max(max_busy[p], pipe.busy);
      max_port[p] = std::max(max_port[p], pipe.port_cycles);
    }
    kernel_cycles = std::max(kernel_cycles, core_stats.finish_cycle);
    stats_.cores.push_back(core_stats);
    for (uint32_t replica : program.replicas) {
      core_stats.core = replica;
      stats_.cores.push_back(core_stats);
      replicated = true;
    }
  }
  // Every core in its place, as if each had its own program: AIC cores
  // first, then AIV, each kind in core order.
  if (replicated) {
    std::sort(stats_.cores.begin(), stats_.cores.end(), [](const CoreStats& x, const CoreStats& y) {
      const bool x_aic = x.kind == tiling::CoreKind::kAic, y_aic = y.kind == tiling::CoreKind::kAic;
      if (x_aic != y_aic) return x_aic;
      return x.core < y.core;
    });
  }
  // The read mix splits the bytes read between L2 and DDR.
  const double hit = options_.read_mix.HitFraction();
  stats_.traffic.l2_read_bytes = static_cast<uint64_t>(std::llround(hit * read_bytes_));
  stats_.traffic.ddr_read_bytes = read_bytes_ - stats_.traffic.l2_read_bytes;
  stats_.ddr_channel_busy_cycles = static_cast<uint64_t>(
      std::ceil(static_cast<double>(stats_.traffic.ddr_read_bytes) / chip_.ddr_bytes_per_cycle));
  stats_.l2_channel_busy_cycles = static_cast<uint64_t>(
      std::ceil(static_cast<double>(stats_.traffic.l2_read_bytes + stats_.traffic.gm_write_bytes) /
                chip_.l2_bytes_per_cycle));
  if (options_.gm_split.enabled) {
    stats_.ddr_write_channel_busy_cycles = static_cast<uint64_t>(
        std::ceil(static_cast<double>(stats_.traffic.ddr_write_bytes) / write_chip_rate_));
  }
  stats_.kernel_cycles = kernel_cycles;
  stats_.total_cycles = chip_.FixedTaskCycles() + kernel_cycles;
  stats_.microseconds = static_cast<double>(stats_.total_cycles) / chip_.cycles_per_us;
  const double peak = chip_.PeakMacsPerCycle(options_.dtype, options_.hf32) * chip_.spec.aic_num *
                      static_cast<double>(std::max<uint64_t>(1, stats_.total_cycles));
  stats_.cube_utilization = static_cast<double>(options_.useful_macs) / peak;
  ChooseBound(max_busy, max_port);
  FillMsprof();
  return std::move(stats_);
}

void Simulator::FillMsprof() {
  // msprof averages each pipe's busy time over the cores that ran.
  MsprofSummary& m = stats_.msprof;
  const double us = chip_.cycles_per_us;
  m.task_duration_us = stats_.microseconds;
  double aic_time = 0, aiv_time = 0;
  std::array<double, kPipeCount> aic{}, aiv{};
  // Programs of one core (a mix kernel's AIV that both dequantizes the
  // weight and runs the epilogue) count as one core: its busy pipes add up,
  // its time is the later finish.
  std::map<std::pair<tiling::CoreKind, uint32_t>, uint64_t> finish;
  for (const CoreStats& core : stats_.cores) {
    if (core.units == 0) continue;
    const bool is_aic = core.kind == tiling::CoreKind::kAic;
    uint64_t& last = finish[{core.kind, core.core}];
    last = std::max<uint64_t>(last, core.finish_cycle);
    for (int p = 0; p < kPipeCount; ++p) {
      (is_aic ? aic : aiv)[p] += static_cast<double>(core.pipe_busy_cycles[p]);
    }
  }
  for (const auto& [core, cycle] : finish) {
    const bool is_aic = core.first == tiling::CoreKind::kAic;
    (is_aic ? m.aic_cores : m.aiv_cores) += 1;
    (is_aic ? aic_time : aiv_time) += static_cast<double>(cycle);
  }
  auto average = [us](double total, uint32_t cores) {
    return cores == 0 ? 0.0 : total / cores / us;
  };
  auto ratio = [](double part, double whole) { return whole > 0 ? part / whole : 0.0; };
  m.aic_time_us = average(aic_time, m.aic_cores);
  m.aic_mac_time_us = average(aic[static_cast<int>(Pipe::kCube)], m.aic_cores);
  m.aic_mte1_time_us = average(aic[static_cast<int>(Pipe::kMte1)], m.aic_cores);
  m.aic_mte2_time_us = average(aic[static_cast<int>(Pipe::kMte2)], m.aic_cores);
  m.aic_fixpipe_time_us = average(aic[static_cast<int>(Pipe::kFixpipe)], m.aic_cores);
  m.aic_mac_ratio = ratio(m.aic_mac_time_us, m.aic_time_us);
  m.aic_mte1_ratio = ratio(m.aic_mte1_time_us, m.aic_time_us);
  m.aic_mte2_ratio = ratio(m.aic_mte2_time_us, m.aic_time_us);
  m.aic_fixpipe_ratio = ratio(m.aic_fixpipe_time_us, m.aic_time_us);
  m.aiv_time_us = average(aiv_time, m.aiv_cores);
  m.aiv_vec_time_us = average(aiv[static_cast<int>(Pipe::kVec)], m.aiv_cores);
  m.aiv_mte2_time_us = average(aiv[static_cast<int>(Pipe::kMte2)], m.aiv_cores);
  m.aiv_mte3_time_us = average(aiv[static_cast<int>(Pipe::kMte3)], m.aiv_cores);
  m.aiv_vec_ratio = ratio(m.aiv_vec_time_us, m.aiv_time_us);
  m.aiv_mte2_ratio = ratio(m.aiv_mte2_time_us, m.aiv_time_us);
  m.aiv_mte3_ratio = ratio(m.aiv_mte3_time_us, m.aiv_time_us);
}

void Simulator::ChooseBound(const std::array<uint64_t, kPipeCount>& max_busy,
                            const std::array<uint64_t, kPipeCount>& max_port) {
  // The bound: the resource with the highest occupancy over the run. Compute
  // pipes count their busy time; transfer pipes their pure port time (their
  // wall time includes waiting for the shared channels, which count apart).
  const std::pair<const char*, uint64_t> candidates[] = {
      {"CUBE", max_busy[static_cast<int>(Pipe::kCube)]},
      {"MTE1", max_busy[static_cast<int>(Pipe::kMte1)]},
      {"VEC", max_busy[static_cast<int>(Pipe::kVec)]},
      {"MTE2", max_port[static_cast<int>(Pipe::kMte2)]},
      {"FIXPIPE", max_port[static_cast<int>(Pipe::kFixpipe)]},
      {"MTE3", max_port[static_cast<int>(Pipe::kMte3)]},
      {"DDR", stats_.ddr_channel_busy_cycles},
      {"L2", stats_.l2_channel_busy_cycles},
  };
  uint64_t best = 0;
  stats_.bound = "LATENCY";
  for (const auto& [name, busy] : candidates) {
    if (busy > best) {
      best = busy;
      stats_.bound = name;
    }
  }
}

}  // namespace

absl::StatusOr<EmulatorStats> RunTiming(const ProgramSet& programs, const ChipModel& chip,
                                        const TimingOptions& options) {
  Simulator simulator(programs, chip, options);
  if (absl::Status status = simulator.Run(); !status.ok()) return status;
  if (absl::Status status = simulator.CheckDeadlock(); !status.ok()) return status;
  if (simulator.aic_read_bytes() == 0 || simulator.aiv_read_bytes() == 0) {
    return simulator.Collect();
  }
  // Both core kinds read GM: run again with the AIC cores' reads sharing the
  // chip's bandwidth with what the AIVs drew on average in the first run.
  const double aiv_bytes = simulator.aiv_read_bytes();
  const EmulatorStats first = simulator.Collect();
  Simulator shared(programs, chip, options,
                   aiv_bytes / static_cast<double>(std::max<uint64_t>(1, first.kernel_cycles)));
  if (absl::Status status = shared.Run(); !status.ok()) return status;
  return shared.Collect();
}

}  // namespace npu::emu
