// Problems on which CANN's own host tiling faults.
//
// CANN's tiling code divides by values that can be zero for valid inputs
// (k = 0 past K_EQUAL_ZERO, a 32-bit product that wraps to zero, a batch of
// 0). There the host process dies with SIGFPE and CANN gives no plan at
// all: its walk does not go on to the next strategy. One search of its
// never ends instead; the engine treats it the same way. The engine reports such a problem as
// FAILED_PRECONDITION with a message that says so, and marks the status so
// that the registry ends the walk where CANN's would end.
#ifndef NPU_SERVER_TILING_CANN_FAULT_H_
#define NPU_SERVER_TILING_CANN_FAULT_H_

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace npu::tiling {

inline constexpr char kCannFaultPayload[] = "npu.tiling/cann-divides-by-zero";

// How CANN's host tiling fails on a problem: it divides by zero (the
// process dies with SIGFPE), or a search of its never ends (the process
// hangs; TransposeQuantBatchMatMul's L1 depth search on an L1 smaller than
// one stage of blocks).
enum class CannFaultKind { kDividesByZero, kNeverEnds };

// FAILED_PRECONDITION: CANN's host tiling faults at `where` (a short account
// of the division and why its divisor is zero, or of the loop and why it
// never ends).
inline absl::Status CannFaultError(absl::string_view where,
                                   CannFaultKind kind = CannFaultKind::kDividesByZero) {
  absl::Status status = absl::FailedPreconditionError(
      absl::StrCat(kind == CannFaultKind::kDividesByZero
                       ? "CANN's host tiling divides by zero on this problem ("
                       : "CANN's host tiling never ends on this problem (",
                   where, "), so CANN has no plan"));
  status.SetPayload(kCannFaultPayload, absl::Cord(where));
  return status;
}

// Whether `status` came from CannFaultError (possibly re-worded on the way).
inline bool IsCannFault(const absl::Status& status) {
  return status.GetPayload(kCannFaultPayload).has_value();
}

inline constexpr char kWalkEndingPayload[] = "npu.tiling/walk-ends";

// FAILED_PRECONDITION for a capable strategy's failure that CANN's walk does
// not pass on to the next strategy (QuantBatchMatmulV3: any failure but
// GRAPH_PARAM_INVALID ends its walk).
inline absl::Status WalkEndingError(absl::string_view message) {
  absl::Status status = absl::FailedPreconditionError(message);
  status.SetPayload(kWalkEndingPayload, absl::Cord(message));
  return status;
}

// Whether `status` came from WalkEndingError.
inline bool IsWalkEnding(const absl::Status& status) {
  return status.GetPayload(kWalkEndingPayload).has_value();
}

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_CANN_FAULT_H_
