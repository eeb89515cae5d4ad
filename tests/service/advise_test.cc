// Tests of GetTiling in ADVISE mode through a real server on 127.0.0.1:0
// (advise_reactor.cc, advise.h): the ranking on the wire, CANN_COMPATIBLE
// answers unchanged, the cache, the option checks and caps, the batch
// refusal, the shared emulation queue and the metrics.
#include "server/service/advise.h"

#include <grpcpp/client_context.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/decision_cache.h"
#include "server/service/tiling_service.h"
#include "server/service/validate.h"
#include "tests/service/test_server.h"

namespace npu::server {
namespace {

using ::npu::server::testing::BatchResult;
using ::npu::server::testing::LoopbackOptions;
using ::npu::server::testing::RunBatch;
using ::npu::server::testing::ShapeRequest;
using ::npu::server::testing::StreamKRequest;
using ::npu::server::testing::TestServer;
using ::npu::server::testing::WaitForIdle;
using ::npu::testing::WaitFor;
using ::testing::HasSubstr;
namespace pb = ::npu::tiling::v1;

// Advice takes seconds on a loaded machine: a generous deadline.
grpc::Status Call(TestServer& server, const pb::TilingRequest& request,
                  pb::TilingResponse* response) {
  return ::npu::server::testing::CallGetTiling(server, request, response,
                                               std::chrono::seconds(120));
}

// A problem where the advice differs from CANN (bench/ADVISE_SWEEP.md: the
// block search wins 3.1x) and that advises in a few milliseconds.
// The default shape leaves the cube variants something to gain: tinier ones
// are dominated by the task's fixed launch cost, where ADVISE offers none.
pb::TilingRequest AdviseRequest(int64_t m = 17, int64_t n = 1001, int64_t k = 255) {
  pb::TilingRequest request = ShapeRequest(m, n, k);
  request.set_id("advise");
  request.set_mode(pb::TILING_MODE_ADVISE);
  // Far above what these problems need, so no answer here is cut short by
  // a slow machine (the cap tests set their own server limits).
  request.mutable_advise()->set_max_advisory_ms(kMaxAdvisoryMs);
  return request;
}

ServerOptions GenerousOptions() {
  ServerOptions options = LoopbackOptions();
  options.service.advise.max_advisory_ms = kMaxAdvisoryMs;
  return options;
}

TEST(AdviseTest, CandidatesAreSortedAndCannsChoiceIsPresentAndMarked) {
  TestServer server(GenerousOptions());
  pb::TilingResponse response;
  // A cube-bound shape where the block search beats CANN's block score.
  ASSERT_TRUE(Call(server, AdviseRequest(1000, 3000, 512), &response).ok());
  ASSERT_TRUE(response.has_advice());
  const pb::Advice& advice = response.advice();
  ASSERT_GE(advice.candidates_size(), 2);
  EXPECT_FALSE(advice.budget_exhausted());
  EXPECT_EQ(advice.max_candidates(), 8u);
  EXPECT_TRUE(advice.verify_recommendation());

  int cann_choices = 0;
  for (int i = 0; i < advice.candidates_size(); ++i) {
    const pb::AdviceCandidate& c = advice.candidates(i);
    SCOPED_TRACE(c.name());
    if (i > 0) {
      EXPECT_LE(advice.candidates(i - 1).predicted_cycles(), c.predicted_cycles());
    }
    EXPECT_GT(c.predicted_cycles(), 0u);
    EXPECT_GT(c.predicted_time_us(), 0);
    EXPECT_FALSE(c.bound_resource().empty());
    EXPECT_FALSE(c.explanation().empty());
    EXPECT_NE(c.kind(), pb::VARIANT_KIND_UNSPECIFIED);
    EXPECT_NE(c.numerics(), pb::NUMERICS_STATUS_UNSPECIFIED);
    // The tiling is in GetTiling's form, without the per-response fields.
    EXPECT_FALSE(c.tiling().tiling_struct().empty());
    EXPECT_GT(c.tiling().block_dim(), 0u);
    EXPECT_FALSE(c.tiling().has_platform());
    EXPECT_EQ(c.tiling().trace_size(), 0);
    EXPECT_FALSE(c.tiling().has_advice());
    if (c.is_cann_choice()) {
      ++cann_choices;
      // CANN's choice is the decision of the enclosing response.
      EXPECT_EQ(c.kind(), pb::VARIANT_KIND_CANN_STRATEGY);
      EXPECT_EQ(c.name(), response.strategy());
      EXPECT_EQ(c.tiling().tiling_key(), response.tiling_key());
      EXPECT_EQ(c.tiling().raw_words().size(), response.raw_words().size());
      EXPECT_EQ(c.speedup_vs_cann(), 1.0);
    }
    EXPECT_DOUBLE_EQ(
        c.speedup_vs_cann(),
        static_cast<double>(
            std::find_if(advice.candidates().begin(), advice.candidates().end(),
                         [](const pb::AdviceCandidate& x) { return x.is_cann_choice(); })
                ->predicted_cycles()) /
            static_cast<double>(c.predicted_cycles()));
  }
  EXPECT_EQ(cann_choices, 1);
  // This problem is one where the advisor beats CANN, and its
  // recommendation passed the numerics check.
  EXPECT_FALSE(advice.candidates(0).is_cann_choice());
  EXPECT_GT(advice.candidates(0).speedup_vs_cann(), 1.0);
  EXPECT_EQ(advice.candidates(0).numerics(), pb::NUMERICS_STATUS_PASSED);
  ASSERT_TRUE(advice.has_verification());
  EXPECT_LE(advice.verification().worst_error_ratio(), 1.0);
  // Strategies that cannot apply say why.
  ASSERT_GT(advice.not_offered_size(), 0);
  for (const pb::NotOffered& n : advice.not_offered()) {
    EXPECT_FALSE(n.name().empty());
    EXPECT_FALSE(n.reason().empty());
  }
}

TEST(AdviseTest, DecisionFieldsAreCannCompatibleAnswer) {
  TestServer server(GenerousOptions());
  pb::TilingRequest request = AdviseRequest(255, 1001, 4097);
  request.set_include_trace(true);
  pb::TilingResponse advised;
  ASSERT_TRUE(Call(server, request, &advised).ok());
  pb::TilingRequest plain = request;
  plain.clear_mode();
  plain.clear_advise();
  pb::TilingResponse decided;
  ASSERT_TRUE(Call(server, plain, &decided).ok());
  EXPECT_FALSE(decided.has_advice());
  ASSERT_TRUE(advised.has_advice());
  advised.clear_advice();
  EXPECT_EQ(advised.SerializeAsString(), decided.SerializeAsString());
}

TEST(AdviseTest, CompactViewTrimsTheDecisionAndKeepsTheAdvice) {
  TestServer server(GenerousOptions());
  pb::TilingRequest request = AdviseRequest();
  pb::TilingResponse full, compact;
  ASSERT_TRUE(Call(server, request, &full).ok());
  request.set_view(pb::RESPONSE_VIEW_COMPACT);
  ASSERT_TRUE(Call(server, request, &compact).ok());
  EXPECT_TRUE(full.has_key());
  EXPECT_FALSE(compact.has_key() || compact.has_platform() || compact.has_block());
  EXPECT_EQ(compact.fields_size(), 0);
  EXPECT_EQ(compact.tiling_key(), full.tiling_key());
  EXPECT_EQ(compact.block_dim(), full.block_dim());
  ASSERT_TRUE(compact.has_advice());
  ASSERT_EQ(compact.advice().candidates_size(), full.advice().candidates_size());
  // The candidates are tilings to hand to Execute: they stay full.
  EXPECT_GT(compact.advice().candidates(0).tiling().fields_size(), 0);
}

TEST(AdviseTest, CannCompatibleIsByteForByteTheAnswerWithoutMode) {
  TestServer server;
  for (pb::TilingRequest request :
       {StreamKRequest(), ShapeRequest(4097, 777, 1999), ShapeRequest(1, 4096, 4096)}) {
    request.set_include_trace(true);
    pb::TilingRequest explicit_mode = request;
    explicit_mode.set_mode(pb::TILING_MODE_CANN_COMPATIBLE);
    // Twice each: a fresh and a cached answer.
    for (int round = 0; round < 2; ++round) {
      pb::TilingResponse without, with;
      ASSERT_TRUE(Call(server, request, &without).ok());
      ASSERT_TRUE(Call(server, explicit_mode, &with).ok());
      EXPECT_FALSE(without.has_advice());
      with.set_from_cache(without.from_cache());
      EXPECT_EQ(with.SerializeAsString(), without.SerializeAsString());
    }
  }
  // A CANN_COMPATIBLE answer after an ADVISE one of the same problem does
  // not come from the advice's cache entry.
  pb::TilingResponse advised, decided;
  ASSERT_TRUE(Call(server, AdviseRequest(), &advised).ok());
  pb::TilingRequest plain = ShapeRequest(17, 1001, 255);
  ASSERT_TRUE(Call(server, plain, &decided).ok());
  EXPECT_FALSE(decided.has_advice());
}

TEST(AdviseTest, AnswersAreIdenticalWithAndWithoutCache) {
  TestServer cached(GenerousOptions());
  ServerOptions uncached_options = GenerousOptions();
  uncached_options.service.cache_capacity = 0;
  TestServer uncached(uncached_options);
  for (pb::TilingRequest request :
       {AdviseRequest(), AdviseRequest(1, 1000, 64), AdviseRequest(300, 200, 100)}) {
    pb::TilingResponse reference;
    ASSERT_TRUE(Call(uncached, request, &reference).ok());
    ASSERT_FALSE(reference.advice().budget_exhausted());
    EXPECT_FALSE(reference.from_cache());
    for (int round = 0; round < 2; ++round) {
      pb::TilingResponse response;
      ASSERT_TRUE(Call(cached, request, &response).ok());
      EXPECT_EQ(response.from_cache(), round == 1);
      response.set_from_cache(false);
      EXPECT_EQ(response.SerializeAsString(), reference.SerializeAsString())
          << request.problem().ShortDebugString() << " round " << round;
    }
  }
  // Different options are different entries.
  pb::TilingRequest fewer = AdviseRequest();
  fewer.mutable_advise()->set_max_candidates(1);
  pb::TilingResponse response;
  ASSERT_TRUE(Call(cached, fewer, &response).ok());
  EXPECT_FALSE(response.from_cache());
  EXPECT_EQ(response.advice().candidates_size(), 1);
  // Verification off: nothing is checked, and the report is absent.
  pb::TilingRequest unverified = AdviseRequest();
  unverified.mutable_advise()->set_verify_recommendation(false);
  ASSERT_TRUE(Call(cached, unverified, &response).ok());
  EXPECT_FALSE(response.from_cache());
  EXPECT_FALSE(response.advice().has_verification());
  EXPECT_FALSE(response.advice().verify_recommendation());
  for (const pb::AdviceCandidate& c : response.advice().candidates()) {
    EXPECT_EQ(c.numerics(), pb::NUMERICS_STATUS_NOT_CHECKED);
  }
}

struct InvalidCase {
  const char* name;
  std::function<void(pb::TilingRequest*)> mutate;
  const char* field;
};

class AdviseInvalidTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(AdviseInvalidTest, IsInvalidArgumentNamingTheField) {
  TestServer server;
  pb::TilingRequest request = AdviseRequest();
  GetParam().mutate(&request);
  pb::TilingResponse response;
  const grpc::Status status = Call(server, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), ::testing::StartsWith(GetParam().field));
}

INSTANTIATE_TEST_SUITE_P(
    Options, AdviseInvalidTest,
    ::testing::Values(
        InvalidCase{"TooManyCandidates",
                    [](pb::TilingRequest* r) {
                      r->mutable_advise()->set_max_candidates(kMaxAdviseCandidates + 1);
                    },
                    "advise.max_candidates:"},
        InvalidCase{"BudgetAboveWireLimit",
                    [](pb::TilingRequest* r) {
                      r->mutable_advise()->set_max_advisory_ms(kMaxAdvisoryMs + 1);
                    },
                    "advise.max_advisory_ms:"},
        InvalidCase{"OptionsWithoutAdviseMode",
                    [](pb::TilingRequest* r) { r->set_mode(pb::TILING_MODE_CANN_COMPATIBLE); },
                    "advise:"},
        InvalidCase{"OptionsWithUnspecifiedMode", [](pb::TilingRequest* r) { r->clear_mode(); },
                    "advise:"},
        InvalidCase{"UnknownMode",
                    [](pb::TilingRequest* r) {
                      r->clear_advise();
                      r->set_mode(static_cast<pb::TilingMode>(7));
                    },
                    "mode:"},
        InvalidCase{"ForcedStrategy",
                    [](pb::TilingRequest* r) { r->set_forced_strategy("BASIC_ASWT"); },
                    "forced_strategy:"},
        InvalidCase{"BadProblem", [](pb::TilingRequest* r) { r->mutable_problem()->set_m(0); },
                    "problem:"}),
    [](const ::testing::TestParamInfo<InvalidCase>& info) { return info.param.name; });

TEST(AdviseTest, ServerCapsLowerTheRequestedOptions) {
  ServerOptions options = LoopbackOptions();
  options.service.advise.max_candidates = 2;
  options.service.advise.default_candidates = 2;
  options.service.advise.max_advisory_ms = 60000;
  TestServer server(options);
  // Four candidates without the cap.
  pb::TilingRequest request = AdviseRequest(1000, 1000, 1000);
  request.mutable_advise()->set_max_candidates(kMaxAdviseCandidates);
  request.mutable_advise()->set_max_advisory_ms(kMaxAdvisoryMs);
  pb::TilingResponse response;
  ASSERT_TRUE(Call(server, request, &response).ok());
  EXPECT_EQ(response.advice().max_candidates(), 2u);
  EXPECT_EQ(response.advice().max_advisory_ms(), 60000u);
  EXPECT_EQ(response.advice().candidates_size(), 2);
  // Zero takes the server's values.
  request.clear_advise();
  ASSERT_TRUE(Call(server, request, &response).ok());
  EXPECT_EQ(response.advice().max_candidates(), 2u);
  EXPECT_EQ(response.advice().max_advisory_ms(), 60000u);
  // The ranked-out candidates are reported as not offered.
  bool ranked_out = false;
  for (const pb::NotOffered& n : response.advice().not_offered()) {
    ranked_out = ranked_out || absl::StrContains(n.reason(), "beyond max_candidates=2");
  }
  EXPECT_TRUE(ranked_out);
}

TEST(AdviseOptionsTest, DefaultsAndCaps) {
  AdviseLimits limits;
  limits.default_candidates = 8;
  limits.max_candidates = 16;
  limits.max_advisory_ms = 2000;
  pb::AdviseOptions wire;
  npu::advisor::AdviseOptions options = AdviseOptionsFor(wire, limits);
  EXPECT_EQ(options.max_candidates, 8u);
  EXPECT_EQ(options.max_advisory_ms, 2000);
  EXPECT_TRUE(options.verify_recommendation);
  wire.set_max_candidates(40);
  wire.set_max_advisory_ms(50);
  wire.set_verify_recommendation(false);
  options = AdviseOptionsFor(wire, limits);
  EXPECT_EQ(options.max_candidates, 16u);
  EXPECT_EQ(options.max_advisory_ms, 50);
  EXPECT_FALSE(options.verify_recommendation);
  wire.set_max_advisory_ms(1000000);
  EXPECT_EQ(AdviseOptionsFor(wire, limits).max_advisory_ms, 2000);
}

TEST(AdviseOptionsTest, CacheKeySeparatesModesAndOptions) {
  const npu::tiling::ChipSpec chip = npu::tiling::BuiltinPlatforms().front();
  npu::tiling::MatmulProblem problem;
  problem.m = 64;
  problem.n = 64;
  problem.k = 64;
  npu::advisor::AdviseOptions a;
  npu::advisor::AdviseOptions b = a;
  b.max_candidates = a.max_candidates + 1;
  npu::advisor::AdviseOptions c = a;
  c.verify_recommendation = !a.verify_recommendation;
  npu::advisor::AdviseOptions d = a;
  d.max_advisory_ms = a.max_advisory_ms + 1;
  const std::string key = AdviseCacheKey(problem, chip, a);
  EXPECT_EQ(key, AdviseCacheKey(problem, chip, a));
  EXPECT_NE(key, DecisionCacheKey(problem, chip, ""));
  EXPECT_NE(key, AdviseCacheKey(problem, chip, b));
  EXPECT_NE(key, AdviseCacheKey(problem, chip, c));
  EXPECT_NE(key, AdviseCacheKey(problem, chip, d));
  // The key is the decision's key, then the mode and options as a request.
  const std::string decision = DecisionCacheKey(problem, chip, "");
  ASSERT_EQ(key.substr(0, decision.size()), decision);
  pb::TilingRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(key.substr(decision.size())));
  EXPECT_EQ(parsed.mode(), pb::TILING_MODE_ADVISE);
  EXPECT_EQ(parsed.advise().max_candidates(), a.max_candidates);
}

