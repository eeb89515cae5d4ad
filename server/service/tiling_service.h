// The gRPC handlers of npu.tiling.v1.TilingService (callback API).
//
// This is the only place where requests meet the tiling engine. Each handler
// is thin: validate the request (validate.h), convert it (convert.h), consult
// the decision cache or run the engine's StrategyRegistry, convert the answer
// back, and map the status (status_mapping.h). `Answer()` is that pipeline
// without the transport, shared by the unary and the streaming RPC.
//
// Admission control: at most `max_inflight` RPCs (unary calls plus open batch
// streams) run at once; the next one is refused with RESOURCE_EXHAUSTED
// rather than queued, so an overloaded replica sheds load quickly and the
// client can try another one.
//
// GetTiling and GetTilingBatch are registered as raw (grpc::ByteBuffer)
// methods and parse their requests here. With generated message handlers,
// gRPC C++ 1.51 answers bytes that do not parse with UNIMPLEMENTED and an
// empty message, and on a stream it reports them as the end of the client's
// requests, so the batch would end OK with the rest silently unanswered.
// Parsing here turns both into INVALID_ARGUMENT (for a batch, in that item's
// status, and the stream goes on), and lets the handlers choose where
// messages live: requests in a message kept per RPC thread and reused call
// after call (a large one in a message of its own), and a fresh decision's
// answer in no message at all (wire_answer.h).
//
// Execute runs the emulator, which can take seconds of CPU, so its handler
// only validates and prepares the run (execute.h) and hands it to a bounded
// queue of emulation workers (execute_queue.h); the RPC finishes from the
// worker. A full queue is RESOURCE_EXHAUSTED at once, and the call's deadline
// or cancellation stops a running emulation through its cancellation flag.
//
// A GetTiling in ADVISE mode (advise.h) runs tens of emulations too, so it
// takes the same path: the handler validates it and answers it from the
// cache when it can; otherwise it queues the advisor on the same workers and
// finishes the RPC from there (advise_reactor.cc). Deadline and cancellation
// end the advisor's budget, so it stops before its next emulation. Sharing
// the pool keeps one bound on the server's emulation CPU and memory.
// GetTilingBatch refuses ADVISE items (INVALID_ARGUMENT, see the proto).
#ifndef NPU_SERVER_SERVICE_TILING_SERVICE_H_
#define NPU_SERVER_SERVICE_TILING_SERVICE_H_

#include <grpcpp/support/byte_buffer.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "npu/tiling/v1/tiling_service.grpc.pb.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/metrics/service_metrics.h"
#include "server/service/advise.h"
#include "server/service/decision_cache.h"
#include "server/service/execute.h"
#include "server/service/execute_queue.h"
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
};

