#include "emulator/l2_traffic.h"

#include <algorithm>
#include <list>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"

namespace npu::emu {
namespace {

using tiling::CeilDiv;
using tiling::Range;
using tiling::WorkUnit;

// Least-recently-used footprint model of L2: an entry touched recently
// enough that the bytes touched since fit in L2 is a hit.
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

// GM regions the model tells apart.
enum class Region : uint64_t { kA = 1, kB = 2, kC = 3, kWorkspace = 4 };

uint64_t Key(Region region, uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t h = static_cast<uint64_t>(region) * 0x9E3779B97F4A7C15ull;
  for (uint64_t v : {a, b, c, d}) {
    h ^= (v + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h = (h << 31) | (h >> 33);
  }
  return h;
}

// K parts a unit's reads are followed in, at most.
constexpr uint32_t kSlices = 8;

// Bytes of `elements` values of `bits` each, as stored.
uint64_t Bytes(uint64_t elements, uint64_t bits) { return CeilDiv(elements * bits, 8); }

class Estimator {
 public:
  Estimator(const tiling::Schedule& schedule, const tiling::MatmulProblem& problem,
            const tiling::ChipSpec& chip, bool b_per_group)
      : schedule_(schedule),
        b_per_group_(b_per_group),
        problem_(problem),
        l2_(chip.l2_bytes),
        a_bits_(tiling::DataTypeBits(problem.dtype_a)),
        b_bits_(tiling::DataTypeBits(problem.dtype_b)),
        c_bytes_(tiling::DataTypeBytes(problem.dtype_c)),
        stage_k_(std::max<uint64_t>(1, std::max(schedule.k_l1, schedule.base_k))) {
    // Batches read their own A and B (broadcast ones shared): the keys
    // carry the operand batch, so one batch's B is no L2 hit for another's.
    absl::StatusOr<tiling::BatchShape> walk = tiling::BatchShapeOf(problem);
    if (walk.ok() && walk->batch > 1) walk_ = *std::move(walk);
  }

  GmReadMix Run() {
    // Cores of one round walk K side by side: each unit's K is visited in
    // up to kSlices parts, part by part across the round's cores.
    struct Visit {
      uint32_t round;
      uint32_t slice;
      bool aic;
      uint32_t core;
      const WorkUnit* unit;
    };
    std::vector<Visit> order;
    order.reserve(schedule_.units.size() * 2);
    for (const WorkUnit& unit : schedule_.units) {
      const uint32_t slices = unit.op == tiling::UnitOp::kMmad ? SlicesOf(unit) : 1;
      for (uint32_t s = 0; s < slices; ++s) {
        order.push_back(
            {unit.round, s, unit.core_kind == tiling::CoreKind::kAic, unit.core, &unit});
      }
    }
    std::stable_sort(order.begin(), order.end(), [](const Visit& x, const Visit& y) {
      if (x.round != y.round) return x.round < y.round;
      if (x.aic != y.aic) return x.aic;
      if (x.slice != y.slice) return x.slice < y.slice;
      return x.core < y.core;
    });
    for (const Visit& visit : order) VisitUnit(*visit.unit, visit.slice);
    return mix_;
  }

 private:
  uint32_t SlicesOf(const WorkUnit& unit) const {
    return static_cast<uint32_t>(
        std::clamp<uint64_t>(CeilDiv(unit.k.size(), stage_k_), 1, kSlices));
  }

  // Part `slice` of `slices` of `k`, cut at multiples of the L1 stage.
  Range SliceOf(const Range& k, uint32_t slice, uint32_t slices) const {
    const uint64_t stages = CeilDiv(k.size(), stage_k_);
    const uint64_t begin = k.begin + stages * slice / slices * stage_k_;
    const uint64_t end = k.begin + stages * (slice + 1) / slices * stage_k_;
    return {std::min(begin, k.end), std::min(end, k.end)};
  }

  void Read(uint64_t key, uint64_t panel_bytes, uint64_t read_bytes) {
    const bool hit = l2_.Touch(key, panel_bytes);
    (hit ? mix_.l2_read_bytes : mix_.ddr_read_bytes) += panel_bytes;
    mix_.l2_read_bytes += read_bytes > panel_bytes ? read_bytes - panel_bytes : 0;
  }

  // A resident matrix or band is read once, while it stays in the core's L1.
  void ReadResident(std::vector<Range>& resident, uint32_t core, Region region, Range range,
                    uint64_t elem_bits) {
    if (resident.size() <= core) resident.resize(core + 1, Range{1, 0});
    if (resident[core] == range) return;
    resident[core] = range;
    const uint64_t k = static_cast<uint64_t>(problem_.k);
    const uint64_t bytes = Bytes(range.size() * k, elem_bits);
    Read(Key(region, range.begin, range.end, 0, k), bytes, bytes);
  }

  // A's rows of `unit` in A's batch-major row space, and B's batch offset
  // (in columns) for the keys.
  Range ARows(const WorkUnit& unit) const {
    if (!walk_.has_value()) return unit.m;
    const uint64_t base = walk_->ABatch(unit.batch) * walk_->rows;
    const uint64_t local = unit.m.begin - uint64_t{unit.batch} * walk_->rows;
    return {base + local, base + local + unit.m.size()};
  }
  uint64_t BOffset(const WorkUnit& unit) const {
    if (b_per_group_) return uint64_t{unit.batch} * static_cast<uint64_t>(problem_.n);
    return walk_.has_value() ? walk_->BBatch(unit.batch) * static_cast<uint64_t>(problem_.n) : 0;
  }

  void VisitMmad(const WorkUnit& unit, uint32_t slice) {
    using tiling::FullLoad;
    const bool a_full = schedule_.full_load == FullLoad::kA || schedule_.full_load == FullLoad::kAB;
    const bool b_full = schedule_.full_load == FullLoad::kB || schedule_.full_load == FullLoad::kAB;
    const bool a_band = schedule_.l1_residency == tiling::L1Residency::kABand;
    const bool b_band = schedule_.l1_residency == tiling::L1Residency::kBBand;
    const uint32_t slices = SlicesOf(unit);
    const Range part = SliceOf(unit.k, slice, slices);
    const uint64_t m = unit.m.size(), n = unit.n.size(), k = part.size();
    // Inside a unit A is re-read per base-block column and B per row.
    const uint64_t blocks_m = CeilDiv(m, std::max<uint64_t>(1, schedule_.base_m));
    const uint64_t blocks_n = CeilDiv(n, std::max<uint64_t>(1, schedule_.base_n));
    const Range a_rows = ARows(unit);
    const uint64_t b_off = BOffset(unit);
    if (a_full || a_band) {
      if (slice == 0) {
        const uint64_t walked =
            schedule_.batch_rows > 0 ? schedule_.batch_rows : static_cast<uint64_t>(problem_.m);
        const uint64_t a_base = a_rows.begin - a_rows.begin % walked;
        const Range rows = a_full ? Range{a_base, a_base + walked} : a_rows;
        ReadResident(resident_a_, unit.core, Region::kA, rows, a_bits_);
      }
    } else {
      Read(Key(Region::kA, a_rows.begin, a_rows.end, part.begin, part.end), Bytes(m * k, a_bits_),
           Bytes(m * k, a_bits_) * blocks_n);
    }
    if (b_full || b_band) {
      if (slice == 0) {
        const Range cols = b_full ? Range{b_off, b_off + static_cast<uint64_t>(problem_.n)}
                                  : Range{b_off + unit.n.begin, b_off + unit.n.end};
        ReadResident(resident_b_, unit.core, Region::kB, cols, b_bits_);
      }
    } else {
      Read(Key(Region::kB, b_off + unit.n.begin, b_off + unit.n.end, part.begin, part.end),
           Bytes(n * k, b_bits_), Bytes(n * k, b_bits_) * blocks_m);
    }
    if (slice + 1 != slices) return;
    if (unit.writes_partial) {
      l2_.Touch(Key(Region::kWorkspace, unit.workspace_slot, 0, 0, 0),
                tiling::kWorkspaceSlotElements * tiling::kFp32Bytes);
    } else {
      l2_.Touch(Key(Region::kC, unit.m.begin, unit.m.end, unit.n.begin, unit.n.end),
                m * n * c_bytes_);
    }
  }

  void VisitUnit(const WorkUnit& unit, uint32_t slice) {
    switch (unit.op) {
      case tiling::UnitOp::kMmad:
        VisitMmad(unit, slice);
        return;
      case tiling::UnitOp::kReduce: {
        const tiling::ReductionGroup& group = schedule_.reductions[unit.reduction];
        const uint64_t bytes = unit.m.size() * group.workspace_row_stride * tiling::kFp32Bytes;
        for (uint32_t slot : group.slots) {
          Read(Key(Region::kWorkspace, slot, 0, 0, 0), bytes, bytes);
        }
        return;
      }
      case tiling::UnitOp::kVectorMul: {
        const uint64_t k = unit.k.size();
        const Range a_rows = ARows(unit);
        const uint64_t b_off = BOffset(unit);
        Read(Key(Region::kA, a_rows.begin, a_rows.end, unit.k.begin, unit.k.end),
             Bytes(unit.m.size() * k, a_bits_), Bytes(unit.m.size() * k, a_bits_));
        Read(Key(Region::kB, b_off + unit.n.begin, b_off + unit.n.end, unit.k.begin, unit.k.end),
             Bytes(unit.n.size() * k, b_bits_), Bytes(unit.n.size() * k, b_bits_));
        return;
      }
      case tiling::UnitOp::kClear:
        return;
    }
  }

  const tiling::Schedule& schedule_;
  const bool b_per_group_;
  const tiling::MatmulProblem& problem_;
  L2Model l2_;
  // Bits per element of A and B (4-bit types pack two per byte), bytes of C's.
  uint64_t a_bits_, b_bits_, c_bytes_;
  uint64_t stage_k_;
  std::vector<Range> resident_a_, resident_b_;
  GmReadMix mix_;
  std::optional<tiling::BatchShape> walk_;
};

}  // namespace

GmReadMix EstimateGmReadMix(const tiling::Schedule& schedule, const tiling::MatmulProblem& problem,
                            const tiling::ChipSpec& chip, bool b_per_group) {
  return Estimator(schedule, problem, chip, b_per_group).Run();
}

}  // namespace npu::emu
