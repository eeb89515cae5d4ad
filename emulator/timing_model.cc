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

}  // namespace

absl::StatusOr<EmulatorStats> RunTiming(const ProgramSet& programs, const ChipModel& chip,
                                        const TimingOptions& options) {
  const size_t core_count = programs.cores.size();
  std::vector<PipeState> pipes(core_count * kPipeCount);
  std::vector<FlagState> flags(programs.flags.size());
  for (size_t f = 0; f < flags.size(); ++f) {
    flags[f].set_times.assign(programs.flags[f].initial_sets, 0);
  }
  Channel ddr{static_cast<double>(chip.ddr_bytes_per_cycle)};
  Channel l2{static_cast<double>(chip.l2_bytes_per_cycle)};
  const GmReadWriteSplit& split = options.gm_split;
  auto port_rate = [&](uint32_t per_core) {
    return static_cast<double>(per_core == 0 ? chip.spec.ddr_bytes_per_cycle : per_core) *
           chip.spec.aic_num;
  };
  Channel ddr_read{port_rate(split.read_bytes_per_cycle)};
  Channel ddr_write{port_rate(split.write_bytes_per_cycle)};
  L2Model l2_model(chip.spec.l2_bytes);
  EmulatorStats stats;

  // (time, core, pipe): the processing order of ready pipe heads.
  using Event = std::tuple<uint64_t, uint32_t, uint32_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue;
  for (size_t c = 0; c < core_count; ++c) {
    for (int p = 0; p < kPipeCount; ++p) {
      PipeState& pipe = pipes[c * kPipeCount + p];
      pipe.ops = &programs.cores[c].pipes[p];
      if (!pipe.ops->empty()) queue.emplace(0, static_cast<uint32_t>(c), static_cast<uint32_t>(p));
    }
  }
  auto wake = [&](uint32_t flag, uint64_t at) {
    FlagState& state = flags[flag];
    for (uint32_t waiter : state.waiters) {
      PipeState& pipe = pipes[waiter];
      pipe.blocked = false;
      pipe.time = std::max(pipe.time, at);
      queue.emplace(pipe.time, waiter / kPipeCount, waiter % kPipeCount);
    }
    state.waiters.clear();
  };

  uint64_t events = 0;
  while (!queue.empty()) {
    auto [now, core, pipe_index] = queue.top();
    queue.pop();
    const uint32_t id = core * kPipeCount + pipe_index;
    PipeState& pipe = pipes[id];
    const Op& op = (*pipe.ops)[pipe.next];
    // Waits, in order; a wait that is not yet satisfied parks the pipe.
    bool parked = false;
    while (pipe.waits_done < op.n_waits) {
      const uint32_t flag = op.waits[pipe.waits_done];
      FlagState& state = flags[flag];
      const FlagInfo& info = programs.flags[flag];
      if (info.barrier) {
        if (state.set_times.size() < info.participants) {
          parked = true;
        } else {
          pipe.time = std::max(pipe.time, *std::max_element(state.set_times.begin(),
                                                            state.set_times.begin() +
                                                                info.participants));
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
        break;
      }
      ++pipe.waits_done;
    }
    if (parked) continue;
    const uint64_t start = pipe.time;
    if (start > now) {
      // Resume in time order so shared channels are granted fairly.
      queue.emplace(start, core, pipe_index);
      continue;
    }
    ++events;
    if ((events & 4095) == 0) {
      if (options.cancelled != nullptr && options.cancelled->load(std::memory_order_relaxed)) {
        return absl::CancelledError(
            absl::StrCat("emulation cancelled after ", events, " simulated operations"));
      }
    }
    if (options.max_events != 0 && events > options.max_events) {
      return absl::ResourceExhaustedError(
          absl::StrCat("emulation exceeds the work limit of ", options.max_events,
                       " simulated operations"));
    }
    uint64_t end = start;
    const bool aiv = programs.cores[core].kind == tiling::CoreKind::kAiv;
    switch (op.kind) {
      case OpKind::kCycles:
        end = start + op.cycles;
        if (op.traffic == Traffic::kL1ToL0) stats.traffic.l1_to_l0_bytes += op.bytes;
        break;
      case OpKind::kGmRead: {
        const uint64_t port = CeilDiv(op.bytes, op.port_bytes_per_cycle);
        pipe.port_cycles += port;
        const bool hit = l2_model.Touch(op.l2_key, op.bytes);
        Channel& channel = hit ? l2 : ddr;
        (hit ? stats.traffic.l2_read_bytes : stats.traffic.ddr_read_bytes) += op.bytes;
        double done = channel.Reserve(start, op.bytes);
        if (split.enabled && !hit) done = std::max(done, ddr_read.Reserve(start, op.bytes));
        end = std::max(start + port, static_cast<uint64_t>(std::ceil(done)));
        if (aiv) stats.traffic.ub_in_bytes += op.bytes;
        if (op.workspace) stats.traffic.workspace_bytes += op.bytes;
        break;
      }
      case OpKind::kGmWrite: {
        // Writes are absorbed by L2 (write-back); the written region becomes
        // resident, which is what makes the Stream-K partials cheap to read.
        const uint64_t port = CeilDiv(op.bytes, op.port_bytes_per_cycle);
        pipe.port_cycles += port;
        l2_model.Touch(op.l2_key, op.bytes);
        double done = l2.Reserve(start, op.bytes);
        if (split.enabled) {
          // Write-back to DDR through the write port and the shared total.
          done = std::max(
              done, std::max(ddr_write.Reserve(start, op.bytes), ddr.Reserve(start, op.bytes)));
          stats.traffic.ddr_write_bytes += op.bytes;
        }
        end = std::max(start + port, static_cast<uint64_t>(std::ceil(done)));
        stats.traffic.gm_write_bytes += op.bytes;
        if (op.traffic == Traffic::kL0cOut) stats.traffic.l0c_out_bytes += op.bytes;
        if (op.traffic == Traffic::kUbOut) stats.traffic.ub_out_bytes += op.bytes;
        if (op.workspace) stats.traffic.workspace_bytes += op.bytes;
        break;
      }
    }
    pipe.busy += end - start;
    pipe.time = end;
    for (uint8_t s = 0; s < op.n_sets; ++s) {
      flags[op.sets[s]].set_times.push_back(end);
      wake(op.sets[s], end);
    }
    pipe.waits_done = 0;
    if (++pipe.next < pipe.ops->size()) queue.emplace(end, core, pipe_index);
  }

  // Anything left is waiting for a flag nobody will set. Report the root
  // cause: a pipe waiting on a flag that no pending operation sets (the
  // others wait on its victims).
  std::vector<bool> pending_set(flags.size(), false);
  uint32_t blocked = 0;
  for (const PipeState& pipe : pipes) {
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
    for (uint32_t id = 0; id < pipes.size(); ++id) {
      const PipeState& pipe = pipes[id];
      if (pipe.ops == nullptr || pipe.next >= pipe.ops->size()) continue;
      if (pass == 0 && (!pipe.blocked || pending_set[pipe.blocked_on])) continue;
      first = &pipe;
      first_id = id;
      break;
    }
  }
  if (first != nullptr) {
    const CoreProgram& program = programs.cores[first_id / kPipeCount];
    return absl::InternalError(absl::StrCat(
        "deadlock: ", tiling::CoreKindName(program.kind), " core ", program.core, " pipe ",
        PipeName(static_cast<Pipe>(first_id % kPipeCount)), " waits forever on flag \"",
        programs.flags[first->blocked_on].name, "\" at cycle ", first->time, " (", blocked,
        " pipes blocked)"));
  }

  // Statistics.
  stats.events = events;
  std::array<uint64_t, kPipeCount> max_busy{}, max_port{};
  for (size_t c = 0; c < core_count; ++c) {
    CoreStats core_stats;
    core_stats.kind = programs.cores[c].kind;
    core_stats.core = programs.cores[c].core;
    core_stats.units = programs.cores[c].units;
    for (int p = 0; p < kPipeCount; ++p) {
      const PipeState& pipe = pipes[c * kPipeCount + p];
      core_stats.pipe_busy_cycles[p] = pipe.busy;
      core_stats.finish_cycle = std::max(core_stats.finish_cycle, pipe.time);
      stats.pipe_busy_cycles[p] += pipe.busy;
      max_busy[p] = std::max(max_busy[p], pipe.busy);
      max_port[p] = std::max(max_port[p], pipe.port_cycles);
    }
    stats.total_cycles = std::max(stats.total_cycles, core_stats.finish_cycle);
    stats.cores.push_back(core_stats);
  }
  stats.ddr_channel_busy_cycles = static_cast<uint64_t>(std::ceil(ddr.busy));
  stats.l2_channel_busy_cycles = static_cast<uint64_t>(std::ceil(l2.busy));
  stats.ddr_write_channel_busy_cycles = static_cast<uint64_t>(std::ceil(ddr_write.busy));
  stats.microseconds = static_cast<double>(stats.total_cycles) / chip.cycles_per_us;
  const double peak = chip.PeakMacsPerCycle(options.dtype, options.hf32) * chip.spec.aic_num *
                      static_cast<double>(std::max<uint64_t>(1, stats.total_cycles));
  stats.cube_utilization = static_cast<double>(options.useful_macs) / peak;
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
      {"DDR", stats.ddr_channel_busy_cycles},
      {"L2", stats.l2_channel_busy_cycles},
  };
  uint64_t best = 0;
  stats.bound = "LATENCY";
  for (const auto& [name, busy] : candidates) {
    if (busy > best) {
      best = busy;
      stats.bound = name;
    }
  }
  return stats;
}

}  // namespace npu::emu
