// One GetTilingBatch stream (the streaming half of the GetTiling family,
// tiling_answers.h): requests answered in arrival order on the RPC thread,
// each item's failure in that item's status, the stream going on.
#ifndef NPU_SERVER_SERVICE_BATCH_REACTOR_H_
#define NPU_SERVER_SERVICE_BATCH_REACTOR_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include <cstdint>

#include "server/metrics/service_metrics.h"
#include "server/service/admission.h"
#include "server/service/tiling_answers.h"

namespace npu::server {

// Takes over a GetTilingBatch stream: admits it through `admission` (or
// finishes it with the refusal), answers each request with `answers`, at
// most `max_batch` of them. The reactor deletes itself when the stream is
// done.
grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StartBatch(
    TilingAnswers& answers, ServiceMetrics& metrics, Admission& admission, int64_t max_batch,
    grpc::CallbackServerContext* context);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_BATCH_REACTOR_H_
