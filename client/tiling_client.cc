#include "client/tiling_client.h"

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>

#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;

std::chrono::system_clock::time_point DeadlineAfter(absl::Duration timeout) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             absl::ToChronoNanoseconds(timeout));
}

// grpc.health.v1 has two one-field messages:
//   HealthCheckRequest  { string service = 1; }
//   HealthCheckResponse { ServingStatus status = 1; }
// Encoding them here keeps the build independent of the grpc-proto package.
grpc::ByteBuffer EncodeHealthCheckRequest(absl::string_view service) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    if (!service.empty()) {  // proto3 leaves default values out
      out.WriteTag(google::protobuf::internal::WireFormatLite::MakeTag(
          1, google::protobuf::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
      out.WriteVarint32(static_cast<uint32_t>(service.size()));
      out.WriteRaw(service.data(), static_cast<int>(service.size()));
    }
  }
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

absl::StatusOr<ServingStatus> DecodeHealthCheckResponse(const grpc::ByteBuffer& buffer) {
  grpc::Slice slice;
  if (!buffer.DumpToSingleSlice(&slice).ok()) {
    return absl::DataLossError("unreadable health response");
  }
  google::protobuf::io::CodedInputStream in(slice.begin(), static_cast<int>(slice.size()));
  uint32_t status = 0;  // UNKNOWN when absent
  while (uint32_t tag = in.ReadTag()) {
    if (tag == google::protobuf::internal::WireFormatLite::MakeTag(
                   1, google::protobuf::internal::WireFormatLite::WIRETYPE_VARINT)) {
      if (!in.ReadVarint32(&status)) return absl::DataLossError("truncated health response");
    } else if (!google::protobuf::internal::WireFormatLite::SkipField(&in, tag)) {
      return absl::DataLossError("malformed health response");
    }
  }
  switch (status) {
    case 1:
      return ServingStatus::kServing;
    case 2:
      return ServingStatus::kNotServing;
    case 3:
      return ServingStatus::kServiceUnknown;
    default:
      return ServingStatus::kUnknown;
  }
}

}  // namespace

absl::string_view ServingStatusName(ServingStatus status) {
  switch (status) {
    case ServingStatus::kUnknown:
      return "UNKNOWN";
    case ServingStatus::kServing:
      return "SERVING";
    case ServingStatus::kNotServing:
      return "NOT_SERVING";
    case ServingStatus::kServiceUnknown:
      return "SERVICE_UNKNOWN";
  }
  return "UNKNOWN";
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

std::string ServiceConfigJson(const ClientOptions& options) {
  // Backoff: 0.1 s, 0.2 s, 0.4 s ... capped at 1 s (with gRPC's jitter), so
  // the default 4 attempts ride out a replica restart of about a second
  // without holding a compiler up for long. Retried: UNAVAILABLE (no healthy
  // server took the call; a draining one refuses with it) and CANCELLED.
  // This client never cancels a call itself (its deadline ends a call with
  // DEADLINE_EXCEEDED, which is not retried), so CANCELLED comes from a
  // server that shut down under the call: gRPC drops a call that arrives in
  // that instant, and the drain deadline cancels what still runs. gRPC
  // retries only calls the server has not answered at all, and every
  // method is idempotent (a decision or a seeded emulation), so a retry on
  // another replica is safe.
  return absl::StrFormat(R"json({
  "loadBalancingConfig": [{"round_robin": {}}],
  "methodConfig": [{
    "name": [{"service": "npu.tiling.v1.TilingService"}, {"service": "grpc.health.v1.Health"}],
    "retryPolicy": {
      "maxAttempts": %d,
      "initialBackoff": "0.1s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "CANCELLED"]
    }
  }]
})json",
                         options.max_attempts);
}

absl::StatusOr<std::unique_ptr<TilingClient>> TilingClient::Connect(const ClientOptions& options) {
  if (options.target.empty()) return absl::InvalidArgumentError("target: empty");
  if (options.max_attempts < 1 || options.max_attempts > 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_attempts: must be in [1, 5], got ", options.max_attempts));
  }
  if (options.timeout <= absl::ZeroDuration() || options.batch_timeout <= absl::ZeroDuration() ||
      options.execute_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "timeout, batch_timeout and execute_timeout must be positive");
  }
  const bool has_tls_material =
      !options.tls_root_ca_pem.empty() || !options.tls_cert_chain_pem.empty() ||
      !options.tls_private_key_pem.empty() || !options.tls_server_name.empty();
  if (has_tls_material && !options.use_tls) {
    return absl::InvalidArgumentError("tls_*: TLS settings given but use_tls is false");
  }
  if (options.tls_cert_chain_pem.empty() != options.tls_private_key_pem.empty()) {
    return absl::InvalidArgumentError(
        "tls_cert_chain_pem, tls_private_key_pem: a client certificate needs its key");
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (options.use_tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls_root_ca_pem;
    ssl.pem_private_key = options.tls_private_key_pem;
    ssl.pem_cert_chain = options.tls_cert_chain_pem;
    credentials = grpc::SslCredentials(ssl);
    if (!options.tls_server_name.empty()) {
      args.SetSslTargetNameOverride(options.tls_server_name);
    }
  }
  if (options.max_attempts > 1) {
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 1);
    args.SetServiceConfigJSON(ServiceConfigJson(options));
  } else {
    // Without a retry policy the config only picks the balancer.
    args.SetLoadBalancingPolicyName("round_robin");
  }
  auto channel = grpc::CreateCustomChannel(options.target, credentials, args);
  if (channel == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("target: cannot use \"", options.target, "\""));
  }
  return std::make_unique<TilingClient>(std::move(channel), options);
}

