// Test support for the service tests: a real TilingServer on 127.0.0.1:0
// with its own Prometheus registry, request builders and a metric reader.
#ifndef NPU_TESTS_SERVICE_TEST_SERVER_H_
#define NPU_TESTS_SERVICE_TEST_SERVER_H_

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.grpc.pb.h"
#include "prometheus/registry.h"
#include "server/metrics/service_metrics.h"
#include "server/service/server.h"
#include "server/tiling/builtin_strategies.h"

namespace npu::server::testing {

namespace pb = ::npu::tiling::v1;

inline ServerOptions LoopbackOptions() {
  ServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  return options;
}

// A started server with the built-in strategies (or `registry`), a channel
// and a stub to it.
class TestServer {
 public:
  explicit TestServer(ServerOptions options = LoopbackOptions(),
                      const npu::tiling::StrategyRegistry* registry = nullptr)
      : registry_(npu::tiling::MakeBuiltinRegistry()),
        prometheus_(std::make_shared<prometheus::Registry>()),
        metrics_(*prometheus_) {
    absl::StatusOr<std::unique_ptr<TilingServer>> server =
        TilingServer::Start(options, registry != nullptr ? *registry : registry_, metrics_);
    EXPECT_TRUE(server.ok()) << server.status();
    if (!server.ok()) return;
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    stub_ = pb::TilingService::NewStub(channel_);
  }

  TilingServer& server() { return *server_; }
  const std::shared_ptr<grpc::Channel>& channel() { return channel_; }
  pb::TilingService::Stub& stub() { return *stub_; }
  prometheus::Registry& prometheus() { return *prometheus_; }

  // The value of a counter or gauge series, or the sample count of a
  // histogram series; -1 when the series does not exist.
  double Metric(const std::string& name, const std::map<std::string, std::string>& labels = {}) {
    for (const prometheus::MetricFamily& family : metrics_.Collect()) {
      if (family.name != name) continue;
      for (const prometheus::ClientMetric& metric : family.metric) {
        std::map<std::string, std::string> have;
        for (const auto& label : metric.label) have[label.name] = label.value;
        bool match = true;
        for (const auto& [key, value] : labels) match = match && have[key] == value;
        if (!match) continue;
        switch (family.type) {
          case prometheus::MetricType::Counter:
            return metric.counter.value;
          case prometheus::MetricType::Gauge:
            return metric.gauge.value;
          case prometheus::MetricType::Histogram:
            return static_cast<double>(metric.histogram.sample_count);
          default:
            return -1;
        }
      }
    }
    return -1;
  }

 private:
  npu::tiling::StrategyRegistry registry_;
  std::shared_ptr<prometheus::Registry> prometheus_;
  ServiceMetrics metrics_;
  std::unique_ptr<TilingServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::TilingService::Stub> stub_;
};

// A valid request: CANN's golden case MatMulV3_950_basic_testNZ_streamk
// (expected key 4162, block dim 32, BASIC_STREAM_K).
inline pb::TilingRequest StreamKRequest() {
  pb::TilingRequest request;
  request.set_id("streamk");
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_m(4096);
  p->set_n(1280);
  p->set_k(8192);
  p->set_dtype_a(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_b(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_c(pb::DATA_TYPE_FLOAT16);
  p->set_trans_b(true);
  p->set_format_b(pb::FORMAT_FRACTAL_NZ);
  return request;
}

// A small plain fp16 problem of the given shape.
inline pb::TilingRequest ShapeRequest(int64_t m, int64_t n, int64_t k) {
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_m(m);
  p->set_n(n);
  p->set_k(k);
  p->set_dtype_a(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_b(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_c(pb::DATA_TYPE_FLOAT16);
  return request;
}

// One GetTiling call on `server` with a deadline of `deadline` from now.
inline grpc::Status CallGetTiling(TestServer& server, const pb::TilingRequest& request,
                                  pb::TilingResponse* response,
                                  std::chrono::seconds deadline = std::chrono::seconds(30)) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  return server.stub().GetTiling(&context, request, response);
}

struct BatchResult {
  std::vector<pb::TilingResponse> responses;
  grpc::Status status;
};

// Sends `requests` on one GetTilingBatch stream (writer thread) and collects
// every response until the server finishes.
inline BatchResult RunBatch(pb::TilingService::Stub& stub,
                            const std::vector<pb::TilingRequest>& requests) {
  grpc::ClientContext context;
  auto stream = stub.GetTilingBatch(&context);
  std::thread writer([&] {
    for (const pb::TilingRequest& request : requests) {
      if (!stream->Write(request)) break;
    }
    stream->WritesDone();
  });
  BatchResult result;
  pb::TilingResponse response;
  while (stream->Read(&response)) result.responses.push_back(response);
  writer.join();
  result.status = stream->Finish();
  return result;
}

}  // namespace npu::server::testing

#endif  // NPU_TESTS_SERVICE_TEST_SERVER_H_
