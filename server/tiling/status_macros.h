// Status propagation helpers for the tiling library and everything above it.
//
// Debian's Abseil (20220623) ships neither `absl/status/status_macros.h` nor a
// logging library, so this header carries the two macros the codebase uses.
#ifndef NPU_SERVER_TILING_STATUS_MACROS_H_
#define NPU_SERVER_TILING_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define NPU_STATUS_CONCAT_INNER_(a, b) a##b
#define NPU_STATUS_CONCAT_(a, b) NPU_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` yields a non-OK status.
#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    const ::absl::Status npu_status_ = (expr); \
    if (!npu_status_.ok()) return npu_status_; \
  } while (false)

#define NPU_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                               \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

// Assigns the value of a StatusOr expression to `lhs`, or returns its error.
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  NPU_ASSIGN_OR_RETURN_IMPL_(NPU_STATUS_CONCAT_(npu_statusor_, __LINE__), lhs, rexpr)

#endif  // NPU_SERVER_TILING_STATUS_MACROS_H_
