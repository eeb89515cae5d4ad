#include "emulator/buffers.h"

#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "emulator/kernel_traits.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/plan_fit.h"

namespace npu::emu {
namespace {

using tiling::kFp32Bytes;
using tiling::kRuntimeWorkspaceBytes;

absl::Status TooBig(const std::string& field, uint64_t value, std::string_view buffer,
                    uint64_t need, uint64_t have) {
  return absl::InvalidArgumentError(absl::StrCat("tiling field ", field, "=", value, " overflows ",
                                                 std::string(buffer), ": needs ", need,
                                                 " bytes, the core has ", have));
}

// The cube buffers, by the formulas shared with the engine; the error names
// the tiling field that sizes the overflowing buffer.
absl::Status CheckCubeBuffers(const tiling::TilingPlan& plan, const tiling::MatmulProblem& problem,
                              const tiling::ChipSpec& spec) {
  const tiling::CubeBufferDemand demand = tiling::ComputeCubeBufferDemand(plan, problem);
  const std::optional<tiling::BufferOverflow> overflow = tiling::FindBufferOverflow(demand, spec);
  if (!overflow.has_value()) return absl::OkStatus();
  const tiling::BlockTiling& b = plan.block;
  const uint64_t need = overflow->need_bytes, have = overflow->have_bytes;
  if (const auto fault = KernelTraitsOf(plan.data.kernel).buffer_fault) {
    // The batch structs size every buffer by their batch counts.
    const BufferFaultField field = fault(plan, overflow->buffer);
    return TooBig(std::string(field.name), field.value, tiling::CubeBufferName(overflow->buffer),
                  need, have);
  }
  switch (overflow->buffer) {
    case tiling::CubeBuffer::kL0a:
      return TooBig(absl::StrCat("baseK (baseM=", b.base_m, ")"), b.base_k,
                    "L0A (two ping-pong halves of baseM x baseK)", need, have);
    case tiling::CubeBuffer::kL0b:
      return TooBig(absl::StrCat("baseK (baseN=", b.base_n, ")"), b.base_k,
                    "L0B (two ping-pong halves of baseK x baseN)", need, have);
    case tiling::CubeBuffer::kL0c: {
      const uint64_t l0c_db = std::max<uint64_t>(1, b.l0c_db);
      return TooBig(absl::StrCat("baseN (baseM=", b.base_m, ", l0cDB=", l0c_db, ")"), b.base_n,
                    "L0C (baseM x baseN fp32 x l0cDB)", need, have);
    }
    case tiling::CubeBuffer::kBiasTable:
      return TooBig("baseN", b.base_n, "the bias table", need, have);
    case tiling::CubeBuffer::kL1: {
      const tiling::FullLoad full = plan.key.full_load;
      const bool a_whole = full == tiling::FullLoad::kA || full == tiling::FullLoad::kAB ||
                           plan.l1_residency == tiling::L1Residency::kABand;
      const bool b_whole = full == tiling::FullLoad::kB || full == tiling::FullLoad::kAB ||
                           plan.l1_residency == tiling::L1Residency::kBBand;
      return TooBig(a_whole ? "mL1" : (b_whole ? "nL1" : "kL1"),
                    a_whole ? b.m_l1 : (b_whole ? b.n_l1 : demand.stage_k),
                    "L1 (A and B stages, the full-loaded matrix or the resident band, plus bias)",
                    need, have);
    }
  }
  return absl::OkStatus();
}

// Every partial sum lands inside the workspace the plan reserves
// (seeds/000 section 7, problem 1).
absl::Status CheckWorkspaceSlots(const tiling::Schedule& schedule, const tiling::TilingPlan& plan) {
  const uint64_t slot_bytes = tiling::kWorkspaceSlotElements * kFp32Bytes;
  const uint64_t capacity_slots = plan.workspace_bytes > kRuntimeWorkspaceBytes
                                      ? (plan.workspace_bytes - kRuntimeWorkspaceBytes) / slot_bytes
                                      : 0;
  for (const tiling::WorkUnit& unit : schedule.units) {
    if (unit.writes_partial && unit.workspace_slot >= capacity_slots) {
      return absl::InvalidArgumentError(absl::StrCat(
          "out of bounds: AIC core ", unit.core, " writes workspace slot ", unit.workspace_slot,
          " (byte offset ", kRuntimeWorkspaceBytes + uint64_t{unit.workspace_slot} * slot_bytes,
          ") past tiling field workspace_bytes=", plan.workspace_bytes,
          " (offsetWorkspace; seeds/000 section 7, problem 1)"));
    }
  }
  return absl::OkStatus();
}

// The AIV cores hold every K slice of one reduction band in UB at once.
absl::Status CheckReductionUb(const tiling::Schedule& schedule, const tiling::TilingPlan& plan,
                              const tiling::ChipSpec& spec) {
  for (const tiling::WorkUnit& unit : schedule.units) {
    if (unit.op != tiling::UnitOp::kReduce) continue;
    const tiling::ReductionGroup& group = schedule.reductions[unit.reduction];
    const uint64_t ub =
        group.slots.size() * unit.m.size() * group.workspace_row_stride * kFp32Bytes;
    if (ub > spec.ub_bytes) {
      return TooBig("skSingleCoreK", plan.block.single_core_k,
                    "UB (the K slices of one reduction band)", ub, spec.ub_bytes);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckBuffers(const tiling::Schedule& schedule, const tiling::TilingPlan& plan,
                          const tiling::MatmulProblem& problem, const ChipModel& chip) {
  if (schedule.aic_cores > 0 && schedule.base_m > 0) {
    if (absl::Status status = CheckCubeBuffers(plan, problem, chip.spec); !status.ok()) {
      return status;
    }
  }
  if (!schedule.reductions.empty()) {
    if (absl::Status status = CheckWorkspaceSlots(schedule, plan); !status.ok()) return status;
    if (absl::Status status = CheckReductionUb(schedule, plan, chip.spec); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace npu::emu