TEST(AdviseTest, BatchItemsInAdviseModeAreInvalidAndTheStreamGoesOn) {
  TestServer server;
  pb::TilingRequest first = ShapeRequest(128, 128, 128);
  first.set_id("a");
  pb::TilingRequest advise = AdviseRequest();
  advise.set_id("b");
  pb::TilingRequest last = ShapeRequest(256, 128, 128);
  last.set_id("c");
  const BatchResult result = RunBatch(server.stub(), {first, advise, last});
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(result.responses.size(), 3u);
  EXPECT_FALSE(result.responses[0].has_status());
  EXPECT_EQ(result.responses[1].id(), "b");
  EXPECT_EQ(result.responses[1].status().code_name(), "INVALID_ARGUMENT");
  EXPECT_THAT(result.responses[1].status().message(), ::testing::StartsWith("mode:"));
  EXPECT_FALSE(result.responses[1].has_advice());
  EXPECT_FALSE(result.responses[2].has_status());
}

// Holds the server's only emulation worker with an Execute run far longer
// than a test (4096^3 with numerics on one thread), until Stop().
class BusyWorker {
 public:
  explicit BusyWorker(TestServer& server) : server_(server) {
    *run_.mutable_problem() = ShapeRequest(4096, 4096, 4096).problem();
    run_.set_threads(1);
    server_.stub().async()->Execute(&context_, &run_, &response_,
                                    [this](grpc::Status) { done_.Notify(); });
  }
  ~BusyWorker() { Stop(); }

