#include "server/service/status_mapping.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace npu::server {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl::StatusCode and grpc::StatusCode both enumerate google.rpc.Code.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::string_view CodeName(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return "OK";
    case absl::StatusCode::kCancelled:
      return "CANCELLED";
    case absl::StatusCode::kUnknown:
      return "UNKNOWN";
    case absl::StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case absl::StatusCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case absl::StatusCode::kNotFound:
      return "NOT_FOUND";
    case absl::StatusCode::kAlreadyExists:
      return "ALREADY_EXISTS";
    case absl::StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case absl::StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case absl::StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case absl::StatusCode::kAborted:
      return "ABORTED";
    case absl::StatusCode::kOutOfRange:
      return "OUT_OF_RANGE";
    case absl::StatusCode::kUnimplemented:
      return "UNIMPLEMENTED";
    case absl::StatusCode::kInternal:
      return "INTERNAL";
    case absl::StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case absl::StatusCode::kDataLoss:
      return "DATA_LOSS";
    case absl::StatusCode::kUnauthenticated:
      return "UNAUTHENTICATED";
    default:
      break;  // absl::StatusCode has a reserved sentinel enumerator
  }
  return "UNKNOWN";
}

absl::Status DecisionError(const absl::Status& status, bool strategy_forced) {
  absl::string_view field;
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      field = "forced_strategy";
      break;
    case absl::StatusCode::kFailedPrecondition:
      field = strategy_forced ? "forced_strategy" : "problem";
      break;
    case absl::StatusCode::kInvalidArgument:
      field = "problem";
      break;
    default:
      return status;
  }
  return absl::Status(status.code(), absl::StrCat(field, ": ", status.message()));
}

absl::Status PrefixedError(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, ": ", status.message()));
}

void StatusToItem(const absl::Status& status, npu::tiling::v1::ItemStatus* item) {
  item->set_code(static_cast<int32_t>(status.code()));
  item->set_code_name(std::string(CodeName(status.code())));
  item->set_message(std::string(status.message()));
}

}  // namespace npu::server
