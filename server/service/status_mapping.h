// The edge between Abseil and gRPC statuses on the server side.
//
// The tiling library speaks `absl::Status`; the RPC layer speaks
// `grpc::Status`. The two code spaces are numerically identical (both are
// google.rpc.Code), so the mapping is a cast plus the message. The client
// library has the reverse, `FromGrpcStatus()`, in client/tiling_client.h.
#ifndef NPU_SERVER_SERVICE_STATUS_MAPPING_H_
#define NPU_SERVER_SERVICE_STATUS_MAPPING_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::server {

// Converts `status` into the gRPC status sent to the client, keeping the code
// and the message.
grpc::Status ToGrpcStatus(const absl::Status& status);

// The canonical upper-case name of `code`, e.g. "INVALID_ARGUMENT", as used in
// the proto's ItemStatus.code_name.
absl::string_view CodeName(absl::StatusCode code);

// `status` as the wire's per-item status (a batch item, a graph problem):
// its code number, CodeName() and message.
void StatusToItem(const absl::Status& status, npu::tiling::v1::ItemStatus* item);

// `status` with its message prefixed by the request field path `prefix`
// ("problem: m=0 is outside ..."), code kept; OK stays OK. Engine messages
// name engine fields; this names the wire field they came from.
// Inline, as every request passes here with OK.
absl::Status PrefixedError(absl::string_view prefix, const absl::Status& status);
inline absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return PrefixedError(prefix, status);
}

// The error of a failed StrategyRegistry::Decide() for the wire, its message
// prefixed with the request field it is about, as every input error is:
// "forced_strategy: " when the forced strategy is unknown (kNotFound) or
// cannot apply (kFailedPrecondition); "problem: " when the engine cannot tile
// this problem on this chip although it passed validation (kInvalidArgument
// from a strategy, e.g. K_EQUAL_ZERO's 32-bit totalDataAmount, or
// kFailedPrecondition with no strategy forced). Other codes (kInternal: an
// engine bug) are returned unchanged.
absl::Status DecisionError(const absl::Status& status, bool strategy_forced);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_STATUS_MAPPING_H_
