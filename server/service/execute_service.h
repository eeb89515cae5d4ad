// The Execute RPC: the emulation queue and one reactor per call.
//
// Execute runs the emulator, which can take seconds of CPU, so the handler
// only parses and prepares the run (execute.h, on the gRPC thread) and hands
// it to a bounded queue of emulation workers (execute_queue.h); the call
// finishes from the worker (queued_reactor.h describes the life of such a
// call). A full queue is RESOURCE_EXHAUSTED at once, and the call's deadline
// or cancellation stops a running emulation through its cancellation flag.
// ADVISE requests (advise_reactor.h) share the queue.
#ifndef NPU_SERVER_SERVICE_EXECUTE_SERVICE_H_
#define NPU_SERVER_SERVICE_EXECUTE_SERVICE_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "server/metrics/service_metrics.h"
#include "server/service/admission.h"
#include "server/service/execute.h"
#include "server/service/execute_queue.h"
#include "server/tiling/registry.h"

namespace npu::server {

class ExecuteService {
 public:
  // Runs emulations of `registry`'s plans on the workers of `options`,
  // reporting to `metrics` (both must outlive this).
  ExecuteService(const npu::tiling::StrategyRegistry& registry, ServiceMetrics& metrics,
                 const ExecuteOptions& options);

  ExecuteService(const ExecuteService&) = delete;
  ExecuteService& operator=(const ExecuteService&) = delete;

  // Takes over an Execute call: parses the serialized ExecuteRequest in
  // `request_bytes` (kInvalidArgument naming the message when it does not
  // parse), admits it through `admission`, prepares and queues the run. The
  // returned reactor finishes the call with the serialized ExecuteResponse
  // in `response_bytes`, releases the admission and reports the metrics.
  grpc::ServerUnaryReactor* Start(Admission& admission, grpc::CallbackServerContext* context,
                                  const grpc::ByteBuffer* request_bytes,
                                  grpc::ByteBuffer* response_bytes);

  // The emulation workers, shared with ADVISE.
  ExecuteQueue& queue() { return queue_; }
  const ExecuteQueue& queue() const { return queue_; }
  // Emulations that were running when their call was cancelled or its
  // deadline passed, and that stopped on the cancellation flag.
  uint64_t runs_interrupted() const { return runs_interrupted_.load(); }

 private:
  class Reactor;

  const npu::tiling::StrategyRegistry& registry_;
  ServiceMetrics& metrics_;
  const ExecuteOptions options_;
  std::atomic<uint64_t> runs_interrupted_{0};
  // Declared last: destroyed first, completing the calls still waiting.
  ExecuteQueue queue_;
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_EXECUTE_SERVICE_H_
