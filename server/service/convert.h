// Conversions between the wire types (npu.tiling.v1 protos) and the tiling
// engine's value types (server/tiling/types.h).
//
// Only the service layer sees both worlds; the engine never includes a .pb.h
// and the client never includes the engine. Conversions from the wire assume
// the request passed ValidateRequest() (validate.h), so every enum names a
// value; the one fallible step is resolving the platform, which looks the
// profile up and checks the chip after the overrides.
#ifndef NPU_SERVER_SERVICE_CONVERT_H_
#define NPU_SERVER_SERVICE_CONVERT_H_

#include "absl/status/statusor.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/tiling/types.h"

namespace npu::server {

// The engine's problem for a validated wire problem. UNSPECIFIED formats
// become ND; `dtype_bias` is kept only when the problem has a bias.
npu::tiling::MatmulProblem ProblemFromProto(const npu::tiling::v1::MatmulProblem& problem);

// The wire form of `problem`, with every enum set explicitly; two requests
// that mean the same problem convert to equal messages.
npu::tiling::v1::MatmulProblem ProblemToProto(const npu::tiling::MatmulProblem& problem);

// The chip `request` asks for: the named profile (default when empty) with
// the overrides applied. kNotFound for an unknown profile; kInvalidArgument,
// prefixed "platform: ", when the resulting chip is one the engine rejects.
absl::StatusOr<npu::tiling::ChipSpec> ResolveChip(const npu::tiling::v1::TilingRequest& request);

npu::tiling::v1::ChipSpec ChipToProto(const npu::tiling::ChipSpec& chip);

// Replaces `response` with the engine's answer: the decision fields (all but
// `id`, `from_cache`, `status` and `advice`, left unset), the trace only
// when `include_trace`. RESPONSE_VIEW_COMPACT fills only the compact fields
// (see the ResponseView comment in the .proto); any other view fills all.
// This is the definition of the answer: EncodeAnswer() (wire_answer.h)
// writes the bytes of this message without building it.
void DecisionToProto(const npu::tiling::TilingDecision& decision, const npu::tiling::ChipSpec& chip,
                     npu::tiling::v1::TilingResponse* response, bool include_trace = true,
                     npu::tiling::v1::ResponseView view = npu::tiling::v1::RESPONSE_VIEW_FULL);

// Drops from a full answer the decision fields `view` leaves out, so that an
// advice from the cache in the compact view equals a fresh one.
void ApplyView(npu::tiling::v1::ResponseView view, npu::tiling::v1::TilingResponse* response);

// Enum conversions. The wire enums number CANN's values + 1 (0 is
// UNSPECIFIED).
npu::tiling::v1::DataType DataTypeToProto(npu::tiling::DataType dtype);
npu::tiling::v1::Format FormatToProto(npu::tiling::Format format);
npu::tiling::v1::ApiLevel ApiLevelToProto(npu::tiling::ApiLevel level);
npu::tiling::v1::KernelModel KernelModelToProto(npu::tiling::KernelModel model);
npu::tiling::v1::FullLoad FullLoadToProto(npu::tiling::FullLoad full_load);
npu::tiling::v1::L0cToOut L0cToOutToProto(npu::tiling::L0cToOut out);
npu::tiling::v1::KernelType KernelTypeToProto(npu::tiling::KernelType type);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_CONVERT_H_
