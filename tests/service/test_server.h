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
#include "tests/testing/wait.h"

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

// Problems that reach different strategies and error paths.
inline std::vector<pb::TilingRequest> VariedRequests() {
  std::vector<pb::TilingRequest> requests;
  requests.push_back(StreamKRequest());
  requests.push_back(ShapeRequest(1024, 1024, 1024));
  requests.push_back(ShapeRequest(11665, 47, 89));
  requests.push_back(ShapeRequest(32, 8400, 16));
  requests.push_back(ShapeRequest(256, 256, 0));  // K = 0
  pb::TilingRequest to_mul = ShapeRequest(8, 8192, 1);
  to_mul.mutable_problem()->set_force_grp_acc_fp32(true);
  requests.push_back(to_mul);
  pb::TilingRequest bias = ShapeRequest(2048, 2048, 512);
  bias.mutable_problem()->set_has_bias(true);
  bias.mutable_problem()->set_dtype_bias(pb::DATA_TYPE_FLOAT32);
  requests.push_back(bias);
  pb::TilingRequest fp32 = ShapeRequest(4096, 4096, 4096);
  fp32.mutable_problem()->set_dtype_a(pb::DATA_TYPE_FLOAT32);
  fp32.mutable_problem()->set_dtype_b(pb::DATA_TYPE_FLOAT32);
  fp32.mutable_problem()->set_dtype_c(pb::DATA_TYPE_FLOAT32);
  requests.push_back(fp32);
  pb::TilingRequest hf32 = fp32;
  hf32.mutable_problem()->set_hf32(true);
  requests.push_back(hf32);
  pb::TilingRequest deterministic = StreamKRequest();
  deterministic.mutable_problem()->set_deterministic_level(2);
  requests.push_back(deterministic);
  pb::TilingRequest basic_api = StreamKRequest();
  basic_api.mutable_problem()->set_avoid_tensor_api(true);
  requests.push_back(basic_api);
  pb::TilingRequest small_chip = StreamKRequest();
  small_chip.mutable_platform_overrides()->set_aic_num(8);
  small_chip.mutable_platform_overrides()->set_aiv_num(16);
  requests.push_back(small_chip);
  requests.push_back(ShapeRequest(0, 16, 16));  // invalid: the error must not be cached
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].set_id("r" + std::to_string(i));
    requests[i].set_include_trace(i % 2 == 0);
  }
  return requests;
}

// Waits until the server has released every admitted RPC: the client sees a
// call's status before the server's reactor has run OnDone(). The bound only
// guards against a hang.
// Waits until no call is admitted and the emulation workers are idle:
// everything a finished call records (its metrics included) is then recorded.
inline void WaitForIdle(TestServer& server) {
  ASSERT_TRUE(::npu::testing::WaitFor([&] {
    const TilingService& service = server.server().service();
    return service.inflight() == 0 && service.execute_queue().running() == 0 &&
           service.execute_queue().queued() == 0;
  }));
}

inline void WaitForNoAdmittedCalls(TestServer& server) {
  for (int i = 0; i < 10000 && server.server().service().inflight() != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(server.server().service().inflight(), 0);
}

}  // namespace npu::server::testing

#endif  // NPU_TESTS_SERVICE_TEST_SERVER_H_
