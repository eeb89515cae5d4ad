// GetTiling's work on the server outside gRPC, per call: parse the request
// bytes and answer them in wire form (validation, chip, decision, metrics,
// the serialized answer), in each response view, with the cache off and on;
// the request's parse alone; the answer's encoding alone, and the same answer
// built as a message; the call's metrics alone.
// The h2load comparison (bench/load_gettiling.sh) is too noisy on a shared
// VM to see changes of a few hundred nanoseconds; this is not.
//
//   taskset -c 1 build/bin/handler_bench
#include <benchmark/benchmark.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <string>

#include "npu/tiling/v1/tiling_service.pb.h"
#include "prometheus/registry.h"
#include "server/metrics/service_metrics.h"
#include "server/service/convert.h"
#include "server/service/request_pipeline.h"
#include "server/service/tiling_service.h"
#include "server/service/wire_answer.h"
#include "server/tiling/builtin_strategies.h"
#include "tests/service/test_server.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;

// The request of bench/load_gettiling.sh: CANN's golden case
// MatMulV3_950_basic_testNZ_streamk.
std::string RequestBytes(pb::ResponseView view) {
  pb::TilingRequest request = testing::StreamKRequest();
  request.set_id("load");
  request.set_client_id("h2load");
  request.set_view(view);
  return request.SerializeAsString();
}

// The engine's decision for the load script's request on `chip`.
absl::StatusOr<tiling::TilingDecision> LoadDecision(const tiling::ChipSpec& chip) {
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  return registry.Decide(ProblemFromProto(testing::StreamKRequest().problem()), chip);
}

void BM_GetTilingHandler(benchmark::State& state) {
  const auto view = static_cast<pb::ResponseView>(state.range(0));
  const bool cache = state.range(1) != 0;
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  prometheus::Registry prometheus;
  ServiceMetrics metrics(prometheus);
  ServiceOptions options;
  options.cache_capacity = cache ? 1024 : 0;
  TilingService service(registry, metrics, options);
  const std::string bytes = RequestBytes(view);
  grpc::Slice slice(bytes.data(), bytes.size());
  const grpc::ByteBuffer request_bytes(&slice, 1);
  size_t answer_bytes = 0;
  // Like the handler: the request is parsed into a message reused from the
  // previous call.
  pb::TilingRequest request;
  for (auto _ : state) {
    if (!TilingService::ParseRequest(request_bytes, &request).ok()) state.SkipWithError("parse");
    grpc::ByteBuffer out;
    if (!service.AnswerSerialized(request, &out).ok()) state.SkipWithError("answer");
    answer_bytes = out.Length();
    benchmark::DoNotOptimize(out);
  }
  state.counters["answer_bytes"] = static_cast<double>(answer_bytes);
}
BENCHMARK(BM_GetTilingHandler)
    ->ArgNames({"view", "cache"})
    ->Args({pb::RESPONSE_VIEW_COMPACT, 0})
    ->Args({pb::RESPONSE_VIEW_FULL, 0})
    ->Args({pb::RESPONSE_VIEW_COMPACT, 1})
    ->Args({pb::RESPONSE_VIEW_FULL, 1});

// The request's parse alone (a part of the handler above): protobuf's
// parser into a message reused from the previous call, as the handler's
// per-thread one is.
void BM_ParseRequest(benchmark::State& state) {
  const std::string bytes = RequestBytes(pb::RESPONSE_VIEW_COMPACT);
  grpc::Slice slice(bytes.data(), bytes.size());
  const grpc::ByteBuffer request_bytes(&slice, 1);
  pb::TilingRequest request;
  for (auto _ : state) {
    if (!ParseRequestBytes(request_bytes, &request).ok()) state.SkipWithError("parse");
    benchmark::DoNotOptimize(request);
  }
  state.counters["request_bytes"] = static_cast<double>(bytes.size());
}
BENCHMARK(BM_ParseRequest);

// The answer's encoding alone (a part of the handler above), for the same
// decision in each view, into a buffer reused across calls as the service's
// per-thread one is.
void BM_EncodeAnswer(benchmark::State& state) {
  const tiling::ChipSpec chip = *tiling::FindPlatform(tiling::kDefaultPlatform);
  absl::StatusOr<tiling::TilingDecision> decision = LoadDecision(chip);
  if (!decision.ok()) {
    state.SkipWithError("decision");
    return;
  }
  AnswerForm form;
  form.view = static_cast<pb::ResponseView>(state.range(0));
  form.include_trace = false;
  form.id = "load";
  std::string buffer;
  size_t size = 0;
  for (auto _ : state) {
    size = EncodeAnswer(*decision, chip, form, &buffer);
    benchmark::DoNotOptimize(buffer.data());
  }
  state.counters["answer_bytes"] = static_cast<double>(size);
}
BENCHMARK(BM_EncodeAnswer)
    ->ArgName("view")
    ->Arg(pb::RESPONSE_VIEW_COMPACT)
    ->Arg(pb::RESPONSE_VIEW_FULL);

// The same answer as a message (DecisionToProto(): the encoder's bytes
// parsed), then serialized by protobuf: what the paths that need a message
// (ADVISE, Execute, GetGraphTiling) pay, and what GetTiling's wire path
// saves per call.
void BM_AnswerMessage(benchmark::State& state) {
  const tiling::ChipSpec chip = *tiling::FindPlatform(tiling::kDefaultPlatform);
  absl::StatusOr<tiling::TilingDecision> decision = LoadDecision(chip);
  if (!decision.ok()) {
    state.SkipWithError("decision");
    return;
  }
  const auto view = static_cast<pb::ResponseView>(state.range(0));
  std::string buffer;
  for (auto _ : state) {
    pb::TilingResponse response;
    DecisionToProto(*decision, chip, &response, /*include_trace=*/false, view);
    response.set_id("load");
    response.SerializeToString(&buffer);
    benchmark::DoNotOptimize(buffer.data());
  }
  state.counters["answer_bytes"] = static_cast<double>(buffer.size());
}
BENCHMARK(BM_AnswerMessage)
    ->ArgName("view")
    ->Arg(pb::RESPONSE_VIEW_COMPACT)
    ->Arg(pb::RESPONSE_VIEW_FULL);

// The metrics one GetTiling call records, from one thread and from two at
// once (as the server's two RPC threads do under load): per-thread stripes
// keep the second thread from slowing the first.
void BM_CallMetrics(benchmark::State& state) {
  static prometheus::Registry* const prometheus = new prometheus::Registry;
  static ServiceMetrics* const metrics = [] {
    auto* created = new ServiceMetrics(*prometheus);
    created->AddStrategies(
        {"K_EQUAL_ZERO", "TO_MUL", "TO_MULTI_MUL", "BASIC_STREAM_K", "BASIC_ASWT"});
    return created;
  }();
  for (auto _ : state) {
    metrics->RpcStarted(RpcMethod::kGetTiling);
    metrics->MessageReceived(RpcMethod::kGetTiling);
    metrics->DecisionTimed(0.0000012);
    metrics->DecisionServed("BASIC_STREAM_K");
    metrics->MessageSent(RpcMethod::kGetTiling);
    metrics->RpcHandled(RpcMethod::kGetTiling, absl::StatusCode::kOk, 0.000015);
  }
}
BENCHMARK(BM_CallMetrics)->Threads(1)->Threads(2);

}  // namespace
}  // namespace npu::server

BENCHMARK_MAIN();
