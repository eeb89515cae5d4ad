#include "server/service/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace npu::server {
namespace {

// "::" needs brackets in a host:port string; names and IPv4 do not.
std::string HostPort(const std::string& host, int port) {
  if (absl::StrContains(host, ':') && !absl::StartsWith(host, "[")) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
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
    builder.AddListeningPort(HostPort(options.address, options.port),
                             grpc::InsecureServerCredentials(), &selected_port);
  }
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || (options.listen && selected_port == 0)) {
    return absl::UnavailableError(absl::StrCat("cannot serve on ",
                                               HostPort(options.address, options.port),
                                               " (address in use or not local?)"));
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
  server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(drain));
  server_->Wait();
}

}  // namespace npu::server
