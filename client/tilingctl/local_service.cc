#include "client/tilingctl/local_service.h"

#include <grpcpp/support/channel_arguments.h>

#include <limits>
#include <utility>

#include "prometheus/registry.h"
#include "server/metrics/service_metrics.h"
#include "server/service/server.h"
#include "server/tiling/builtin_strategies.h"

namespace npu::client {
namespace {

// Owns what the server refers to; members are destroyed bottom-up, so the
// server stops before its registry and metrics go.
class InProcessService final : public LocalService {
 public:
  absl::Status Start() {
    npu::server::ServerOptions options;
    options.listen = false;
    options.max_message_bytes = std::numeric_limits<int>::max();
    absl::StatusOr<std::unique_ptr<npu::server::TilingServer>> server =
        npu::server::TilingServer::Start(options, registry_, metrics_);
    if (!server.ok()) return server.status();
    server_ = *std::move(server);
    return absl::OkStatus();
  }

  std::shared_ptr<grpc::Channel> Channel() override {
    grpc::ChannelArguments channel_args;
    channel_args.SetMaxReceiveMessageSize(-1);
    return server_->InProcessChannel(channel_args);
  }

 private:
  npu::tiling::StrategyRegistry registry_ = npu::tiling::MakeBuiltinRegistry();
  std::shared_ptr<prometheus::Registry> prometheus_ = std::make_shared<prometheus::Registry>();
  npu::server::ServiceMetrics metrics_{*prometheus_};
  std::unique_ptr<npu::server::TilingServer> server_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<LocalService>> LocalService::Start() {
  auto service = std::make_unique<InProcessService>();
  if (absl::Status started = service->Start(); !started.ok()) return started;
  return service;
}

}  // namespace npu::client
