#include "emulator/timing_model.h"

#include <algorithm>
#include <cmath>
#include <list>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"

namespace npu::emu {
namespace {

// Least-recently-used footprint model of the chip's L2: a region read or
// written recently enough that the bytes touched since fit in L2 is a hit.
class L2Model {
 public:
  explicit L2Model(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // Touches `key` of `bytes`; true when it was resident.
  bool Touch(uint64_t key, uint64_t bytes) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      if (it->second->second < bytes) {
        used_ += bytes - it->second->second;
        it->second->second = bytes;
        Evict();
      }
      return true;
    }
    lru_.emplace_front(key, bytes);
    index_[key] = lru_.begin();
    used_ += bytes;
    Evict();
    return false;
  }

 private:
  void Evict() {
    while (used_ > capacity_ && lru_.size() > 1) {
      used_ -= lru_.back().second;
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }

  uint64_t capacity_;
  uint64_t used_ = 0;
  std::list<std::pair<uint64_t, uint64_t>> lru_;
  std::unordered_map<uint64_t, std::list<std::pair<uint64_t, uint64_t>>::iterator> index_;
};

// A chip-wide channel granting bandwidth first come, first served in event
// order.
struct Channel {
  double bytes_per_cycle = 1;
  double free_at = 0;
  double busy = 0;

  // Reserves `bytes` no earlier than `start`; returns the completion time.
  double Reserve(uint64_t start, uint64_t bytes) {
    const double duration = static_cast<double>(bytes) / bytes_per_cycle;
    free_at = std::max(free_at, static_cast<double>(start)) + duration;
    busy += duration;
    return free_at;
  }
};

struct PipeState {
  const std::vector<Op>* ops = nullptr;
  size_t next = 0;
  uint8_t waits_done = 0;
  uint64_t time = 0;
  uint64_t busy = 0;
  uint64_t port_cycles = 0;  // pure transfer time of the pipe's port
  bool blocked = false;
  uint32_t blocked_on = 0;
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
  Simulator(const ProgramSet& programs, const ChipModel& chip, const TimingOptions& options);

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
  // Counts one simulated operation against the cancellation flag and the
  // work limit.
  absl::Status CountEvent();
  // Executes `op` from `start` and returns its completion time.
  uint64_t Execute(const Op& op, uint64_t start, bool aiv, PipeState& pipe);
  uint64_t ReadGm(const Op& op, uint64_t start, bool aiv, PipeState& pipe);
  uint64_t WriteGm(const Op& op, uint64_t start, PipeState& pipe);
  void ChooseBound(const std::array<uint64_t, kPipeCount>& max_busy,
                   const std::array<uint64_t, kPipeCount>& max_port);