// GetTiling and GetTilingBatch take serialized messages (see above); the
// other methods use the generated message types.
using TilingServiceBase = npu::tiling::v1::TilingService::WithRawCallbackMethod_GetTiling<
    npu::tiling::v1::TilingService::WithRawCallbackMethod_GetTilingBatch<
        npu::tiling::v1::TilingService::WithCallbackMethod_ListPlatforms<
            npu::tiling::v1::TilingService::WithCallbackMethod_Execute<
                npu::tiling::v1::TilingService::Service>>>>;

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
  // request runs the advisor on the calling thread (PrepareAdvise() then
  // RunAdvise()); GetTiling instead runs it on an emulation worker.
  absl::Status Answer(const npu::tiling::v1::TilingRequest& request,
                      npu::tiling::v1::TilingResponse* response);

  // Answer() in wire form, as GetTiling and each batch item send it: the
  // serialized TilingResponse in `bytes`. The engine's decision is encoded
  // straight into them (wire_answer.h), without a message; the bytes are
  // the same. An answer from the cache is copied from its message, and an
  // advice is built as a message of its own.
  absl::Status AnswerSerialized(const npu::tiling::v1::TilingRequest& request,
                                grpc::ByteBuffer* bytes);

  // Parses a serialized TilingRequest into `request`; kInvalidArgument when
  // the bytes are not one.
  static absl::Status ParseRequest(const grpc::ByteBuffer& bytes,
                                   npu::tiling::v1::TilingRequest* request);

  grpc::ServerUnaryReactor* GetTiling(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* GetTilingBatch(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ListPlatforms(
      grpc::CallbackServerContext* context, const npu::tiling::v1::ListPlatformsRequest* request,
      npu::tiling::v1::ListPlatformsResponse* response) override;
  grpc::ServerUnaryReactor* Execute(grpc::CallbackServerContext* context,
                                    const npu::tiling::v1::ExecuteRequest* request,
                                    npu::tiling::v1::ExecuteResponse* response) override;

  // RPCs currently admitted.
  int inflight() const { return inflight_.load(); }
  // From now on refuses every new call with UNAVAILABLE ("shutting down",
  // which clients retry elsewhere); calls already admitted run on.
  // TilingServer::Shutdown() drains this way before gRPC's own shutdown.
  void BeginDrain() { draining_.store(true); }
  // GetTiling's cached decisions.
  const DecisionCache<npu::tiling::TilingDecision>& decision_cache() const { return decisions_; }
  const ServiceOptions& options() const { return options_; }
  const ExecuteQueue& execute_queue() const { return *execute_queue_; }
  // Emulations that were running when their call was cancelled or its
  // deadline passed, and that stopped on the cancellation flag.
  uint64_t execute_runs_interrupted() const { return execute_runs_interrupted_.load(); }

  // The first half of an ADVISE request, cheap enough for an RPC thread:
  // validates and resolves it into `work`, checks the emulation work limit
  // on CANN's plan (kResourceExhausted), and looks the advice up in the
  // cache. On a hit it fills `response` (id included) and sets `*answered`.
  absl::Status PrepareAdvise(const npu::tiling::v1::TilingRequest& request, AdviseWork* work,
                             npu::tiling::v1::TilingResponse* response, bool* answered);
  // The second half, for a worker: runs the advisor, fills `response` (id
  // included) and caches a complete advice. When `cancelled` turns true the
  // advisor's budget ends, so it stops before its next emulation; the caller
  // then discards the answer.
  absl::Status RunAdvise(const npu::tiling::v1::TilingRequest& request, const AdviseWork& work,
                         const std::atomic<bool>* cancelled,
                         npu::tiling::v1::TilingResponse* response);

 private:
  class BatchReactor;
  class ExecuteReactor;
  class AdviseReactor;

  // What the cache or the engine decided for a request, before it becomes an
  // answer: the decision shared with the cache when it is on (`from_cache`
  // when it was found there), else the engine's fresh one.
  struct Decided {
    std::shared_ptr<const npu::tiling::TilingDecision> cached;
    std::optional<npu::tiling::TilingDecision> fresh;
    bool from_cache = false;
    npu::tiling::ChipSpec chip;

    const npu::tiling::TilingDecision& decision() const {
      return cached != nullptr ? *cached : *fresh;
    }
  };
  // Validates a (non-ADVISE) request and decides it, from the cache when it
  // can; the errors are Answer()'s.
  absl::Status Decide(const npu::tiling::v1::TilingRequest& request, Decided* decided);
  // Decide(), then the answer's bytes at the front of `buffer` (EncodeAnswer()),
  // `*size` of them.
  absl::Status DecideAndEncode(const npu::tiling::v1::TilingRequest& request, std::string* buffer,
                               size_t* size);

  // Takes over an admitted GetTiling call in ADVISE mode (advise_reactor.cc):
  // the returned reactor finishes it, releases the admission and reports
  // the call's metrics.
  grpc::ServerUnaryReactor* StartAdvise(grpc::CallbackServerContext* context,
                                        const npu::tiling::v1::TilingRequest& request,
                                        grpc::ByteBuffer* response_bytes,
                                        std::chrono::steady_clock::time_point start);

  // The emulation queue of `options`, reporting its depth to `metrics`
  // (defined with the Execute handler, execute_reactor.cc).
  static std::unique_ptr<ExecuteQueue> NewExecuteQueue(const ExecuteOptions& options,
                                                       ServiceMetrics& metrics);

  // Admits one more RPC, or returns false when `max_inflight` are running or
  // the service is draining.
  bool TryAdmit();
  void Release();
  // Why TryAdmit() refused: UNAVAILABLE while draining, RESOURCE_EXHAUSTED
  // otherwise.
  absl::Status OverloadError() const;

  const npu::tiling::StrategyRegistry& registry_;
  ServiceMetrics& metrics_;
  const ServiceOptions options_;
  // GetTiling's decisions (any view is encoded from one) and ADVISE's whole
  // answers, each at most `cache_capacity` entries.
  DecisionCache<npu::tiling::TilingDecision> decisions_;
  DecisionCache<npu::tiling::v1::TilingResponse> advice_;
  std::atomic<int> inflight_{0};
  std::atomic<bool> draining_{false};
  // Declared last: destroyed first, after gRPC has finished every call.
  std::atomic<uint64_t> execute_runs_interrupted_{0};
  std::unique_ptr<ExecuteQueue> execute_queue_ = NewExecuteQueue(options_.execute, metrics_);
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_TILING_SERVICE_H_
