#include "server/service/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace npu::server {
namespace {

// "::" needs brackets in a host:port string; names and IPv4 do not.
std::string HostPort(const std::string& host, int port) {
  if (absl::StrContains(host, ':') && !absl::StartsWith(host, "[")) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

// How long Shutdown() keeps connections open after the last admitted call
// ended (see there): far longer than a client needs to read a few answers,
// short next to the ~2 s the metrics endpoint takes to stop.
constexpr absl::Duration kCloseGrace = absl::Milliseconds(500);

// The port's credentials: plaintext, TLS, or mutual TLS (see ServerOptions).
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> PortCredentials(
    const ServerOptions& options) {
  const bool has_cert = !options.tls_cert_chain_pem.empty();
  const bool has_key = !options.tls_private_key_pem.empty();
  if (has_cert != has_key) {
    return absl::InvalidArgumentError(
        "TLS needs both a certificate chain and its private key (--tls_cert, --tls_key)");
  }
  if (!has_cert) {
    if (!options.tls_client_ca_pem.empty()) {
      return absl::InvalidArgumentError(
          "a client CA (--tls_client_ca, mutual TLS) needs a server certificate and key");
    }
    return grpc::InsecureServerCredentials();
  }
  grpc::SslServerCredentialsOptions ssl(
      options.tls_client_ca_pem.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = options.tls_client_ca_pem;
  ssl.pem_key_cert_pairs.push_back({options.tls_private_key_pem, options.tls_cert_chain_pem});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

absl::StatusOr<std::unique_ptr<TilingServer>> TilingServer::Start(
    const ServerOptions& options, const npu::tiling::StrategyRegistry& registry,
    ServiceMetrics& metrics) {
  if (options.listen && (options.port < 0 || options.port > 65535)) {
    return absl::InvalidArgumentError(
        absl::StrCat("port must be in [0, 65535], got ", options.port));
  }
  if (options.max_message_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_message_bytes must be positive, got ", options.max_message_bytes));
  }
  if (options.service.max_inflight <= 0 || options.service.max_batch <= 0) {
    return absl::InvalidArgumentError("max_inflight and max_batch must be positive");
  }

  std::unique_ptr<TilingServer> server(new TilingServer());
  server->host_ = options.address;
  server->service_ = std::make_unique<TilingService>(registry, metrics, options.service);

  // Both are process-wide switches read when a ServerBuilder is constructed,
  // so they must come first.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  grpc::ServerBuilder builder;
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  int selected_port = 0;
  if (options.listen) {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = PortCredentials(options);
    if (!credentials.ok()) return credentials.status();
    builder.AddListeningPort(HostPort(options.address, options.port), *credentials, &selected_port);
  }
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || (options.listen && selected_port == 0)) {
    return absl::UnavailableError(absl::StrCat(
        "cannot serve on ", HostPort(options.address, options.port),
        options.tls_cert_chain_pem.empty()
            ? " (address in use or not local?)"
            : " (address in use or not local, or TLS certificate and key not valid PEM or not a "
              "pair?)"));
  }
  server->port_ = options.listen ? selected_port : 0;
  server->SetServing(true);
  return server;
}

TilingServer::~TilingServer() { Shutdown(absl::ZeroDuration()); }

std::string TilingServer::address() const { return HostPort(host_, port_); }

std::shared_ptr<grpc::Channel> TilingServer::InProcessChannel() {
  return server_->InProcessChannel(grpc::ChannelArguments());
}

std::shared_ptr<grpc::Channel> TilingServer::InProcessChannel(const grpc::ChannelArguments& args) {
  return server_->InProcessChannel(args);
}

void TilingServer::SetServing(bool serving) {
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  if (health == nullptr) return;
  health->SetServingStatus("", serving);
  health->SetServingStatus(kTilingServiceName, serving);
}

void TilingServer::Shutdown(absl::Duration drain) {
  {
    absl::MutexLock lock(&shutdown_mutex_);
    if (shut_down_ || server_ == nullptr) return;
    shut_down_ = true;
  }
  // NOT_SERVING first, so health-checking load balancers move traffic away
  // even before the listener closes; Shutdown() on the health service also
  // freezes the status so nothing flips it back.
  if (grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService()) {
    health->Shutdown();
  }
  // Drain in two steps. gRPC C++ 1.51's own Shutdown() sends GOAWAY at once,
  // and a connection that has had its GOAWAY is closed as soon as its last
  // call ends. Its last bytes may still be on the way then (gRPC completes a
  // call once they are handed to the socket), and closing a socket with
  // unread input (the client's window updates) sends a TCP reset, on which
  // the client's kernel drops what the client has not read yet: the tail of
  // a batch stream and its status became "Connection reset by peer"
  // (shutdown_test.cc). So first the service itself refuses new calls with
  // UNAVAILABLE while the admitted ones finish on open connections; then,
  // after a short grace for clients to read their last answers, gRPC shuts
  // down connections that have nothing in flight. Both steps share the drain
  // budget; what still runs at its end is cancelled.
  const absl::Time deadline = absl::Now() + drain;
  service_->BeginDrain();
  bool drained_calls = false;
  while (service_->inflight() > 0 && absl::Now() < deadline) {
    drained_calls = true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  if (drained_calls && port_ != 0) {
    absl::SleepFor(std::max(absl::ZeroDuration(), std::min(kCloseGrace, deadline - absl::Now())));
  }
  server_->Shutdown(absl::ToChronoTime(deadline));
  server_->Wait();
}

}  // namespace npu::server
