#include "server/service/tiling_service.h"

#include <chrono>
#include <memory>
#include <string>

#include "server/service/advise_reactor.h"
#include "server/service/batch_reactor.h"
#include "server/service/logging.h"
#include "server/service/platform_list.h"
#include "server/service/request_pipeline.h"
#include "server/service/status_mapping.h"
#include "server/tiling/status_macros.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using Clock = std::chrono::steady_clock;

// Finishes a unary call at once with `status`.
grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* context,
                                    const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace

TilingService::TilingService(const tl::StrategyRegistry& registry, ServiceMetrics& metrics,
                             ServiceOptions options)
    : metrics_(metrics),
      options_(options),
      admission_(options.max_inflight),
      answers_(registry, metrics, options.cache_capacity),
      advice_(registry, metrics, options.advise, options.execute.max_simulated_ops,
              options.cache_capacity),
      graph_(answers_, registry, metrics, options_.execute, options.graph),
      execute_(registry, metrics, options.execute) {
  // Every operator's strategies, so that each series exists (at zero) from
  // the first scrape.
  for (tl::MatmulOp op : tl::kAllMatmulOps) {
    metrics_.AddStrategies(registry.Names(op));
  }
}

absl::Status TilingService::ParseRequest(const grpc::ByteBuffer& bytes,
                                         pb::TilingRequest* request) {
  return ParseRequestBytes(bytes, request);
}

absl::Status TilingService::Answer(const pb::TilingRequest& request, pb::TilingResponse* response) {
  if (request.mode() == pb::TILING_MODE_ADVISE) return advice_.Answer(request, response);
  return answers_.Answer(request, response);
}

absl::Status TilingService::AnswerSerialized(const pb::TilingRequest& request,
                                             grpc::ByteBuffer* bytes) {
  if (request.mode() != pb::TILING_MODE_ADVISE) return answers_.AnswerSerialized(request, bytes);
  // An advice is far larger and rare: a message of its own.
  pb::TilingResponse response;
  RETURN_IF_ERROR(advice_.Answer(request, &response));
  return SerializeMessage(response, bytes);
}

grpc::ServerUnaryReactor* TilingService::GetTiling(grpc::CallbackServerContext* context,
                                                   const grpc::ByteBuffer* request_bytes,
                                                   grpc::ByteBuffer* response_bytes) {
  const Clock::time_point start = Clock::now();
  metrics_.RpcStarted(RpcMethod::kGetTiling);
  metrics_.MessageReceived(RpcMethod::kGetTiling);
  std::unique_ptr<pb::TilingRequest> owned;
  pb::TilingRequest* request = TilingRequestFor(*request_bytes, owned);
  absl::Status status;
  if (admission_.TryAdmit()) {
    status = ParseRequestBytes(*request_bytes, request);
    if (status.ok() && request->mode() == pb::TILING_MODE_ADVISE) {
      // Seconds of emulation: handed to a worker, which finishes the call.
      return StartAdvise(advice_, execute_.queue(), metrics_, admission_, context, *request,
                         response_bytes, start);
    }
    if (status.ok()) status = answers_.AnswerSerialized(*request, response_bytes);
    admission_.Release();
  } else {
    request->Clear();  // not parsed: log no earlier call's id
    status = admission_.RefusalError();
  }
  if (status.ok()) {
    metrics_.MessageSent(RpcMethod::kGetTiling);
  } else {
    metrics_.RequestFailed(status.code());
  }
  LogOutcome("GetTiling", request->client_id(), request->id(), status);
  metrics_.RpcHandled(RpcMethod::kGetTiling, status.code(), SecondsSince(start));
  return FinishNow(context, status);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* TilingService::GetTilingBatch(
    grpc::CallbackServerContext* context) {
  return StartBatch(answers_, metrics_, admission_, options_.max_batch, context);
}

grpc::ServerUnaryReactor* TilingService::ListPlatforms(grpc::CallbackServerContext* context,
                                                       const grpc::ByteBuffer* request_bytes,
                                                       grpc::ByteBuffer* response_bytes) {
  const Clock::time_point start = Clock::now();
  metrics_.RpcStarted(RpcMethod::kListPlatforms);
  metrics_.MessageReceived(RpcMethod::kListPlatforms);
  absl::Status status;
  if (admission_.TryAdmit()) {
    pb::ListPlatformsRequest request;
    status = ParseRequestBytes(*request_bytes, &request);
    if (status.ok()) status = SerializeMessage(PlatformList(), response_bytes);
    admission_.Release();
    if (status.ok()) metrics_.MessageSent(RpcMethod::kListPlatforms);
  } else {
    status = admission_.RefusalError();
  }
  metrics_.RpcHandled(RpcMethod::kListPlatforms, status.code(), SecondsSince(start));
  return FinishNow(context, status);
}

grpc::ServerUnaryReactor* TilingService::Execute(grpc::CallbackServerContext* context,
                                                 const grpc::ByteBuffer* request_bytes,
                                                 grpc::ByteBuffer* response_bytes) {
  return execute_.Start(admission_, context, request_bytes, response_bytes);
}

grpc::ServerUnaryReactor* TilingService::GetGraphTiling(grpc::CallbackServerContext* context,
                                                        const grpc::ByteBuffer* request_bytes,
                                                        grpc::ByteBuffer* response_bytes) {
  return graph_.Start(execute_.queue(), admission_, context, request_bytes, response_bytes);
}

}  // namespace npu::server
