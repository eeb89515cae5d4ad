// The C++ client of npu.tiling.v1.TilingService, for graph compilers and
// tilingctl.
//
// A thin, synchronous wrapper over the generated stub that adds what every
// caller would otherwise repeat: a deadline on every call, retries of
// UNAVAILABLE and CANCELLED through the channel's service config (so a
// restarting or draining replica costs a retry, not an error), round-robin load balancing over
// every address a `dns:///host:port` target resolves to, and results as absl::StatusOr. It depends
// only on the generated proto, gRPC and Abseil; it never sees the tiling engine's types.
#ifndef NPU_CLIENT_TILING_CLIENT_H_
#define NPU_CLIENT_TILING_CLIENT_H_

#include <grpcpp/channel.h>
#include <grpcpp/support/status.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "npu/tiling/v1/tiling_service.grpc.pb.h"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::client {

struct ClientOptions {
  // gRPC target: "host:port", "dns:///host:port" (all resolved addresses,
  // round robin), "ipv6:[::1]:port", "unix:/path".
  std::string target = "localhost:50051";
  // Deadline of each unary call (all retry attempts included).
  absl::Duration timeout = absl::Seconds(10);
  // Deadline of a whole GetTilingBatch stream.
  absl::Duration batch_timeout = absl::Minutes(5);
  // Deadline of an Execute call (queueing on the server included). The
  // server stops the emulation when it passes.
  absl::Duration execute_timeout = absl::Minutes(5);
  // Attempts per call, the first included, while the server answers
  // UNAVAILABLE; 1 disables retries. gRPC caps this at 5.
  int max_attempts = 4;
  // Largest response accepted, bytes.
  int max_receive_message_bytes = 64 * 1024 * 1024;
  // TLS (off: plaintext). The server's certificate is checked against
  // `tls_root_ca_pem` (PEM; empty: the system's trusted roots) and against
  // the target's host name, or `tls_server_name` when set (for a server
  // reached by IP or through a proxy). A client certificate chain and its
  // key (PEM) are presented when the server asks for them (mutual TLS).
  bool use_tls = false;
  std::string tls_root_ca_pem;
  std::string tls_cert_chain_pem;
  std::string tls_private_key_pem;
  std::string tls_server_name;
};

// The serving status of the standard health service (grpc.health.v1).
enum class ServingStatus { kUnknown, kServing, kNotServing, kServiceUnknown };

// "SERVING", "NOT_SERVING", ...
absl::string_view ServingStatusName(ServingStatus status);

// Converts a gRPC status into an absl::Status with the same code and message
// (the code spaces are identical).
absl::Status FromGrpcStatus(const grpc::Status& status);

// The JSON service config the client installs on its channel: round_robin
// load balancing and a retry policy for UNAVAILABLE and CANCELLED (a server
// that shut down under the call) with exponential backoff.
std::string ServiceConfigJson(const ClientOptions& options);

class TilingClient {
 public:
  // Creates a client with its own channel to `options.target`. The channel
  // connects lazily, so an unreachable server, or a failed TLS handshake,
  // shows up as UNAVAILABLE on the first call, after the retries.
  // kInvalidArgument for bad options.
  static absl::StatusOr<std::unique_ptr<TilingClient>> Connect(const ClientOptions& options);

  // Uses an existing channel, e.g. a server's in-process channel. Its service
  // config is the channel's own; `options` supplies the deadlines.
  TilingClient(std::shared_ptr<grpc::Channel> channel, const ClientOptions& options);

  // Decides one problem.
  absl::StatusOr<npu::tiling::v1::TilingResponse> GetTiling(
      const npu::tiling::v1::TilingRequest& request);

  // Decides `requests` over one GetTilingBatch stream. Returns one response
  // per request, in order; items that failed carry their `status`. The call
  // fails as a whole only when the stream does (or when the server breaks
  // the order, which is kDataLoss).
  absl::StatusOr<std::vector<npu::tiling::v1::TilingResponse>> GetTilingBatch(
      absl::Span<const npu::tiling::v1::TilingRequest> requests);

  absl::StatusOr<npu::tiling::v1::ListPlatformsResponse> ListPlatforms();

  // Emulates one tiling on the server (deadline: `execute_timeout`).
  absl::StatusOr<npu::tiling::v1::ExecuteResponse> Execute(
      const npu::tiling::v1::ExecuteRequest& request);

  // Every matmul of an ONNX model, answered (deadline: `execute_timeout`:
  // the call runs on the server's emulation workers).
  absl::StatusOr<npu::tiling::v1::GraphTilingResponse> GetGraphTiling(
      const npu::tiling::v1::GraphTilingRequest& request);

  // Asks grpc.health.v1.Health/Check about `service` ("" is the server as a
  // whole). An unknown service name is kNotFound.
  absl::StatusOr<ServingStatus> CheckHealth(absl::string_view service);

 private:
  std::shared_ptr<grpc::Channel> channel_;
  ClientOptions options_;
  std::unique_ptr<npu::tiling::v1::TilingService::Stub> stub_;
};

}  // namespace npu::client

#endif  // NPU_CLIENT_TILING_CLIENT_H_