  // Whether the run reached the worker.
  bool Started() {
    const TilingService& service = server_.server().service();
    return WaitFor([&] { return service.execute_queue().running() == 1; });
  }

  void Stop() {
    context_.TryCancel();
    done_.WaitForNotification();
  }

 private:
  TestServer& server_;
  pb::ExecuteRequest run_;
  grpc::ClientContext context_;
  pb::ExecuteResponse response_;
  absl::Notification done_;
};

TEST(AdviseTest, FullEmulationQueueIsResourceExhausted) {
  ServerOptions options = GenerousOptions();
  options.service.execute.workers = 1;
  options.service.execute.max_queued = 0;
  options.service.execute.max_numeric_macs = uint64_t{1} << 37;
  TestServer server(options);
  BusyWorker busy(server);
  ASSERT_TRUE(busy.Started());

  pb::TilingResponse response;
  const grpc::Status refused = Call(server, AdviseRequest(), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("emulation queue full"));
  // CANN_COMPATIBLE answers never wait for the workers.
  ASSERT_TRUE(Call(server, ShapeRequest(64, 64, 64), &response).ok());

  busy.Stop();
  WaitForIdle(server);
  EXPECT_EQ(server.Metric("npu_advise_total", {{"result", "ResourceExhausted"}}), 1);
}

