// Fuzz target: a GetTiling request's bytes through the service's pipeline,
// without the transport.
//
// TilingService::ParseRequest (the handler's parser), then
// TilingService::Answer: ValidateRequest, the engine's ValidateProblem,
// the chip (ResolveChip, or a built-in profile kept as shipped),
// StrategyRegistry::Decide (every strategy's IsCapable and the
// chosen DoTiling, then CheckPlanFits) and DecisionToProto. The decision
// cache is off, so every input reaches the engine. ADVISE mode is turned off:
// it runs emulations, which are fuzzed through the Execute target.
//
// Besides crashes and sanitizer reports, it aborts on:
//   * an INTERNAL status: an engine bug (a capable strategy failed, or its
//     plan overflowed a buffer) the input made visible;
//   * an error whose message does not start with the field it is about
//     ("problem: ...", "platform_overrides.aic_num: ...");
//   * an answer that is not deterministic (two runs differ) or lacks the
//     basics (a strategy name, a block dim, the tiling-data fields);
//   * TilingService::AnswerSerialized (what the handler sends; fresh
//     answers are encoded without a message) disagreeing with Answer(),
//     which builds the message (DecisionToProto(), the answer walk's other
//     sink): another status, or bytes that are not the serialized answer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/support/byte_buffer.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "prometheus/registry.h"
#include "server/metrics/service_metrics.h"
#include "server/service/tiling_service.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/registry.h"
#include "tests/fuzz/fuzz_checks.h"
#include "tests/testing/byte_buffers.h"

namespace {

namespace pb = ::npu::tiling::v1;

struct Service {
  npu::tiling::StrategyRegistry registry = npu::tiling::MakeBuiltinRegistry();
  prometheus::Registry prometheus;
  npu::server::ServiceMetrics metrics{prometheus};
  npu::server::TilingService service{registry, metrics, Options()};

  static npu::server::ServiceOptions Options() {
    npu::server::ServiceOptions options;
    options.cache_capacity = 0;
    return options;
  }
};

Service& TheService() {
  // Protobuf logs every string that is not UTF-8; the fuzzer makes many.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(
        [](google::protobuf::LogLevel, const char*, int, const std::string&) {});
    return true;
  }();
  static_cast<void>(quiet);
  static Service* service = new Service();
  return *service;
}

[[noreturn]] void Fail(const char* what, const pb::TilingRequest& request,
                       const absl::Status& status) {
  std::fprintf(stderr, "tiling_request_fuzzer: %s\nstatus: %s\nrequest: %s\n", what,
               status.ToString().c_str(), request.ShortDebugString().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Service& s = TheService();
  grpc::Slice slice(data, size);
  const grpc::ByteBuffer bytes(&slice, 1);
  pb::TilingRequest request;
  absl::Status status = npu::server::TilingService::ParseRequest(bytes, &request);
  if (!status.ok()) {
    if (!npu::fuzz::NamesAField(status.message()))
      Fail("parse error names no field", request, status);
    return 0;
  }
  if (request.mode() == pb::TILING_MODE_ADVISE) request.clear_mode();

  pb::TilingResponse first;
  status = s.service.Answer(request, &first);
  // The handler's own path: the answer in wire form.
  grpc::ByteBuffer wire;
  const absl::Status wire_status = s.service.AnswerSerialized(request, &wire);
  if (wire_status.code() != status.code()) {
    Fail("Answer and AnswerSerialized disagree on the status", request, wire_status);
  }
  if (status.code() == absl::StatusCode::kInternal) Fail("INTERNAL status", request, status);
  if (!status.ok()) {
    if (!npu::fuzz::NamesAField(status.message())) Fail("error names no field", request, status);
    return 0;
  }
  if (::npu::testing::FlattenByteBuffer(wire) != first.SerializeAsString()) {
    Fail("AnswerSerialized's bytes are not the serialized answer", request, status);
  }
  const bool compact = request.view() == pb::RESPONSE_VIEW_COMPACT;
  if (first.strategy().empty() || first.block_dim() == 0 || first.raw_words_size() == 0 ||
      (first.fields_size() == 0) != compact || first.id() != request.id()) {
    Fail("answer lacks strategy, block dim, words, fields (full view) or id", request, status);
  }
  pb::TilingResponse second;
  status = s.service.Answer(request, &second);
  if (!status.ok() || !google::protobuf::util::MessageDifferencer::Equals(first, second)) {
    Fail("a second run gave a different answer", request, status);
  }
  // The other view carries the same decision.
  pb::TilingRequest other_view = request;
  other_view.set_view(compact ? pb::RESPONSE_VIEW_FULL : pb::RESPONSE_VIEW_COMPACT);
  pb::TilingResponse other;
  status = s.service.Answer(other_view, &other);
  if (!status.ok() || other.tiling_key() != first.tiling_key() ||
      other.block_dim() != first.block_dim() ||
      other.workspace_bytes() != first.workspace_bytes() || other.strategy() != first.strategy() ||
      !std::equal(other.raw_words().begin(), other.raw_words().end(), first.raw_words().begin(),
                  first.raw_words().end())) {
    Fail("the two views gave different decisions", request, status);
  }
  return 0;
}