  const ProgramSet& programs_;
  const ChipModel& chip_;
  const TimingOptions& options_;
  std::vector<PipeState> pipes_;
  std::vector<FlagState> flags_;
  Channel ddr_, l2_, ddr_read_, ddr_write_;
  L2Model l2_model_;
  EmulatorStats stats_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  uint64_t events_ = 0;
};

Simulator::Simulator(const ProgramSet& programs, const ChipModel& chip,
                     const TimingOptions& options)
    : programs_(programs),
      chip_(chip),
      options_(options),
      pipes_(programs.cores.size() * kPipeCount),
      flags_(programs.flags.size()),
      l2_model_(chip.spec.l2_bytes) {
  for (size_t f = 0; f < flags_.size(); ++f) {
    flags_[f].set_times.assign(programs.flags[f].initial_sets, 0);
  }
  ddr_ = Channel{static_cast<double>(chip.ddr_bytes_per_cycle)};
  l2_ = Channel{static_cast<double>(chip.l2_bytes_per_cycle)};
  auto port_rate = [&](uint32_t per_core) {
    return static_cast<double>(per_core == 0 ? chip.spec.ddr_bytes_per_cycle : per_core) *
           chip.spec.aic_num;
  };
  ddr_read_ = Channel{port_rate(options.gm_split.read_bytes_per_cycle)};
  ddr_write_ = Channel{port_rate(options.gm_split.write_bytes_per_cycle)};
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
    pipe.time = std::max(pipe.time, at);
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

absl::Status Simulator::CountEvent() {
  ++events_;
  if ((events_ & 4095) == 0) {
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

uint64_t Simulator::ReadGm(const Op& op, uint64_t start, bool aiv, PipeState& pipe) {
  const uint64_t port = CeilDiv(op.bytes, op.port_bytes_per_cycle);
  pipe.port_cycles += port;
  const bool hit = l2_model_.Touch(op.l2_key, op.bytes);
  Channel& channel = hit ? l2_ : ddr_;
  (hit ? stats_.traffic.l2_read_bytes : stats_.traffic.ddr_read_bytes) += op.bytes;
  double done = channel.Reserve(start, op.bytes);
  if (options_.gm_split.enabled && !hit) done = std::max(done, ddr_read_.Reserve(start, op.bytes));
  if (aiv) stats_.traffic.ub_in_bytes += op.bytes;
  if (op.workspace) stats_.traffic.workspace_bytes += op.bytes;
  return std::max(start + port, static_cast<uint64_t>(std::ceil(done)));
}

uint64_t Simulator::WriteGm(const Op& op, uint64_t start, PipeState& pipe) {
  // Writes are absorbed by L2 (write-back); the written region becomes
  // resident, which is what makes the Stream-K partials cheap to read.
  const uint64_t port = CeilDiv(op.bytes, op.port_bytes_per_cycle);
  pipe.port_cycles += port;
  l2_model_.Touch(op.l2_key, op.bytes);
  double done = l2_.Reserve(start, op.bytes);
  if (options_.gm_split.enabled) {
    // Write-back to DDR through the write port and the shared total.
    done = std::max(done,
                    std::max(ddr_write_.Reserve(start, op.bytes), ddr_.Reserve(start, op.bytes)));
    stats_.traffic.ddr_write_bytes += op.bytes;
  }
  stats_.traffic.gm_write_bytes += op.bytes;
  if (op.traffic == Traffic::kL0cOut) stats_.traffic.l0c_out_bytes += op.bytes;
  if (op.traffic == Traffic::kUbOut) stats_.traffic.ub_out_bytes += op.bytes;
  if (op.workspace) stats_.traffic.workspace_bytes += op.bytes;
  return std::max(start + port, static_cast<uint64_t>(std::ceil(done)));
}

uint64_t Simulator::Execute(const Op& op, uint64_t start, bool aiv, PipeState& pipe) {
  switch (op.kind) {
    case OpKind::kCycles:
      if (op.traffic == Traffic::kL1ToL0) stats_.traffic.l1_to_l0_bytes += op.bytes;
      return start + op.cycles;
    case OpKind::kGmRead:
      return ReadGm(op, start, aiv, pipe);
    case OpKind::kGmWrite:
      return WriteGm(op, start, pipe);
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
    if (absl::Status status = CountEvent(); !status.ok()) return status;
    const bool aiv = programs_.cores[core].kind == tiling::CoreKind::kAiv;
    const uint64_t end = Execute(op, start, aiv, pipe);
    pipe.busy += end - start;
    pipe.time = end;
    for (uint8_t s = 0; s < op.n_sets; ++s) {
      flags_[op.sets[s]].set_times.push_back(end);
      Wake(op.sets[s], end);
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
  uint32_t blocked = 0;
  for (const PipeState& pipe : pipes_) {
    if (pipe.ops == nullptr || pipe.next >= pipe.ops->size()) continue;
    ++blocked;
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
                   " waits forever on flag \"", programs_.flags[first->blocked_on].name,
                   "\" at cycle ", first->time, " (", blocked, " pipes blocked)"));
}

EmulatorStats Simulator::Collect() {
  stats_.events = events_;
  std::array<uint64_t, kPipeCount> max_busy{}, max_port{};
  for (size_t c = 0; c < programs_.cores.size(); ++c) {
    CoreStats core_stats;
    core_stats.kind = programs_.cores[c].kind;
    core_stats.core = programs_.cores[c].core;
    core_stats.units = programs_.cores[c].units;
    for (int p = 0; p < kPipeCount; ++p) {
      const PipeState& pipe = pipes_[c * kPipeCount + p];
      core_stats.pipe_busy_cycles[p] = pipe.busy;
      core_stats.finish_cycle = std::max(core_stats.finish_cycle, pipe.time);
      stats_.pipe_busy_cycles[p] += pipe.busy;
      max_busy[p] = std::max(max_busy[p], pipe.busy);
      max_port[p] = std::max(max_port[p], pipe.port_cycles);
    }
    stats_.total_cycles = std::max(stats_.total_cycles, core_stats.finish_cycle);
    stats_.cores.push_back(core_stats);
  }
  stats_.ddr_channel_busy_cycles = static_cast<uint64_t>(std::ceil(ddr_.busy));
  stats_.l2_channel_busy_cycles = static_cast<uint64_t>(std::ceil(l2_.busy));
  stats_.ddr_write_channel_busy_cycles = static_cast<uint64_t>(std::ceil(ddr_write_.busy));
  stats_.microseconds = static_cast<double>(stats_.total_cycles) / chip_.cycles_per_us;
  const double peak = chip_.PeakMacsPerCycle(options_.dtype, options_.hf32) * chip_.spec.aic_num *
                      static_cast<double>(std::max<uint64_t>(1, stats_.total_cycles));
  stats_.cube_utilization = static_cast<double>(options_.useful_macs) / peak;
  ChooseBound(max_busy, max_port);
  return std::move(stats_);
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
  return simulator.Collect();
}

}  // namespace npu::emu
