// End-to-end tests of TilingService through a real server on 127.0.0.1:0:
// every unary RPC, every error path, the cache, overload, health, drain and
// the metrics the calls move (GetTilingBatch: batch_reactor_test.cc).
#include "server/service/tiling_service.h"

#include <grpcpp/client_context.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/tiling_client.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/strategy.h"
#include "tests/service/test_server.h"

namespace npu::server {
namespace {

using ::npu::server::testing::BatchResult;
using ::npu::server::testing::LoopbackOptions;
using ::npu::server::testing::RunBatch;
using ::npu::server::testing::ShapeRequest;
using ::npu::server::testing::StreamKRequest;
using ::npu::server::testing::TestServer;
using ::npu::server::testing::VariedRequests;
using ::npu::server::testing::WaitForNoAdmittedCalls;
using ::testing::HasSubstr;
namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;

grpc::Status Call(TestServer& server, const pb::TilingRequest& request,
                  pb::TilingResponse* response) {
  return ::npu::server::testing::CallGetTiling(server, request, response);
}

uint64_t FieldValue(const pb::TilingResponse& response, const std::string& name) {
  for (const pb::TilingField& field : response.fields()) {
    if (field.name() == name) return field.value();
  }
  ADD_FAILURE() << "no field " << name;
  return 0;
}

TEST(GetTilingTest, AnswersTheGoldenStreamKCase) {
  TestServer server;
  pb::TilingRequest request = StreamKRequest();
  request.set_include_trace(true);
  pb::TilingResponse response;
  ASSERT_TRUE(Call(server, request, &response).ok());

  EXPECT_EQ(response.id(), "streamk");
  EXPECT_EQ(response.tiling_key(), 4162u);
  EXPECT_EQ(response.block_dim(), 32u);
  EXPECT_EQ(response.strategy(), "BASIC_STREAM_K");
  EXPECT_EQ(response.key().api_level(), pb::API_LEVEL_TENSOR);
  EXPECT_EQ(response.key().api_level_name(), "TENSOR_LEVEL");
  EXPECT_EQ(response.key().model(), pb::KERNEL_MODEL_STREAM_K);
  EXPECT_EQ(response.key().model_name(), "STREAM_K");
  EXPECT_TRUE(response.key().trans_b());
  EXPECT_EQ(response.key().full_load_name(), "NONE");
  EXPECT_EQ(response.key().l0c2out_name(), "ON_THE_FLY");
  EXPECT_EQ(response.kernel_type(), pb::KERNEL_TYPE_MIX_AIC_1_AIV_2);
  EXPECT_EQ(response.tiling_struct(), "MatMulV3BasicTilingData");
  EXPECT_EQ(FieldValue(response, "baseM"), 256u);
  EXPECT_EQ(FieldValue(response, "baseK"), 64u);
  EXPECT_EQ(FieldValue(response, "skSingleCoreK"), 4096u);
  EXPECT_EQ(FieldValue(response, "l1BufferNum"), 2u);
  EXPECT_EQ(response.raw_words_size(), 23);
  EXPECT_EQ(response.platform().name(), "ascend950pr");
  EXPECT_EQ(response.platform().aic_num(), 32u);
  EXPECT_FALSE(response.from_cache());
  EXPECT_FALSE(response.has_status());
  ASSERT_GT(response.trace_size(), 0);
  EXPECT_EQ(response.trace(response.trace_size() - 1).strategy(), "BASIC_STREAM_K");
  EXPECT_TRUE(response.trace(response.trace_size() - 1).chosen());
}

TEST(GetTilingTest, TraceOnlyWhenAsked) {
  TestServer server;
  pb::TilingResponse response;
  ASSERT_TRUE(Call(server, StreamKRequest(), &response).ok());
  EXPECT_EQ(response.trace_size(), 0);
}

TEST(GetTilingTest, PlatformOverridesReachTheEngine) {
  TestServer server;
  pb::TilingRequest request = StreamKRequest();
  request.mutable_platform_overrides()->set_aic_num(24);
  request.mutable_platform_overrides()->set_aiv_num(48);
  pb::TilingResponse response;
  ASSERT_TRUE(Call(server, request, &response).ok());
  EXPECT_EQ(response.platform().aic_num(), 24u);
  EXPECT_EQ(response.platform().aiv_num(), 48u);
  EXPECT_LE(response.block_dim(), 24u);
}

TEST(GetTilingTest, ForcedStrategyIsUsed) {
  TestServer server;
  pb::TilingRequest request = StreamKRequest();
  request.set_forced_strategy("BASIC_ASWT");
  pb::TilingResponse response;
  ASSERT_TRUE(Call(server, request, &response).ok());
  EXPECT_EQ(response.strategy(), "BASIC_ASWT");
}

// The fields a compact answer carries, copied out of a full one.
pb::TilingResponse CompactPart(const pb::TilingResponse& full) {
  pb::TilingResponse compact;
  compact.set_id(full.id());
  compact.set_tiling_key(full.tiling_key());
  *compact.mutable_raw_words() = full.raw_words();
  compact.set_block_dim(full.block_dim());
  compact.set_kernel_type(full.kernel_type());
  compact.set_workspace_bytes(full.workspace_bytes());
  compact.set_strategy(full.strategy());
  compact.set_from_cache(full.from_cache());
  *compact.mutable_trace() = full.trace();
  return compact;
}

TEST(GetTilingTest, CompactViewIsTheLauncherPartOfTheFullAnswer) {
  for (const bool cache : {false, true}) {
    SCOPED_TRACE(cache ? "cache on" : "cache off");
    ServerOptions options = LoopbackOptions();
    if (!cache) options.service.cache_capacity = 0;
    TestServer server(options);
    for (pb::TilingRequest request : {StreamKRequest(), ShapeRequest(1, 1000, 64),
                                      ShapeRequest(4096, 4096, 4096), ShapeRequest(333, 77, 0)}) {
      for (const bool trace : {false, true}) {
        request.set_include_trace(trace);
        pb::TilingResponse full, compact, compact_again;
        request.set_view(pb::RESPONSE_VIEW_FULL);
        ASSERT_TRUE(Call(server, request, &full).ok());
        request.set_view(pb::RESPONSE_VIEW_COMPACT);
        ASSERT_TRUE(Call(server, request, &compact).ok());
        ASSERT_TRUE(Call(server, request, &compact_again).ok());
        EXPECT_TRUE(full.has_key() && full.has_platform() && full.fields_size() > 0);
        EXPECT_FALSE(compact.has_key() || compact.has_platform() || compact.has_block());
        EXPECT_EQ(compact.fields_size(), 0);
        EXPECT_GT(compact.raw_words_size(), 0);
        EXPECT_EQ(compact.trace_size() > 0, trace);
        if (!trace) {
          EXPECT_LT(compact.ByteSizeLong() * 4, full.ByteSizeLong());
        }
        // Fresh or from the cache, a compact answer is the same message.
        compact.set_from_cache(full.from_cache());
        EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(CompactPart(full), compact))
            << "full:    " << full.ShortDebugString()
            << "\ncompact: " << compact.ShortDebugString();
        EXPECT_EQ(compact_again.from_cache(), cache);
        compact_again.set_from_cache(compact.from_cache());
        EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(compact, compact_again));
      }
    }
  }
}

