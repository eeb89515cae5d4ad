// The gRPC adapter of npu.tiling.v1.TilingService (callback API).
//
// Each RPC family is a class of its own, without the transport:
//   * GetTiling and GetTilingBatch: TilingAnswers (tiling_answers.h), the
//     stream in batch_reactor.h;
//   * GetTiling in ADVISE mode: AdviceService (advice_service.h), run on the
//     emulation workers by advise_reactor.h;
//   * Execute: ExecuteService (execute_service.h), which owns the emulation
//     workers;
//   * ListPlatforms: PlatformList() (platform_list.h).
// Health and reflection are gRPC's own services (server.h). All of them start
// from the same request pipeline (request_pipeline.h). This class only owns
// admission and draining (admission.h), hands each call to its family and
// finishes what the family answers at once.
//
// Every method is registered as a raw (grpc::ByteBuffer) method and parses
// its request itself. With generated message handlers, gRPC C++ 1.51 answers
// bytes that do not parse with UNIMPLEMENTED and an empty message, which a
// client reads as "no such method", and on a stream it reports them as the
// end of the client's requests, so the batch would end OK with the rest
// silently unanswered. Parsing here turns all of them into INVALID_ARGUMENT
// naming the message type (for a batch, in that item's status, and the
// stream goes on), and lets GetTiling choose where messages live: requests
// in a message kept per RPC thread and reused call after call, and a fresh
// decision's answer in no message at all (wire_answer.h).
//
// A GetTiling in ADVISE mode runs tens of emulations, so the handler answers
// it from the cache when it can and otherwise queues the advisor on the
// emulation workers, which Execute uses too. GetTilingBatch refuses ADVISE
// items (INVALID_ARGUMENT, see the proto).
#ifndef NPU_SERVER_SERVICE_TILING_SERVICE_H_
#define NPU_SERVER_SERVICE_TILING_SERVICE_H_

#include <grpcpp/support/byte_buffer.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "npu/tiling/v1/tiling_service.grpc.pb.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/metrics/service_metrics.h"
#include "server/service/admission.h"
#include "server/service/advice_service.h"
#include "server/service/advise.h"
#include "server/service/decision_cache.h"
#include "server/service/execute.h"
#include "server/service/execute_queue.h"
#include "server/service/execute_service.h"
#include "server/service/graph_service.h"
#include "server/service/tiling_answers.h"
#include "server/tiling/registry.h"

namespace npu::server {

struct ServiceOptions {
  // Decisions kept by the LRU cache; 0 disables the cache.
  size_t cache_capacity = 65536;
  // RPCs (unary calls plus open batch streams) served at once.
  int max_inflight = 1024;
  // Requests accepted on one GetTilingBatch stream.
  int64_t max_batch = 1000000;
  // Execute: the emulation workers, their queue and the work limits. ADVISE
  // requests share the workers, the queue and max_simulated_ops.
  ExecuteOptions execute;
  // ADVISE: defaults and caps of the per-request options.
  AdviseLimits advise;
  // GetGraphTiling: the model and gear limits.
  GraphOptions graph;
};

// Every method takes serialized messages (see above).
using TilingServiceBase = npu::tiling::v1::TilingService::WithRawCallbackMethod_GetTiling<
    npu::tiling::v1::TilingService::WithRawCallbackMethod_GetTilingBatch<
        npu::tiling::v1::TilingService::WithRawCallbackMethod_ListPlatforms<
            npu::tiling::v1::TilingService::WithRawCallbackMethod_Execute<
                npu::tiling::v1::TilingService::WithRawCallbackMethod_GetGraphTiling<
                    npu::tiling::v1::TilingService::Service>>>>>;

class TilingService final : public TilingServiceBase {
 public:
  // Serves decisions of `registry`, reporting to `metrics`; both must outlive
  // the service. The registry is only read, so calls may run concurrently.
  TilingService(const npu::tiling::StrategyRegistry& registry, ServiceMetrics& metrics,
                ServiceOptions options);

  // Computes the answer to one request into `response`, or returns why not:
  // kInvalidArgument naming the field, kNotFound for an unknown platform or
  // strategy, kFailedPrecondition for a forced strategy that cannot apply,
  // kInternal for an engine bug. Sets every field but `status`. An ADVISE
  // request runs the advisor on the calling thread; GetTiling instead runs
  // it on an emulation worker.
  absl::Status Answer(const npu::tiling::v1::TilingRequest& request,
                      npu::tiling::v1::TilingResponse* response);

  // Answer() in wire form, as GetTiling and each batch item send it: the
  // serialized TilingResponse in `bytes`. The engine's decision is encoded
  // straight into them (wire_answer.h), without a message; the bytes are
  // the same. An advice is built as a message of its own.
  absl::Status AnswerSerialized(const npu::tiling::v1::TilingRequest& request,
                                grpc::ByteBuffer* bytes);

  // Parses a serialized TilingRequest into `request`; kInvalidArgument when
  // the bytes are not one (ParseRequestBytes()).
  static absl::Status ParseRequest(const grpc::ByteBuffer& bytes,
                                   npu::tiling::v1::TilingRequest* request);

  grpc::ServerUnaryReactor* GetTiling(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* GetTilingBatch(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ListPlatforms(grpc::CallbackServerContext* context,
                                          const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Execute(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  // Runs on the emulation workers, as Execute does (graph_service.h).
  grpc::ServerUnaryReactor* GetGraphTiling(grpc::CallbackServerContext* context,
                                           const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response) override;

  // RPCs currently admitted.
  int inflight() const { return admission_.inflight(); }
  // From now on refuses every new call with UNAVAILABLE ("shutting down",
  // which clients retry elsewhere); calls already admitted run on.
  // TilingServer::Shutdown() drains this way before gRPC's own shutdown.
  void BeginDrain() { admission_.BeginDrain(); }
  // GetTiling's cached decisions.
  const DecisionCache<npu::tiling::TilingDecision>& decision_cache() const {
    return answers_.decision_cache();
  }
  const ServiceOptions& options() const { return options_; }
  const ExecuteQueue& execute_queue() const { return execute_.queue(); }
  // Emulations that were running when their call was cancelled or its
  // deadline passed, and that stopped on the cancellation flag.
  uint64_t execute_runs_interrupted() const { return execute_.runs_interrupted(); }

 private:
  ServiceMetrics& metrics_;
  const ServiceOptions options_;
  Admission admission_;
  TilingAnswers answers_;
  AdviceService advice_;
  GraphService graph_;
  // Declared last: destroyed first, after gRPC has finished every call; its
  // queue completes the calls still waiting, ADVISE and graph ones included.
  ExecuteService execute_;
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_TILING_SERVICE_H_
