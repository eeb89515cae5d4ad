// GetGraphTiling without the transport: an ONNX model in, every matmul's
// answer out.
//
// The call runs on a worker of the emulation queue (the one Execute and
// ADVISE use, so one bound holds the server's heavy work), never on a gRPC
// thread: parsing a large model, ONNX's checker and shape inference take
// milliseconds to seconds. Its steps:
//   1. the request's own fields and the chip (GetTiling's rules and codes);
//   2. the model parsed, checked (graph/onnx_model.h) and its large
//      initializers' data dropped (their dims are all that matters);
//   3. the gears (symbolic dim values) and, per gear, shape inference and
//      the lowering of every matmul-like node (graph/lowering.h);
//   4. each distinct problem decided once, in parallel, through GetTiling's
//      own path (TilingAnswers, with its cache), and, with `emulate`, run
//      timing-only on the emulator;
//   5. the answer: per gear its nodes and totals, per problem its compact
//      answer, decision key and time, and the provenance.
// A problem the engine cannot tile fails its nodes (NODE_STATUS_FAILED, with
// the problem's status), not the call.
#ifndef NPU_SERVER_SERVICE_GRAPH_SERVICE_H_
#define NPU_SERVER_SERVICE_GRAPH_SERVICE_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/metrics/service_metrics.h"
#include "server/service/admission.h"
#include "server/service/execute.h"
#include "server/service/execute_queue.h"
#include "server/service/tiling_answers.h"
#include "server/tiling/registry.h"

namespace npu::server {

struct GraphOptions {
  // Largest model accepted, bytes. The server's receive limit
  // (--max_message_bytes) bounds the request before it reaches the service.
  size_t max_model_bytes = 4 * 1024 * 1024;
  // Gears one request may ask for (--max_graph_gears).
  size_t max_gears = 64;
  // Matmul-like nodes times gears: the node entries of one answer, about
  // 150 bytes each, so 200,000 keep an answer near 30 MB.
  size_t max_node_answers = 200000;
  // Host threads deciding (and emulating) the distinct problems of one call;
  // 0 means the machine's CPU count.
  int threads = 0;
};

class GraphService {
 public:
  // `answers` decides, `registry` and `execute` serve the emulations; all
  // must outlive this.
  GraphService(TilingAnswers& answers, const npu::tiling::StrategyRegistry& registry,
               ServiceMetrics& metrics, const ExecuteOptions& execute, GraphOptions options);

  GraphService(const GraphService&) = delete;
  GraphService& operator=(const GraphService&) = delete;

  // The answer to `request` (every field but the per-problem statuses is
  // set on success). Stops with kCancelled when `cancelled` turns true.
  // kInvalidArgument naming the field ("model: ...", "dims: ..."),
  // kNotFound / kFailedPrecondition for the platform as in GetTiling.
  absl::Status Answer(const npu::tiling::v1::GraphTilingRequest& request,
                      const std::atomic<bool>* cancelled,
                      npu::tiling::v1::GraphTilingResponse* response);

  // Takes over a GetGraphTiling call: parses `request_bytes`, queues the
  // work on `queue` (RESOURCE_EXHAUSTED when it is full) and finishes the
  // call into `response_bytes`, releasing `admission` and reporting the
  // call's metrics.
  grpc::ServerUnaryReactor* Start(ExecuteQueue& queue, Admission& admission,
                                  grpc::CallbackServerContext* context,
                                  const grpc::ByteBuffer* request_bytes,
                                  grpc::ByteBuffer* response_bytes);

  const GraphOptions& options() const { return options_; }

 private:
  class Reactor;

  TilingAnswers& answers_;
  const npu::tiling::StrategyRegistry& registry_;
  ServiceMetrics& metrics_;
  const ExecuteOptions& execute_;
  const GraphOptions options_;
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_GRAPH_SERVICE_H_
