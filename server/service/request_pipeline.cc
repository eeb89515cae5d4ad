#include "server/service/request_pipeline.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/service/convert.h"
#include "server/service/status_mapping.h"
#include "server/service/validate.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/validate.h"

namespace npu::server {

namespace tl = ::npu::tiling;

absl::Status ParseRequestBytes(const grpc::ByteBuffer& bytes, google::protobuf::Message* message) {
  // A request is a few dozen bytes, nearly always in one slice: parse it in
  // place. Otherwise read the slices through a stream (reading consumes the
  // buffer; the copy shares the slices).
  bool parsed = false;
  grpc::Slice slice;
  if (bytes.TrySingleSlice(&slice).ok()) {
    parsed = message->ParseFromArray(slice.begin(), static_cast<int>(slice.size()));
  } else {
    grpc::ByteBuffer copy(bytes);
    grpc::ProtoBufferReader reader(&copy);
    parsed = message->ParseFromZeroCopyStream(&reader);
  }
  if (!parsed) {
    message->Clear();
    return absl::InvalidArgumentError(
        absl::StrCat("request: not a valid ", message->GetDescriptor()->full_name(),
                     " (malformed protobuf wire format, or a string field that is not UTF-8)"));
  }
  return absl::OkStatus();
}

absl::Status SerializeMessage(const google::protobuf::MessageLite& message,
                              grpc::ByteBuffer* bytes) {
  const size_t size = message.ByteSizeLong();
  if (size > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InternalError(absl::StrCat("response: ", size, " bytes"));
  }
  grpc::Slice slice(size);
  uint8_t* end = message.SerializeWithCachedSizesToArray(const_cast<uint8_t*>(slice.begin()));
  if (end != slice.end()) {
    return absl::InternalError("response: the serialized size changed while serializing");
  }
  grpc::ByteBuffer buffer(&slice, 1);
  bytes->Swap(&buffer);
  return absl::OkStatus();
}

npu::tiling::v1::TilingRequest* TilingRequestFor(
    const grpc::ByteBuffer& bytes, std::unique_ptr<npu::tiling::v1::TilingRequest>& owned) {
  if (bytes.Length() > kReusedRequestBytes) {
    owned = std::make_unique<npu::tiling::v1::TilingRequest>();
    return owned.get();
  }
  thread_local npu::tiling::v1::TilingRequest reused;
  return &reused;
}

absl::Status ResolveRequest(const RequestParts& request, const RequestSteps& steps,
                            ResolvedRequest* resolved) {
  RETURN_IF_ERROR(ValidateRequest(request));
  if (steps.check_fields) RETURN_IF_ERROR(steps.check_fields());
  // Checked here rather than inside the engine's Decide() (which takes the
  // checked inputs as they are), so that the message says which part of the
  // request was wrong.
  tl::CheckedInputs& inputs = resolved->inputs;
  RETURN_IF_ERROR(Prefixed("problem", inputs.CheckProblemFilledBy([&](tl::MatmulProblem& problem) {
    ProblemFromProto(*request.problem, problem);
  })));
  if (steps.check_problem) RETURN_IF_ERROR(steps.check_problem(inputs.problem()));
  if (!steps.resolve_chip && request.overrides == nullptr) {
    // A built-in profile as shipped: kept as it is, valid by construction.
    RETURN_IF_ERROR(Prefixed("platform", inputs.CheckPlatform(PlatformName(request))));
  } else {
    tl::ChipSpec chip;
    if (steps.resolve_chip) {
      ASSIGN_OR_RETURN(chip, steps.resolve_chip());
    } else {
      ASSIGN_OR_RETURN(chip, ResolveChip(request));
    }
    RETURN_IF_ERROR(Prefixed("platform", inputs.CheckChip(std::move(chip))));
  }
  if (!steps.any_arch) {
    RETURN_IF_ERROR(Prefixed("platform", tl::ValidateTilingArch(inputs.chip())));
  }
  return absl::OkStatus();
}

absl::Status ResolveRequest(const npu::tiling::v1::TilingRequest& request,
                            ResolvedRequest* resolved) {
  static const RequestSteps* const kNoSteps = new RequestSteps();
  return ResolveRequest(PartsOf(request), *kNoSteps, resolved);
}

}  // namespace npu::server