TilingClient::TilingClient(std::shared_ptr<grpc::Channel> channel, const ClientOptions& options)
    : channel_(std::move(channel)),
      options_(options),
      stub_(pb::TilingService::NewStub(channel_)) {}

absl::StatusOr<pb::TilingResponse> TilingClient::GetTiling(const pb::TilingRequest& request) {
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(options_.timeout));
  pb::TilingResponse response;
  absl::Status status = FromGrpcStatus(stub_->GetTiling(&context, request, &response));
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<std::vector<pb::TilingResponse>> TilingClient::GetTilingBatch(
    absl::Span<const pb::TilingRequest> requests) {
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(options_.batch_timeout));
  std::unique_ptr<grpc::ClientReaderWriter<pb::TilingRequest, pb::TilingResponse>> stream =
      stub_->GetTilingBatch(&context);

  // Writing and reading run concurrently: the server answers while requests
  // are still arriving, and HTTP/2 flow control would stall a writer whose
  // answers nobody reads.
  std::thread writer([&stream, requests] {
    for (const pb::TilingRequest& request : requests) {
      if (!stream->Write(request)) break;  // the stream ended; Finish() says why
    }
    stream->WritesDone();
  });

  std::vector<pb::TilingResponse> responses;
  responses.reserve(requests.size());
  pb::TilingResponse response;
  absl::Status order;
  while (stream->Read(&response)) {
    if (responses.size() >= requests.size()) {
      order = absl::DataLossError("GetTilingBatch: more responses than requests");
      context.TryCancel();
      break;
    }
    if (response.id() != requests[responses.size()].id()) {
      order = absl::DataLossError(absl::StrCat("GetTilingBatch: response ", responses.size(),
                                               " has id \"", response.id(), "\", expected \"",
                                               requests[responses.size()].id(), "\""));
      context.TryCancel();
      break;
    }
    responses.push_back(std::move(response));
    response.Clear();
  }
  writer.join();
  absl::Status status = FromGrpcStatus(stream->Finish());
  if (!order.ok()) return order;
  if (!status.ok()) return status;
  if (responses.size() != requests.size()) {
    return absl::DataLossError(absl::StrCat("GetTilingBatch: ", responses.size(), " responses for ",
                                            requests.size(), " requests"));
  }
  return responses;
}

namespace {

// One unary call of `stub` with a deadline `timeout` from now.
template <typename Response, typename Request, typename Method>
absl::StatusOr<Response> UnaryCall(pb::TilingService::Stub& stub, Method method,
                                   const Request& request, absl::Duration timeout) {
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(timeout));
  Response response;
  absl::Status status = FromGrpcStatus((stub.*method)(&context, request, &response));
  if (!status.ok()) return status;
  return response;
}

}  // namespace

absl::StatusOr<pb::ListPlatformsResponse> TilingClient::ListPlatforms() {
  return UnaryCall<pb::ListPlatformsResponse>(*stub_, &pb::TilingService::Stub::ListPlatforms,
                                              pb::ListPlatformsRequest(), options_.timeout);
}

absl::StatusOr<pb::ExecuteResponse> TilingClient::Execute(const pb::ExecuteRequest& request) {
  return UnaryCall<pb::ExecuteResponse>(*stub_, &pb::TilingService::Stub::Execute, request,
                                        options_.execute_timeout);
}

absl::StatusOr<pb::GraphTilingResponse> TilingClient::GetGraphTiling(
    const pb::GraphTilingRequest& request) {
  return UnaryCall<pb::GraphTilingResponse>(*stub_, &pb::TilingService::Stub::GetGraphTiling,
                                            request, options_.execute_timeout);
}

absl::StatusOr<ServingStatus> TilingClient::CheckHealth(absl::string_view service) {
  grpc::GenericStub stub(channel_);
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(options_.timeout));
  const grpc::ByteBuffer request = EncodeHealthCheckRequest(service);
  grpc::ByteBuffer response;
  grpc::Status rpc_status;
  absl::Notification done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status status) {
                   rpc_status = std::move(status);
                   done.Notify();
                 });
  done.WaitForNotification();
  absl::Status status = FromGrpcStatus(rpc_status);
  if (!status.ok()) return status;
  return DecodeHealthCheckResponse(response);
}

}  // namespace npu::client
