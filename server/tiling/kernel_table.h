// The kernel families the engine plans for, one row each.
//
// A plan names its kernel family (`plan.data.kernel`, set by the struct its
// strategy builds). Everything the engine knows about a family beyond its
// tiling-data struct (tiling_data.h) is in its row here: the kernel type a
// launch of a key runs as, the tile loops the device schedulers walk, the
// bytes it occupies in the cube buffers and the block sizes the cube works
// with. The schedule expansion, the buffer check, the explicit-tiling reader
// and the emulator look a row up instead of testing the struct's kind; a new
// kernel family is a new struct, a new KernelId and a new row. The emulator
// keeps its own rows by the same id (emulator/kernel_traits.h). Part of
// `npu_tiling_types`.
#ifndef NPU_SERVER_TILING_KERNEL_TABLE_H_
#define NPU_SERVER_TILING_KERNEL_TABLE_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/tiling/plan_fit.h"
#include "server/tiling/schedule.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/types.h"

namespace npu::tiling {

struct KernelRow {
  KernelId id = KernelId::kUnstructured;
  // Our name of the family, e.g. "BATCH_ITERATE".
  std::string_view name;
  // The kernel type a launch of `key` runs as.
  KernelType (*kernel_type)(const TilingKey& key) = nullptr;
  // The tile loops of `plan` over `walked` (the problem as the kernel walks
  // it: A's batch merged into M, see BatchShape) for `batch` C batches, as
  // the device schedulers of the family index them.
  absl::StatusOr<Schedule> (*expand)(const TilingPlan& plan, const MatmulProblem& walked,
                                     const ChipSpec& chip, uint64_t batch) = nullptr;
  // The bytes the plan occupies in each cube buffer of one AIC (plan_fit.h).
  CubeBufferDemand (*buffer_demand)(const TilingPlan& plan, const MatmulProblem& problem) = nullptr;
  // The block sizes the cube works with for `walked`: plan.block, or the
  // ones the struct carries.
  BlockTiling (*block)(const TilingPlan& plan, const MatmulProblem& walked) = nullptr;
  // The struct alone sets the block sizes (`block` reads them from it), so a
  // plan read back from its struct takes its BlockTiling from `block`.
  bool block_in_struct = false;
};

// The row of `kernel`.
const KernelRow& KernelRowOf(KernelId kernel);

// Every row, in KernelId order.
absl::Span<const KernelRow> KernelRows();

// The kernel type a launch of `key` by a kernel of `kernel` runs as.
inline KernelType KernelTypeOf(KernelId kernel, const TilingKey& key) {
  return KernelRowOf(kernel).kernel_type(key);
}

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_KERNEL_TABLE_H_