TEST(GetTilingTest, UnspecifiedViewIsFull) {
  TestServer server;
  pb::TilingRequest request = StreamKRequest();
  pb::TilingResponse unspecified, full;
  ASSERT_TRUE(Call(server, request, &unspecified).ok());
  request.set_view(pb::RESPONSE_VIEW_FULL);
  ASSERT_TRUE(Call(server, request, &full).ok());
  full.set_from_cache(unspecified.from_cache());
  EXPECT_EQ(unspecified.SerializeAsString(), full.SerializeAsString());
}

struct ErrorCase {
  std::string name;
  std::function<void(pb::TilingRequest*)> mutate;
  grpc::StatusCode code;
  std::string message_part;  // the field path the message must name
};

class GetTilingErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(GetTilingErrorTest, MapsToCodeNamingTheField) {
  TestServer server;
  pb::TilingRequest request = StreamKRequest();
  GetParam().mutate(&request);
  pb::TilingResponse response;
  grpc::Status status = Call(server, request, &response);
  EXPECT_EQ(status.error_code(), GetParam().code) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr(GetParam().message_part));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, GetTilingErrorTest,
    ::testing::Values(
        ErrorCase{"MissingProblem", [](pb::TilingRequest* r) { r->clear_problem(); },
                  grpc::StatusCode::INVALID_ARGUMENT, "problem: required"},
        ErrorCase{"UnspecifiedDtype",
                  [](pb::TilingRequest* r) {
                    r->mutable_problem()->set_dtype_a(pb::DATA_TYPE_UNSPECIFIED);
                  },
                  grpc::StatusCode::INVALID_ARGUMENT, "problem.dtype_a"},
        ErrorCase{"UnknownDtypeNumber",
                  [](pb::TilingRequest* r) {
                    r->mutable_problem()->set_dtype_b(static_cast<pb::DataType>(42));
                  },
                  grpc::StatusCode::INVALID_ARGUMENT, "problem.dtype_b"},
        ErrorCase{"UnknownFormatNumber",
                  [](pb::TilingRequest* r) {
                    r->mutable_problem()->set_format_c(static_cast<pb::Format>(7));
                  },
                  grpc::StatusCode::INVALID_ARGUMENT, "problem.format_c"},
        ErrorCase{"BiasWithoutDtype",
                  [](pb::TilingRequest* r) { r->mutable_problem()->set_has_bias(true); },
                  grpc::StatusCode::INVALID_ARGUMENT, "problem.dtype_bias"},
        ErrorCase{"ZeroM", [](pb::TilingRequest* r) { r->mutable_problem()->set_m(0); },
                  grpc::StatusCode::INVALID_ARGUMENT, "problem: "},
        ErrorCase{"NegativeN", [](pb::TilingRequest* r) { r->mutable_problem()->set_n(-5); },
                  grpc::StatusCode::INVALID_ARGUMENT, "problem: "},
        ErrorCase{"SliceRank",
                  [](pb::TilingRequest* r) {
                    r->mutable_problem()->mutable_a_slice()->set_enabled(true);
                  },
                  grpc::StatusCode::INVALID_ARGUMENT, "problem.a_slice.rank"},
        ErrorCase{"StorageShapeTooLong",
                  [](pb::TilingRequest* r) {
                    for (int i = 0; i < 9; ++i) r->mutable_problem()->add_storage_shape_b(1);
                  },
                  grpc::StatusCode::INVALID_ARGUMENT, "problem.storage_shape_b"},
        ErrorCase{"IdTooLong", [](pb::TilingRequest* r) { r->set_id(std::string(300, 'x')); },
                  grpc::StatusCode::INVALID_ARGUMENT, "id: "},
        ErrorCase{"ClientIdTooLong",
                  [](pb::TilingRequest* r) { r->set_client_id(std::string(200, 'c')); },
                  grpc::StatusCode::INVALID_ARGUMENT, "client_id: "},
        ErrorCase{"OverrideBelowRange",
                  [](pb::TilingRequest* r) { r->mutable_platform_overrides()->set_aic_num(0); },
                  grpc::StatusCode::INVALID_ARGUMENT, "platform_overrides.aic_num"},
        ErrorCase{"OverrideAboveRange",
                  [](pb::TilingRequest* r) {
                    r->mutable_platform_overrides()->set_l1_bytes(uint64_t{1} << 40);
                  },
                  grpc::StatusCode::INVALID_ARGUMENT, "platform_overrides.l1_bytes"},
        ErrorCase{"UnknownPlatform", [](pb::TilingRequest* r) { r->set_platform("ascend310"); },
                  grpc::StatusCode::NOT_FOUND, "platform: "},
        ErrorCase{"UnknownStrategy",
                  [](pb::TilingRequest* r) { r->set_forced_strategy("FASTEST"); },
                  grpc::StatusCode::NOT_FOUND, "forced_strategy: "},
        ErrorCase{"UnknownView",
                  [](pb::TilingRequest* r) { r->set_view(static_cast<pb::ResponseView>(9)); },
                  grpc::StatusCode::INVALID_ARGUMENT, "view: unknown view 9"},
        ErrorCase{"IncapableForcedStrategy",
                  [](pb::TilingRequest* r) { r->set_forced_strategy("K_EQUAL_ZERO"); },
                  grpc::StatusCode::FAILED_PRECONDITION, "forced_strategy: "}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

// A strategy that claims every problem and then fails: an engine bug.
class BrokenStrategy : public npu::tiling::Strategy {
 public:
  std::string_view name() const override { return "BROKEN"; }
  npu::tiling::Capability IsCapable(const npu::tiling::MatmulProblem&,
                                    const npu::tiling::ProblemFacts&,
                                    const npu::tiling::ChipSpec&) const override {
    return npu::tiling::Capability::Yes("claims everything");
  }
  absl::StatusOr<npu::tiling::TilingPlan> DoTiling(const npu::tiling::MatmulProblem&,
                                                   const npu::tiling::ProblemFacts&,
                                                   const npu::tiling::ChipSpec&) const override {
    return absl::OutOfRangeError("index past the end");
  }
};

TEST(GetTilingTest, EngineBugIsInternal) {
  npu::tiling::StrategyRegistry broken;
  ASSERT_TRUE(broken.Add(std::make_unique<BrokenStrategy>(), tl::MatmulOp::kMatMulV3).ok());
  TestServer server(LoopbackOptions(), &broken);
  pb::TilingResponse response;
  grpc::Status status = Call(server, StreamKRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(status.error_message(), HasSubstr("BROKEN"));
}

TEST(GetTilingTest, OversizedMessageIsResourceExhausted) {
  ServerOptions options = LoopbackOptions();
  options.max_message_bytes = 1024;
  TestServer server(options);
  pb::TilingRequest request = StreamKRequest();
  for (int i = 0; i < 400; ++i) request.mutable_problem()->add_storage_shape_b(1 << 20);
  pb::TilingResponse response;
  EXPECT_EQ(Call(server, request, &response).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST(ListPlatformsTest, ListsTheDefaultFirst) {
  TestServer server;
  grpc::ClientContext context;
  pb::ListPlatformsResponse response;
  ASSERT_TRUE(server.stub().ListPlatforms(&context, pb::ListPlatformsRequest(), &response).ok());
  ASSERT_GE(response.platforms_size(), 1);
  EXPECT_EQ(response.default_platform(), "ascend950pr");
  EXPECT_EQ(response.platforms(0).name(), "ascend950pr");
  EXPECT_EQ(response.platforms(0).aic_num(), 32u);
  EXPECT_EQ(response.platforms(0).aiv_num(), 64u);
  EXPECT_EQ(response.platforms(0).l1_bytes(), 512u * 1024);
}

// Both built-in profiles, each with its architecture.
TEST(ListPlatformsTest, EveryProfileCarriesItsArchitecture) {
  TestServer server;
  grpc::ClientContext context;
  pb::ListPlatformsResponse response;
  ASSERT_TRUE(server.stub().ListPlatforms(&context, pb::ListPlatformsRequest(), &response).ok());
  ASSERT_EQ(response.platforms_size(), 2);
  EXPECT_EQ(response.platforms(0).npu_arch(), "DAV_3510");
  EXPECT_EQ(response.platforms(1).name(), "ascend910b1");
  EXPECT_EQ(response.platforms(1).npu_arch(), "DAV_2201");
  EXPECT_EQ(response.platforms(1).aic_num(), 24u);
  EXPECT_EQ(response.platforms(1).cube_freq_mhz(), 1850u);
}

// The answer's platform names its architecture.
TEST(GetTilingTest, AnswerPlatformCarriesTheArchitecture) {
  TestServer server;
  pb::TilingResponse response;
  ASSERT_TRUE(Call(server, StreamKRequest(), &response).ok());
  EXPECT_EQ(response.platform().npu_arch(), "DAV_3510");
}

// CANN's arch35 tiling does not apply to the Atlas A2 (DAV_2201): every
// tiling path refuses it with FAILED_PRECONDITION naming the platform and
// its arch, with overrides too, and with the cache on or off.
TEST(GetTilingTest, OtherArchitectureIsFailedPreconditionOnEveryPath) {
  for (size_t cache : {size_t{0}, size_t{64}}) {
    SCOPED_TRACE(cache == 0 ? "cache off" : "cache on");
    ServerOptions options = LoopbackOptions();
    options.service.cache_capacity = cache;
    TestServer server(options);
    pb::TilingRequest request = ShapeRequest(1024, 1024, 1024);
    request.set_platform("ascend910b1");
    pb::TilingRequest overridden = request;
    // The 950PR's figures on the A2 profile: still DAV_2201.
    overridden.mutable_platform_overrides()->set_aic_num(32);
    overridden.mutable_platform_overrides()->set_aiv_num(64);
    overridden.mutable_platform_overrides()->set_cube_freq_mhz(1650);
    pb::TilingRequest forced = request;
    forced.set_forced_strategy("BASIC_ASWT");
    pb::TilingRequest advise = request;
    advise.set_mode(pb::TILING_MODE_ADVISE);
    for (const pb::TilingRequest& r : {request, overridden, forced, advise, request}) {
      SCOPED_TRACE(r.ShortDebugString());
      pb::TilingResponse response;
      grpc::Status status = Call(server, r, &response);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
      EXPECT_THAT(status.error_message(),
                  HasSubstr("platform: CANN's arch35 mat_mul_v3 tiling applies to DAV_3510 only; "
                            "platform \"ascend910b1\" is DAV_2201"));
      EXPECT_THAT(status.error_message(), HasSubstr("Execute with a kernel_schedule"));
    }
    // In a batch the item fails and the stream goes on.
    BatchResult batch = RunBatch(server.stub(), {request, ShapeRequest(1024, 1024, 1024)});
    ASSERT_TRUE(batch.status.ok()) << batch.status.error_message();
    ASSERT_EQ(batch.responses.size(), 2u);
    EXPECT_EQ(batch.responses[0].status().code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(batch.responses[0].status().code_name(), "FAILED_PRECONDITION");
    EXPECT_THAT(batch.responses[0].status().message(), HasSubstr("DAV_2201"));
    EXPECT_FALSE(batch.responses[1].has_status());
  }
}

TEST(DecisionCacheTest, AnswersAreIdenticalWithAndWithoutCache) {
  ServerOptions uncached_options = LoopbackOptions();
  uncached_options.service.cache_capacity = 0;
  TestServer uncached(uncached_options);
  TestServer cached;  // default capacity

  const std::vector<pb::TilingRequest> requests = VariedRequests();
  size_t answered = 0;  // distinct successful decisions, each cached once
  for (int round = 0; round < 3; ++round) {
    for (const pb::TilingRequest& request : requests) {
      SCOPED_TRACE(request.id() + " round " + std::to_string(round));
      pb::TilingResponse fresh, maybe_cached;
      grpc::Status fresh_status = Call(uncached, request, &fresh);
      grpc::Status cached_status = Call(cached, request, &maybe_cached);
      ASSERT_EQ(fresh_status.error_code(), cached_status.error_code());
      EXPECT_EQ(fresh_status.error_message(), cached_status.error_message());
      if (!fresh_status.ok()) continue;
      if (round == 0) ++answered;
      EXPECT_FALSE(fresh.from_cache());
      EXPECT_EQ(maybe_cached.from_cache(), round > 0);
      maybe_cached.set_from_cache(false);
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(fresh, maybe_cached))
          << "fresh:  " << fresh.ShortDebugString()
          << "\ncached: " << maybe_cached.ShortDebugString();
    }
  }
  EXPECT_EQ(uncached.server().service().decision_cache().size(), 0u);
  EXPECT_GE(answered, requests.size() - 1);  // only the m = 0 request fails
  EXPECT_EQ(cached.server().service().decision_cache().size(), answered);
}

TEST(DecisionCacheTest, EquivalentSpellingsShareAnEntry) {
  TestServer server;
  pb::TilingRequest plain = StreamKRequest();
  pb::TilingResponse first;
  ASSERT_TRUE(Call(server, plain, &first).ok());

  pb::TilingRequest spelled = plain;
  spelled.set_id("other id");
  spelled.set_platform("ascend950pr");
  spelled.mutable_problem()->set_format_a(pb::FORMAT_ND);            // == UNSPECIFIED
  spelled.mutable_problem()->set_dtype_bias(pb::DATA_TYPE_FLOAT32);  // no bias: ignored
  spelled.mutable_platform_overrides()->set_aic_num(32);             // == profile
  pb::TilingResponse second;
  ASSERT_TRUE(Call(server, spelled, &second).ok());
  EXPECT_TRUE(second.from_cache());
  EXPECT_EQ(second.id(), "other id");
  EXPECT_EQ(server.server().service().decision_cache().size(), 1u);
}

TEST(DecisionCacheTest, ConcurrentCallersGetTheSameAnswers) {
  ServerOptions small_cache = LoopbackOptions();
  small_cache.service.cache_capacity = 8;  // smaller than the working set: constant eviction
  TestServer server(small_cache);
  const std::vector<pb::TilingRequest> requests = VariedRequests();
  std::vector<pb::TilingResponse> reference(requests.size());
  std::vector<grpc::StatusCode> reference_code(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    reference_code[i] = Call(server, requests[i], &reference[i]).error_code();
    reference[i].set_from_cache(false);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        const size_t i = (round * 5 + t) % requests.size();
        pb::TilingResponse response;
        grpc::Status status = Call(server, requests[i], &response);
        response.set_from_cache(false);
        if (status.error_code() != reference_code[i] ||
            (status.ok() &&
             !google::protobuf::util::MessageDifferencer::Equals(response, reference[i]))) {
          ++mismatches;
        }
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_LE(server.server().service().decision_cache().size(), 8u);
}

TEST(OverloadTest, CallsBeyondMaxInflightAreResourceExhausted) {
  ServerOptions options = LoopbackOptions();
  options.service.max_inflight = 1;
  TestServer server(options);

  // An open batch stream holds the only slot; reading one answer proves the
  // server has admitted it.
  grpc::ClientContext stream_context;
  auto stream = server.stub().GetTilingBatch(&stream_context);
  ASSERT_TRUE(stream->Write(StreamKRequest()));
  pb::TilingResponse first;
  ASSERT_TRUE(stream->Read(&first));
  EXPECT_EQ(server.server().service().inflight(), 1);

  pb::TilingResponse response;
  grpc::Status unary = Call(server, StreamKRequest(), &response);
  EXPECT_EQ(unary.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(unary.error_message(), HasSubstr("max_inflight"));
  grpc::ClientContext list_context;
  pb::ListPlatformsResponse platforms;
  EXPECT_EQ(server.stub()
                .ListPlatforms(&list_context, pb::ListPlatformsRequest(), &platforms)
                .error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  BatchResult second = RunBatch(server.stub(), {StreamKRequest()});
  EXPECT_EQ(second.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(second.responses.empty());
  EXPECT_GE(server.Metric("grpc_server_handled_total",
                          {{"grpc_method", "GetTiling"}, {"grpc_code", "ResourceExhausted"}}),
            1);

  // The held stream still works, and once it ends the slot is free again.
  ASSERT_TRUE(stream->Write(StreamKRequest()));
  ASSERT_TRUE(stream->Read(&first));
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_TRUE(stream->Finish().ok());
  WaitForNoAdmittedCalls(server);
  EXPECT_TRUE(Call(server, StreamKRequest(), &response).ok());
}

TEST(HealthTest, ServingForServerAndServiceNotFoundForOthers) {
  TestServer server;
  npu::client::TilingClient client(server.channel(), npu::client::ClientOptions());
  EXPECT_EQ(client.CheckHealth("").value(), npu::client::ServingStatus::kServing);
  EXPECT_EQ(client.CheckHealth("npu.tiling.v1.TilingService").value(),
            npu::client::ServingStatus::kServing);
  EXPECT_EQ(client.CheckHealth("no.such.Service").status().code(), absl::StatusCode::kNotFound);
  server.server().SetServing(false);
  EXPECT_EQ(client.CheckHealth("npu.tiling.v1.TilingService").value(),
            npu::client::ServingStatus::kNotServing);
}

TEST(ShutdownTest, DrainsInFlightStreamsAndRefusesNewCalls) {
  TestServer server;
  grpc::ClientContext stream_context;
  auto stream = server.stub().GetTilingBatch(&stream_context);
  ASSERT_TRUE(stream->Write(StreamKRequest()));
  pb::TilingResponse response;
  ASSERT_TRUE(stream->Read(&response));

  // A drain long enough that only the stream's own end can finish it.
  std::thread shutdown([&] { server.server().Shutdown(absl::Minutes(5)); });
  // Shutdown has begun once new calls stop being served, as shown by
  // the first refused call. The bound only guards against a hang.
  bool refused = false;
  for (int i = 0; i < 10000 && !refused; ++i) {
    pb::TilingResponse ignored;
    refused = !Call(server, ShapeRequest(64, 64, 64), &ignored).ok();
    if (!refused) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(refused);

  // The in-flight stream is still answered, then ends normally.
  ASSERT_TRUE(stream->Write(StreamKRequest()));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.tiling_key(), 4162u);
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_TRUE(stream->Finish().ok());
  shutdown.join();
}

TEST(ShutdownTest, DrainDeadlineCancelsStreamsThatDoNotEnd) {
  TestServer server;
  grpc::ClientContext stream_context;
  auto stream = server.stub().GetTilingBatch(&stream_context);
  ASSERT_TRUE(stream->Write(StreamKRequest()));
  pb::TilingResponse response;
  ASSERT_TRUE(stream->Read(&response));
  // Returns although the client never half-closes.
  server.server().Shutdown(absl::Milliseconds(50));
  while (stream->Read(&response)) {
  }
  EXPECT_FALSE(stream->Finish().ok());
}

// A fresh server has a zero series for every strategy of every operator,
// and for every buffer a plan warning can name.
TEST(MetricsTest, EveryStrategyOfEveryOperatorHasAZeroSeriesFromTheStart) {
  TestServer server;
  const tl::StrategyRegistry registry = tl::MakeBuiltinRegistry();
  size_t strategies = 0;
  std::set<std::string> names;
  for (tl::MatmulOp op : tl::kAllMatmulOps) {
    for (const std::string& name : registry.Names(op)) {
      EXPECT_EQ(server.Metric("npu_tiling_decisions_total", {{"strategy", name}}), 0) << name;
      ++strategies;
      names.insert(name);
    }
  }
  // GroupedMatmul's: GROUPED_NO_QUANT, GROUPED_QUANT_BASIC_API, GROUPED_QUANT,
  // GROUPED_WEIGHT_QUANT.
  EXPECT_EQ(strategies, 41u);
  // TransposeBatchMatMul's and TransposeQuantBatchMatMul's BASE share a
  // series; every name gets a striped count (ServiceMetrics holds 64).
  EXPECT_EQ(names.size(), 39u);
  for (const char* buffer : {"L0A", "L0B", "L0C", "BT", "L1"}) {
    EXPECT_EQ(server.Metric("npu_tiling_plan_warnings_total", {{"buffer", buffer}}), 0) << buffer;
  }
}

// An answer with a buffer warning counts it.
TEST(MetricsTest, PlanWarningsAreCounted) {
  TestServer server;
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_op(pb::OPERATOR_BATCH_MATMUL_V3);
  p->set_m(1);
  p->set_n(200);
  p->set_k(64);
  p->set_dtype_a(pb::DATA_TYPE_FLOAT32);
  p->set_dtype_b(pb::DATA_TYPE_FLOAT32);
  p->set_dtype_c(pb::DATA_TYPE_FLOAT32);
  p->set_trans_b(true);
  for (int64_t d : {5, 256, 8}) p->add_batch_a(d);
  for (int64_t d : {5, 1, 8}) p->add_batch_b(d);
  pb::TilingResponse response;
  ASSERT_TRUE(Call(server, request, &response).ok());
  ASSERT_EQ(response.warnings_size(), 1);
  EXPECT_EQ(response.warnings(0).buffer(), "L0B");
  request.set_view(pb::RESPONSE_VIEW_COMPACT);
  ASSERT_TRUE(Call(server, request, &response).ok());  // a cache hit, compact
  EXPECT_TRUE(response.from_cache());
  ASSERT_EQ(response.warnings_size(), 1);
  EXPECT_EQ(server.Metric("npu_tiling_plan_warnings_total", {{"buffer", "L0B"}}), 2);
  EXPECT_EQ(server.Metric("npu_tiling_plan_warnings_total", {{"buffer", "L0A"}}), 0);
}

TEST(MetricsTest, CallsMoveTheServiceMetrics) {
  TestServer server;
  pb::TilingResponse response;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Call(server, StreamKRequest(), &response).ok());
  pb::TilingRequest bad = StreamKRequest();
  bad.mutable_problem()->set_m(0);
  EXPECT_FALSE(Call(server, bad, &response).ok());
  WaitForNoAdmittedCalls(server);

  const std::map<std::string, std::string> get_tiling = {
      {"grpc_service", "npu.tiling.v1.TilingService"},
      {"grpc_method", "GetTiling"},
      {"grpc_type", "unary"}};
  EXPECT_EQ(server.Metric("grpc_server_started_total", get_tiling), 4);
  auto with_code = [&](const std::string& code) {
    auto labels = get_tiling;
    labels["grpc_code"] = code;
    return labels;
  };
  EXPECT_EQ(server.Metric("grpc_server_handled_total", with_code("OK")), 3);
  EXPECT_EQ(server.Metric("grpc_server_handled_total", with_code("InvalidArgument")), 1);
  EXPECT_EQ(server.Metric("grpc_server_handled_total", with_code("Internal")), 0);
  EXPECT_EQ(server.Metric("grpc_server_handling_seconds", get_tiling), 4);
  EXPECT_EQ(server.Metric("npu_tiling_decisions_total", {{"strategy", "BASIC_STREAM_K"}}), 3);
  EXPECT_EQ(server.Metric("npu_tiling_cache_misses_total"), 1);
  EXPECT_EQ(server.Metric("npu_tiling_cache_hits_total"), 2);
  EXPECT_EQ(server.Metric("npu_tiling_decision_seconds"), 1);
  EXPECT_EQ(server.Metric("npu_tiling_request_errors_total", {{"grpc_code", "InvalidArgument"}}),
            1);
  EXPECT_EQ(server.Metric("npu_inflight_requests"), 0);
}

}  // namespace
}  // namespace npu::server
