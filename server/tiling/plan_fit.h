// The bytes a cube plan occupies in each on-chip buffer of one AIC, and the
// check that they fit the chip.
//
// One formula per buffer, shared by the engine (`CheckPlanFits()` in
// registry.h, which rejects a plan its strategy built) and the emulator
// (`CheckBuffers()` in emulator/program.h, which names the tiling field of an
// explicit plan at fault). The formulas are the kernel's actual use, the same
// the emulator's instruction streams load: L0A / L0B in two ping-pong halves,
// L0C holding l0cDB fp32 output blocks, the bias table one fp32 row of the
// block, and L1 the two ping-pong stages of each streamed operand (kL1 deep;
// stepKa / stepKb base_k slices next to a fully loaded matrix), a whole
// resident matrix (padded to the 16-element fractal, as the NZ layout stores
// it) or a resident band of it. The bias row staged through L1 is not
// counted: CANN's heuristics size the A / B buffers to leave it room (the
// streamed branch keeps 1 KiB back, full load stays within 3/4 of L1), and
// CANN's own fit check does not count it, so counting it would turn plans
// CANN runs into errors. Each caller words its own error. Part of
// `npu_tiling_types`.
#ifndef NPU_SERVER_TILING_PLAN_FIT_H_
#define NPU_SERVER_TILING_PLAN_FIT_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "server/tiling/types.h"

namespace npu::tiling {

// On-chip buffers of an AIC, in the order FindBufferOverflow() checks them.
enum class CubeBuffer : uint8_t { kL0a, kL0b, kL0c, kBiasTable, kL1 };

// "L0A", "L0B", "L0C", "BT", "L1".
std::string_view CubeBufferName(CubeBuffer buffer);

// Bytes a plan needs in each buffer of one AIC.
struct CubeBufferDemand {
  uint64_t l0a_bytes = 0;
  uint64_t l0b_bytes = 0;
  uint64_t l0c_bytes = 0;
  uint64_t bias_table_bytes = 0;
  uint64_t l1_bytes = 0;
  // The parts of l1_bytes: A (stages, whole matrix or band) and B.
  uint64_t l1_a_bytes = 0;
  uint64_t l1_b_bytes = 0;
  // The K depth of one streamed L1 stage: max(kL1, baseK).
  uint64_t stage_k = 0;
};

// Computes the buffer demand of a cube plan (kernel_type other than
// kAivOnly) for `problem`, from its block tiling, full-load mode and L1
// residency.
CubeBufferDemand ComputeCubeBufferDemand(const TilingPlan& plan, const MatmulProblem& problem);

// A buffer whose demand exceeds the chip.
struct BufferOverflow {
  CubeBuffer buffer = CubeBuffer::kL0a;
  uint64_t need_bytes = 0;
  uint64_t have_bytes = 0;
};

// Returns the first buffer (in CubeBuffer order) that `demand` overflows on
// `chip`, or nothing when every buffer fits.
std::optional<BufferOverflow> FindBufferOverflow(const CubeBufferDemand& demand,
                                                 const ChipSpec& chip);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_PLAN_FIT_H_
