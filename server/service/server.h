// A running gRPC server around TilingService, with the standard extras.
//
// Used by the tiling_server binary, by tests (port 0 on 127.0.0.1) and by
// `tilingctl --local` (no port at all, in-process channel). It wires:
//   * the TilingService handlers (callback API);
//   * gRPC's standard health service, grpc.health.v1.Health, SERVING for ""
//     and for "npu.tiling.v1.TilingService";
//   * server reflection (v1alpha in gRPC 1.51), so grpcurl can list and call;
//   * GRPC_ARG_ALLOW_REUSEPORT = 0, so a busy port fails the start instead of
//     silently sharing connections with another process;
//   * the receive-size limit;
//   * TLS or mutual TLS on the port when certificates are given.
// Shutdown() is the graceful path: NOT_SERVING first, then stop accepting,
// then let in-flight calls finish until the drain deadline.
#ifndef NPU_SERVER_SERVICE_SERVER_H_
#define NPU_SERVER_SERVICE_SERVER_H_

#include <grpcpp/channel.h>
#include <grpcpp/server.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/metrics/service_metrics.h"
#include "server/service/tiling_service.h"
#include "server/tiling/registry.h"

namespace npu::server {

// The health-service name of the tiling service.
inline constexpr char kTilingServiceName[] = "npu.tiling.v1.TilingService";

struct ServerOptions {
  // Interface to bind, e.g. "0.0.0.0", "127.0.0.1", "::".
  std::string address = "0.0.0.0";
  // TCP port; 0 picks a free one (see TilingServer::port()). Ignored when
  // `listen` is false.
  int port = 50051;
  // Whether to open a TCP port at all; false serves only InProcessChannel().
  bool listen = true;
  // Largest request message accepted, bytes; larger ones fail with
  // RESOURCE_EXHAUSTED before reaching the service.
  int max_message_bytes = 4 * 1024 * 1024;
  // TLS, as PEM text. With a certificate chain and its private key the port
  // speaks TLS only, so a plaintext client fails its handshake; both empty
  // means plaintext. A client CA bundle on top turns on mutual TLS: every
  // client must present a certificate that one of those CAs signed.
  std::string tls_cert_chain_pem;
  std::string tls_private_key_pem;
  std::string tls_client_ca_pem;
  ServiceOptions service;
};

class TilingServer {
 public:
  // Builds and starts a server. `registry` and `metrics` must outlive it.
  // kUnavailable when the address cannot be bound (e.g. the port is busy, or
  // the TLS certificate or key is not valid PEM), kInvalidArgument for bad
  // options.
  static absl::StatusOr<std::unique_ptr<TilingServer>> Start(
      const ServerOptions& options, const npu::tiling::StrategyRegistry& registry,
      ServiceMetrics& metrics);

  // Shuts down with no drain time if Shutdown() was not called.
  ~TilingServer();

  TilingServer(const TilingServer&) = delete;
  TilingServer& operator=(const TilingServer&) = delete;

  // The bound TCP port (the chosen one when the options asked for 0); 0 when
  // not listening.
  int port() const { return port_; }
  // "host:port" as bound, IPv6 hosts in brackets.
  std::string address() const;

  // A channel to this server that bypasses the network.
  std::shared_ptr<grpc::Channel> InProcessChannel();
  // The same with channel arguments, e.g. a larger receive limit for Execute
  // responses that carry C.
  std::shared_ptr<grpc::Channel> InProcessChannel(const grpc::ChannelArguments& args);

  // Sets the health status of "" and the tiling service.
  void SetServing(bool serving);

  // Marks every health status NOT_SERVING, refuses new calls with
  // UNAVAILABLE while in-flight calls finish, then stops gRPC (closing the
  // listener and the connections); calls still running when `drain` has
  // passed are cancelled. Returns once all handlers are done. Idempotent.
  void Shutdown(absl::Duration drain);

  TilingService& service() { return *service_; }

 private:
  TilingServer() = default;

  std::string host_;
  int port_ = 0;
  std::unique_ptr<TilingService> service_;
  std::unique_ptr<grpc::Server> server_;
  absl::Mutex shutdown_mutex_;
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mutex_) = false;
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_SERVER_H_
