// What the emulator needs to know of each kernel family beyond the engine's
// kernel table (server/tiling/kernel_table.h): one row per tiling::KernelId,
// each hook null where the family runs as the default does. PipelineForPlan()
// (program.cc), EstimateEmulationWork() (work_estimate.cc) and CheckBuffers()
// (buffers.cc) look the plan's row up; a new kernel family adds a row here
// when it stages, counts or faults differently.
#ifndef NPU_EMULATOR_KERNEL_TRAITS_H_
#define NPU_EMULATOR_KERNEL_TRAITS_H_

#include <cstdint>
#include <string_view>

#include "emulator/program.h"
#include "server/tiling/plan_fit.h"
#include "server/tiling/types.h"

namespace npu::emu {

// The tiling field that sizes an overflowing cube buffer, and its value.
struct BufferFaultField {
  std::string_view name;
  uint64_t value = 0;
};

struct KernelTraits {
  tiling::KernelId id = tiling::KernelId::kUnstructured;
  // Sets the L1 / L0C stages the struct describes on top of the plan's
  // defaults (null: PipelineForPlan(plan) as it is).
  void (*stages)(const tiling::TilingPlan& plan, PipelineConfig& pipeline) = nullptr;
  // The work units of a vector-only kernel over `batch` C batches (null: by
  // the key's model, from MatMulV3's vector structs).
  uint64_t (*vector_units)(const tiling::TilingPlan& plan, uint64_t batch) = nullptr;
  // The field an overflow of `buffer` is blamed on, for the structs that size
  // every buffer by their own counts (null: the block's fields).
  BufferFaultField (*buffer_fault)(const tiling::TilingPlan& plan,
                                   tiling::CubeBuffer buffer) = nullptr;
};

// The row of `kernel`.
const KernelTraits& KernelTraitsOf(tiling::KernelId kernel);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_KERNEL_TRAITS_H_