TEST(AdviseTest, DeadlineStopsTheAdviceWhileItWaits) {
  ServerOptions options = GenerousOptions();
  options.service.execute.workers = 1;
  options.service.execute.max_queued = 4;
  options.service.execute.max_numeric_macs = uint64_t{1} << 37;
  TestServer server(options);
  BusyWorker busy(server);
  ASSERT_TRUE(busy.Started());
  const TilingService& service = server.server().service();

  // The advice waits behind the run until its deadline passes.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  pb::TilingResponse response;
  const grpc::Status status = server.stub().GetTiling(&context, AdviseRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  ASSERT_TRUE(WaitFor([&] { return service.execute_queue().queued() == 0; }));

  busy.Stop();
  WaitForIdle(server);
}

TEST(AdviseTest, EmulationWorkLimitIsResourceExhausted) {
  ServerOptions options = GenerousOptions();
  options.service.execute.max_simulated_ops = 100;
  TestServer server(options);
  pb::TilingResponse response;
  const grpc::Status status = Call(server, AdviseRequest(4096, 4096, 4096), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
}

TEST(AdviseTest, CallsMoveTheAdviseMetrics) {
  TestServer server(GenerousOptions());
  pb::TilingResponse response;
  ASSERT_TRUE(Call(server, AdviseRequest(), &response).ok());
  ASSERT_TRUE(Call(server, AdviseRequest(), &response).ok());  // cached
  pb::TilingRequest bad = AdviseRequest();
  bad.mutable_advise()->set_max_candidates(kMaxAdviseCandidates + 1);
  EXPECT_FALSE(Call(server, bad, &response).ok());
  WaitForIdle(server);
  EXPECT_EQ(server.Metric("npu_advise_total", {{"result", "OK"}}), 2);
  EXPECT_EQ(server.Metric("npu_advise_total", {{"result", "InvalidArgument"}}), 1);
  EXPECT_EQ(server.Metric("npu_advise_total", {{"result", "BudgetExhausted"}}), 0);
  // One advisor run: the second answer came from the cache.
  EXPECT_EQ(server.Metric("npu_advise_seconds"), 1);
  EXPECT_EQ(server.Metric("grpc_server_handled_total",
                          {{"grpc_method", "GetTiling"}, {"grpc_code", "OK"}}),
            2);
  EXPECT_EQ(server.Metric("npu_inflight_requests"), 0);
}

// CANN's plan that overflows a buffer cannot be timed as the baseline: ADVISE
// names the hazard, and CANN_COMPATIBLE still answers the plan with its
// warning.
TEST(AdviseTest, CannPlanThatOverflowsABufferIsAHazard) {
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
  EXPECT_EQ(response.warnings_size(), 1);
  request.set_mode(pb::TILING_MODE_ADVISE);
  const grpc::Status status = Call(server, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(),
              HasSubstr("hazard: CANN's ITER_BATCH_BROADCAST_BASICAPI plan does not fit"));
}

}  // namespace
}  // namespace npu::server
