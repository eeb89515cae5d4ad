// GetTiling in ADVISE mode on the emulation workers: the advisor
// (advice_service.h) on a worker of the service's emulation queue, the one
// Execute uses, one reactor per call (queued_reactor.h describes the life of
// such a call). Sharing the pool keeps one bound on the server's emulation
// CPU and memory. Deadline and cancellation end the advisor's budget, so it
// stops before its next emulation.
#ifndef NPU_SERVER_SERVICE_ADVISE_REACTOR_H_
#define NPU_SERVER_SERVICE_ADVISE_REACTOR_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include <chrono>

#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/metrics/service_metrics.h"
#include "server/service/admission.h"
#include "server/service/advice_service.h"
#include "server/service/execute_queue.h"

namespace npu::server {

// Takes over a GetTiling call in ADVISE mode that `admission` admitted at
// `start`: answers a cache hit (or an error) at once, otherwise runs the
// advisor on `queue`. The returned reactor finishes the call into
// `response_bytes`, releases the admission and reports the call's metrics.
grpc::ServerUnaryReactor* StartAdvise(AdviceService& advice, ExecuteQueue& queue,
                                      ServiceMetrics& metrics, Admission& admission,
                                      grpc::CallbackServerContext* context,
                                      const npu::tiling::v1::TilingRequest& request,
                                      grpc::ByteBuffer* response_bytes,
                                      std::chrono::steady_clock::time_point start);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_ADVISE_REACTOR_H_
