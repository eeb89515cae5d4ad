// Internal to `npu_emulator`: what the validation of a kernel schedule
// (kernel_schedule.cc) shares with its expansion (kernel_schedule_expand.cc):
// the L1 tile grid of C and the Stream-K split, whose rules the validation
// checks on the expanded units.
#ifndef NPU_EMULATOR_KERNEL_SCHEDULE_INTERNAL_H_
#define NPU_EMULATOR_KERNEL_SCHEDULE_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "emulator/kernel_schedule.h"
#include "server/tiling/schedule.h"
#include "server/tiling/types.h"

namespace npu::emu::internal {

// The L1 tile grid of C.
struct TileGrid {
  uint64_t m = 0, n = 0, k = 0;
  uint64_t l1_m = 0, l1_n = 0;
  uint64_t m_tiles = 0, n_tiles = 0;

  uint64_t tiles() const { return m_tiles * n_tiles; }
  tiling::Range MRange(uint64_t m_idx) const {
    return {m_idx * l1_m, std::min(m, (m_idx + 1) * l1_m)};
  }
  tiling::Range NRange(uint64_t n_idx) const {
    return {n_idx * l1_n, std::min(n, (n_idx + 1) * l1_n)};
  }
};

TileGrid MakeGrid(const KernelSchedule& kernel, const tiling::MatmulProblem& problem);

// The split of kStreamKDp: MN tiles of the data-parallel rounds, and the
// tail tiles split into `splits` K slices each.
struct StreamKSplit {
  uint64_t tail_tiles = 0;  // MN tiles % block_dim (all of them when fewer)
  uint64_t dp_tiles = 0;    // MN tiles run whole; a multiple of block_dim
  uint64_t splits = 1;      // K slices per tail tile (1 when there is no tail)
};

StreamKSplit MakeStreamKSplit(const KernelSchedule& kernel, const TileGrid& g);

// The K slices of one Stream-K tile: whole base_k steps, as even as
// possible (the first steps % splits slices take one step more), the last
// slice ending at K.
std::vector<tiling::Range> StreamKSlices(uint64_t k, uint64_t base_k, uint64_t splits);

// The units of a kStreamKDp schedule (the validation checks their UB).
absl::StatusOr<tiling::Schedule> ExpandStreamKDp(const KernelSchedule& kernel,
                                                 const tiling::MatmulProblem& problem);

}  // namespace npu::emu::internal

#endif  // NPU_EMULATOR_KERNEL_SCHEDULE_INTERNAL_H_
