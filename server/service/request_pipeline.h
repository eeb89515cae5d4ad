// The request pipeline shared by every RPC: parse, validate, convert, resolve
// the chip.
//
// GetTiling, GetTilingBatch, ADVISE and Execute all start the same way: the
// request's bytes become a message, the message passes the wire checks
// (validate.h), its problem becomes the engine's and passes the engine's
// checks, and the platform it names becomes a chip (convert.h) that CANN's
// tiling covers (its architecture DAV_3510). This file is that sequence,
// once, with a typed result; the RPC families (tiling_answers.h,
// advice_service.h, execute.h) take it from there. Execute adds its own checks
// at two fixed points of the sequence and resolves its chip its own way
// (a tiling records its chip), through `RequestSteps`.
//
// Every message is parsed by protobuf. A request that does not parse is
// kInvalidArgument naming the message type, on every RPC: with gRPC's
// generated message handlers, gRPC C++ 1.51 answers such bytes with
// UNIMPLEMENTED and an empty message, which a client reads as "no such
// method", so the service registers its methods as raw (grpc::ByteBuffer)
// methods and parses here.
#ifndef NPU_SERVER_SERVICE_REQUEST_PIPELINE_H_
#define NPU_SERVER_SERVICE_REQUEST_PIPELINE_H_

#include <grpcpp/support/byte_buffer.h>

#include <cstddef>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/service/validate.h"
#include "server/tiling/types.h"
#include "server/tiling/validate.h"

namespace npu::server {

// Parses the serialized message in `bytes` into `message`, or returns
// kInvalidArgument naming the message type ("request: not a valid
// npu.tiling.v1.ExecuteRequest (...)") and leaves `message` cleared: a
// failed parse keeps what it read so far, e.g. an id that is not UTF-8,
// which must not be echoed into a response the client then cannot parse.
absl::Status ParseRequestBytes(const grpc::ByteBuffer& bytes, google::protobuf::Message* message);

// Serializes `message` into `bytes`, straight into one slice: this costs
// less than gRPC's generic path through a zero-copy output stream, for the
// same bytes. Fails (kInternal) only for a message above 2 GiB, which no
// answer of the service reaches.
absl::Status SerializeMessage(const google::protobuf::MessageLite& message,
                              grpc::ByteBuffer* bytes);

// The message to parse a TilingRequest of `bytes` into. A request is a few
// dozen bytes; parsing it into a message that keeps its string buffers from
// the thread's previous call costs about half as much as building a new one,
// under load (bench/RESULTS.md). The message lives until the next call on the
// same thread, i.e. past the handler, and a thread keeps at most
// kReusedRequestBytes of strings; a larger request gets a message of its own
// in `owned`.
inline constexpr size_t kReusedRequestBytes = 4096;
npu::tiling::v1::TilingRequest* TilingRequestFor(
    const grpc::ByteBuffer& bytes, std::unique_ptr<npu::tiling::v1::TilingRequest>& owned);

// A request past the pipeline: the engine's problem and the chip it runs
// on, both checked (the engine decides on them without checking again).
struct ResolvedRequest {
  npu::tiling::CheckedInputs inputs;
};

// What an RPC adds to the pipeline. Each step is optional.
struct RequestSteps {
  // After the wire checks, before the problem is converted: the RPC's own
  // fields.
  std::function<absl::Status()> check_fields;
  // After the engine's problem checks: what this RPC cannot serve of a valid
  // problem.
  std::function<absl::Status(const npu::tiling::MatmulProblem&)> check_problem;
  // Resolves the chip instead of ResolveChip(request).
  std::function<absl::StatusOr<npu::tiling::ChipSpec>()> resolve_chip;
  // Whether the RPC serves chips CANN's tiling does not apply to (Execute
  // with a kernel schedule); otherwise a chip whose architecture is not
  // DAV_3510 is kFailedPrecondition (npu::tiling::ValidateTilingArch()).
  bool any_arch = false;
};

// Runs the pipeline on a parsed `request` into `resolved`: ValidateRequest(),
// the problem converted and checked by the engine (errors prefixed
// "problem: "), the chip resolved and, unless `steps.any_arch`, checked to
// be one CANN's tiling applies to (prefixed "platform: "). The architecture
// is checked here, before any cache is consulted, although the engine's
// Decide() refuses such a chip too. The errors are those of each step, the
// first failing step's. (An out-parameter rather than a StatusOr: GetTiling
// keeps the result where it uses it, without moving it.)
absl::Status ResolveRequest(const RequestParts& request, const RequestSteps& steps,
                            ResolvedRequest* resolved);
// The same without steps of the RPC's own.
absl::Status ResolveRequest(const npu::tiling::v1::TilingRequest& request,
                            ResolvedRequest* resolved);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_REQUEST_PIPELINE_H_
