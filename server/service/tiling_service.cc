#include "server/service/tiling_service.h"

#include <cassert>
#include <chrono>
#include <deque>
#include <limits>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/service/convert.h"
#include "server/service/logging.h"
#include "server/service/request_wire.h"
#include "server/service/status_mapping.h"
#include "server/service/validate.h"
#include "server/service/wire_answer.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/validate.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using Clock = std::chrono::steady_clock;

void LogOutcome(absl::string_view method, const pb::TilingRequest& request,
                const absl::Status& status) {
  if (status.code() == absl::StatusCode::kInternal) {
    // An engine or service bug: always worth a line.
    Log(LogLevel::kError, absl::StrCat(method, " client=\"", request.client_id(), "\" id=\"",
                                       request.id(), "\" ", status.ToString()));
  } else if (LogEnabled(LogLevel::kDebug)) {
    Log(LogLevel::kDebug, absl::StrCat(method, " client=\"", request.client_id(), "\" id=\"",
                                       request.id(), "\" ", status.ToString()));
  }
}

// Serializes `response` into `bytes`, straight into one slice: this costs
// less than gRPC's generic path through a zero-copy output stream. Fails
// (kInternal) only for a message above 2 GiB, which a tiling response
// cannot reach.
absl::Status SerializeResponse(const pb::TilingResponse& response, grpc::ByteBuffer* bytes) {
  const size_t size = response.ByteSizeLong();
  if (size > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InternalError(absl::StrCat("response: ", size, " bytes"));
  }
  grpc::Slice slice(size);
  uint8_t* end = response.SerializeWithCachedSizesToArray(const_cast<uint8_t*>(slice.begin()));
  if (end != slice.end()) {
    return absl::InternalError("response: the serialized size changed while serializing");
  }
  grpc::ByteBuffer buffer(&slice, 1);
  bytes->Swap(&buffer);
  return absl::OkStatus();
}

// Requests up to this size are parsed into RequestFor()'s per-thread message.
constexpr size_t kReusedRequestBytes = 4096;

// The message to parse `bytes` into. A request is a few dozen bytes; parsing
// it into a message that keeps its string buffers from the thread's previous
// call costs about half as much as building a new one, under load
// (bench/RESULTS.md). The message lives until the next call on the same
// thread, i.e. past the handler, and a thread keeps at most
// kReusedRequestBytes of strings; a larger request gets a message of its own
// in `owned`.
pb::TilingRequest* RequestFor(const grpc::ByteBuffer& bytes,
                              std::unique_ptr<pb::TilingRequest>& owned) {
  if (bytes.Length() > kReusedRequestBytes) {
    owned = std::make_unique<pb::TilingRequest>();
    return owned.get();
  }
  thread_local pb::TilingRequest reused;
  return &reused;
}

// What the answer to `request` shows of its decision.
AnswerForm FormOf(const pb::TilingRequest& request, bool from_cache) {
  AnswerForm form;
  form.view = request.view();
  form.include_trace = request.include_trace();
  form.id = request.id();
  form.from_cache = from_cache;
  return form;
}

}  // namespace

absl::Status TilingService::ParseRequest(const grpc::ByteBuffer& bytes,
                                         pb::TilingRequest* request) {
  // A request is a few dozen bytes, nearly always in one slice: decode it in
  // place, with the decoder of the common shape when it can (request_wire.h).
  // Otherwise Deserialize() reads the slices through a stream (it consumes
  // its buffer; the copy shares the slices).
  bool parsed = false;
  grpc::Slice slice;
  if (bytes.TrySingleSlice(&slice).ok()) {
    const std::string_view view(reinterpret_cast<const char*>(slice.begin()), slice.size());
    parsed = DecodeCommonRequest(view, request) ||
             request->ParseFromArray(slice.begin(), static_cast<int>(slice.size()));
  } else {
    grpc::ByteBuffer copy(bytes);
    parsed = grpc::SerializationTraits<pb::TilingRequest>::Deserialize(&copy, request).ok();
  }
  if (!parsed) {
    // A failed parse leaves whatever it read so far, e.g. an id that is not
    // UTF-8, which must not be echoed into a response the client then cannot
    // parse.
    request->Clear();
    return absl::InvalidArgumentError(
        "request: not a valid npu.tiling.v1.TilingRequest (malformed protobuf wire format, or a "
        "string field that is not UTF-8)");
  }
  return absl::OkStatus();
}

TilingService::TilingService(const tl::StrategyRegistry& registry, ServiceMetrics& metrics,
                             ServiceOptions options)
    : registry_(registry),
      metrics_(metrics),
      options_(options),
      decisions_(options.cache_capacity),
      advice_(options.cache_capacity) {
  metrics_.AddStrategies(registry_.Names());
}

bool TilingService::TryAdmit() {
  if (draining_.load(std::memory_order_relaxed)) return false;
  if (inflight_.fetch_add(1) + 1 > options_.max_inflight) {
    inflight_.fetch_sub(1);
    return false;
  }
  return true;
}

void TilingService::Release() { inflight_.fetch_sub(1); }

absl::Status TilingService::OverloadError() const {
  if (draining_.load(std::memory_order_relaxed)) {
    return absl::UnavailableError("server shutting down; retry on another replica");
  }
  return absl::ResourceExhaustedError(absl::StrCat("server overloaded: ", options_.max_inflight,
                                                   " RPCs in flight (--max_inflight); retry "
                                                   "later or on another replica"));
}

absl::Status TilingService::Decide(const pb::TilingRequest& request, Decided* decided) {
  RETURN_IF_ERROR(ValidateRequest(request));
  const tl::MatmulProblem problem = ProblemFromProto(request.problem());
  // Checked here rather than inside the engine's Decide() (told below not to
  // check again), so that the message says which part of the request was
  // wrong.
  RETURN_IF_ERROR(Prefixed("problem", tl::ValidateProblem(problem)));
  ASSIGN_OR_RETURN(decided->chip, ResolveChip(request));

  std::string key;
  if (decisions_.enabled()) {
    key = DecisionCacheKey(problem, decided->chip, request.forced_strategy());
    decided->cached = decisions_.Lookup(key);
    if (decided->cached != nullptr) {
      metrics_.CacheHit();
      decided->from_cache = true;
      return absl::OkStatus();
    }
    metrics_.CacheMiss();
  }

  const Clock::time_point start = Clock::now();
  tl::DecideOptions options;
  options.forced_strategy = request.forced_strategy();
  // Checked above: the problem here, the chip by ResolveChip() (a built-in
  // profile is valid as shipped, convert_test checks each).
  options.inputs_validated = true;
  // Texts only for the answer's readers: the trace when asked for, the
  // plan's detail in the full view. A cached decision may be asked for in
  // full later.
  options.explain = request.include_trace() || decisions_.enabled();
  options.describe = request.view() != pb::RESPONSE_VIEW_COMPACT || decisions_.enabled();
  absl::StatusOr<tl::TilingDecision> decision = registry_.Decide(problem, decided->chip, options);
  metrics_.DecisionTimed(SecondsSince(start));
  if (!decision.ok()) {
    return DecisionError(decision.status(), !request.forced_strategy().empty());
  }
  if (decisions_.enabled()) {
    decided->cached = std::make_shared<const tl::TilingDecision>(*std::move(decision));
    decisions_.Insert(key, decided->cached);
  } else {
    decided->fresh = *std::move(decision);
  }
  return absl::OkStatus();
}

absl::Status TilingService::Answer(const pb::TilingRequest& request, pb::TilingResponse* response) {
  if (request.mode() == pb::TILING_MODE_ADVISE) {
    AdviseWork work;
    bool answered = false;
    RETURN_IF_ERROR(PrepareAdvise(request, &work, response, &answered));
    if (answered) return absl::OkStatus();
    return RunAdvise(request, work, /*cancelled=*/nullptr, response);
  }
  response->Clear();
  std::string bytes;
  size_t size = 0;
  RETURN_IF_ERROR(DecideAndEncode(request, &bytes, &size));
  if (!response->ParseFromArray(bytes.data(), static_cast<int>(size))) {
    return absl::InternalError("response: the encoded answer does not parse");
  }
  return absl::OkStatus();
}

absl::Status TilingService::DecideAndEncode(const pb::TilingRequest& request, std::string* buffer,
                                            size_t* size) {
  Decided decided;
  RETURN_IF_ERROR(Decide(request, &decided));
  metrics_.DecisionServed(decided.decision().plan.strategy);
  *size =
      EncodeAnswer(decided.decision(), decided.chip, FormOf(request, decided.from_cache), buffer);
  return absl::OkStatus();
}

absl::Status TilingService::AnswerSerialized(const pb::TilingRequest& request,
                                             grpc::ByteBuffer* bytes) {
  if (request.mode() == pb::TILING_MODE_ADVISE) {
    // An advice is far larger and rare: a message of its own.
    pb::TilingResponse response;
    RETURN_IF_ERROR(Answer(request, &response));
    return SerializeResponse(response, bytes);
  }
  // Encoded in a buffer kept per thread (it grows to the largest answer the
  // thread wrote), then copied into the call's slice.
  thread_local std::string buffer;
  size_t size = 0;
  RETURN_IF_ERROR(DecideAndEncode(request, &buffer, &size));
  grpc::Slice slice(buffer.data(), size);
  grpc::ByteBuffer answer(&slice, 1);
  bytes->Swap(&answer);
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* TilingService::GetTiling(grpc::CallbackServerContext* context,
                                                   const grpc::ByteBuffer* request_bytes,
                                                   grpc::ByteBuffer* response_bytes) {
  const Clock::time_point start = Clock::now();
  metrics_.RpcStarted(RpcMethod::kGetTiling);
  metrics_.MessageReceived(RpcMethod::kGetTiling);
  std::unique_ptr<pb::TilingRequest> owned;
  pb::TilingRequest* request = RequestFor(*request_bytes, owned);
  absl::Status status;
  if (TryAdmit()) {
    status = ParseRequest(*request_bytes, request);
    if (status.ok() && request->mode() == pb::TILING_MODE_ADVISE) {
      // Seconds of emulation: handed to a worker, which finishes the call.
      return StartAdvise(context, *request, response_bytes, start);
    }
    if (status.ok()) status = AnswerSerialized(*request, response_bytes);
    Release();
  } else {
    request->Clear();  // not parsed: log no earlier call's id
    status = OverloadError();
  }
  if (status.ok()) {
    metrics_.MessageSent(RpcMethod::kGetTiling);
  } else {
    metrics_.RequestFailed(status.code());
  }
  LogOutcome("GetTiling", *request, status);
  metrics_.RpcHandled(RpcMethod::kGetTiling, status.code(), SecondsSince(start));
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* TilingService::ListPlatforms(grpc::CallbackServerContext* context,
                                                       const pb::ListPlatformsRequest* /*request*/,
                                                       pb::ListPlatformsResponse* response) {
  const Clock::time_point start = Clock::now();
  metrics_.RpcStarted(RpcMethod::kListPlatforms);
  metrics_.MessageReceived(RpcMethod::kListPlatforms);
  absl::Status status;
  if (TryAdmit()) {
    for (const tl::ChipSpec& chip : tl::BuiltinPlatforms()) {
      *response->add_platforms() = ChipToProto(chip);
    }
    response->set_default_platform(std::string(tl::kDefaultPlatform));
    Release();
    metrics_.MessageSent(RpcMethod::kListPlatforms);
  } else {
    status = OverloadError();
  }
  metrics_.RpcHandled(RpcMethod::kListPlatforms, status.code(), SecondsSince(start));
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// One GetTilingBatch stream. Requests are answered in arrival order, each as
// soon as it is read; answers queue up behind the single outstanding write.
// Reading pauses while kMaxQueued answers wait, so a client that sends fast
// but reads slowly cannot grow the server's memory without bound (HTTP/2
// flow control then pushes back on the sender).
//
// Every state has either an operation outstanding or Finish() called, which
// is what guarantees OnDone() and the `delete this` in it: after a
// cancellation the outstanding read or write completes with ok == false and
// the stream finishes from there.
class TilingService::BatchReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  BatchReactor(TilingService* service, grpc::CallbackServerContext* context)
      : service_(service), context_(context), start_(Clock::now()) {
    service_->metrics_.RpcStarted(RpcMethod::kGetTilingBatch);
    admitted_ = service_->TryAdmit();
    if (!admitted_) {
      final_status_ = service_->OverloadError();
      finish_called_ = true;
      Finish(ToGrpcStatus(final_status_));
      return;
    }
    StartRead(&request_bytes_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The client half-closed (or the call broke): answer what is queued,
      // then finish.
      CloseReads(absl::OkStatus());
      return;
    }
    service_->metrics_.MessageReceived(RpcMethod::kGetTilingBatch);
    if (++received_ > service_->options_.max_batch) {
      CloseReads(absl::ResourceExhaustedError(
          absl::StrCat("GetTilingBatch accepts at most ", service_->options_.max_batch,
                       " requests per stream (--max_batch); the first ",
                       service_->options_.max_batch, " were answered")));
      return;
    }

    grpc::ByteBuffer answer = AnswerItem();

    const grpc::ByteBuffer* to_write = nullptr;
    bool read_more = false;
    bool finish = false;
    {
      absl::MutexLock lock(&mutex_);
      if (broken_) {
        // The client stopped reading; drop the answer and stop.
        reads_done_ = true;
        finish = ReadyToFinishLocked();
      } else {
        queue_.push_back(std::move(answer));
        if (!writing_) {
          writing_ = true;
          to_write = &queue_.front();
        }
        read_more = queue_.size() < kMaxQueued;
        read_paused_ = !read_more;
      }
    }
    if (to_write != nullptr) StartWrite(to_write);
    if (read_more) StartRead(&request_bytes_);
    if (finish) DoFinish();
  }

  void OnWriteDone(bool ok) override {
    const grpc::ByteBuffer* next = nullptr;
    bool resume_read = false;
    bool finish = false;
    {
      absl::MutexLock lock(&mutex_);
      // std::deque keeps the addresses of the other elements stable across
      // push_back and pop_front, so `next` stays valid while it is written.
      queue_.pop_front();
      if (!ok) {
        broken_ = true;
        queue_.clear();
        writing_ = false;
        if (final_status_.ok()) final_status_ = absl::CancelledError("client stopped reading");
        if (read_paused_) {
          // No read is outstanding, so none will report the end.
          read_paused_ = false;
          reads_done_ = true;
        }
      } else {
        service_->metrics_.MessageSent(RpcMethod::kGetTilingBatch);
        if (!queue_.empty()) {
          next = &queue_.front();
        } else {
          writing_ = false;
        }
        if (read_paused_ && queue_.size() < kMaxQueued) {
          read_paused_ = false;
          resume_read = true;
        }
      }
      finish = ReadyToFinishLocked();
    }
    if (next != nullptr) StartWrite(next);
    if (resume_read) StartRead(&request_bytes_);
    if (finish) DoFinish();
  }

  void OnDone() override {
    // A cancelled call (client gone, deadline, server shutdown) reports
    // CANCELLED whatever status we meant to send.
    absl::StatusCode code;
    {
      absl::MutexLock lock(&mutex_);
      code = context_->IsCancelled() ? absl::StatusCode::kCancelled : final_status_.code();
    }
    if (admitted_) service_->Release();
    service_->metrics_.RpcHandled(RpcMethod::kGetTilingBatch, code, SecondsSince(start_));
    delete this;
  }

  void OnCancel() override {
    // Nothing to do: the outstanding read or write completes with ok == false
    // and the normal paths finish the stream.
  }

 private:
  // Answers waiting behind the outstanding write before reading pauses. 64
  // answers of ~1 KiB keep a stream's footprint small while leaving enough
  // slack that the writer rarely starves.
  static constexpr size_t kMaxQueued = 64;

  // The serialized answer to the request in `request_bytes_`: the decision,
  // or, for a request that does not parse or fails, only its id (empty when
  // unparseable) and its status. One bad item must not end the stream.
  grpc::ByteBuffer AnswerItem() {
    std::unique_ptr<pb::TilingRequest> owned;
    pb::TilingRequest* request = RequestFor(request_bytes_, owned);
    absl::Status status = ParseRequest(request_bytes_, request);
    if (status.ok() && request->mode() == pb::TILING_MODE_ADVISE) {
      // Batch items are answered on the RPC thread, in order; one advice
      // would hold the stream (and a callback thread) for seconds.
      status = absl::InvalidArgumentError(
          "mode: TILING_MODE_ADVISE is not served on GetTilingBatch (each advice runs tens of "
          "emulations); call GetTiling for it");
    }
    grpc::ByteBuffer bytes;
    if (status.ok()) status = service_->AnswerSerialized(*request, &bytes);
    if (status.ok()) return bytes;
    service_->metrics_.RequestFailed(status.code());
    LogOutcome("GetTilingBatch", *request, status);
    pb::TilingResponse response;
    response.set_id(request->id());
    pb::ItemStatus* item = response.mutable_status();
    item->set_code(static_cast<int32_t>(status.code()));
    item->set_code_name(std::string(CodeName(status.code())));
    item->set_message(std::string(status.message()));
    const absl::Status serialized = SerializeResponse(response, &bytes);
    assert(serialized.ok() && "a tiling response is far below protobuf's 2 GiB limit");
    static_cast<void>(serialized);
    return bytes;
  }

  // No more requests will be read; finishes with `status` once the queue has
  // drained (the first non-OK status wins).
  void CloseReads(const absl::Status& status) {
    bool finish = false;
    {
      absl::MutexLock lock(&mutex_);
      reads_done_ = true;
      if (final_status_.ok()) final_status_ = status;
      finish = ReadyToFinishLocked();
    }
    if (finish) DoFinish();
  }

  bool ReadyToFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (finish_called_ || !reads_done_ || writing_ || !queue_.empty()) return false;
    finish_called_ = true;
    return true;
  }

  void DoFinish() {
    absl::Status status;
    {
      absl::MutexLock lock(&mutex_);
      status = final_status_;
    }
    Finish(ToGrpcStatus(status));
  }

  TilingService* const service_;
  grpc::CallbackServerContext* const context_;
  const Clock::time_point start_;
  bool admitted_ = false;
  // Only touched by OnReadDone, of which at most one runs at a time.
  grpc::ByteBuffer request_bytes_;
  int64_t received_ = 0;

  absl::Mutex mutex_;
  std::deque<grpc::ByteBuffer> queue_ ABSL_GUARDED_BY(mutex_);
  bool writing_ ABSL_GUARDED_BY(mutex_) = false;
  bool read_paused_ ABSL_GUARDED_BY(mutex_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mutex_) = false;
  bool broken_ ABSL_GUARDED_BY(mutex_) = false;
  bool finish_called_ ABSL_GUARDED_BY(mutex_) = false;
  absl::Status final_status_ ABSL_GUARDED_BY(mutex_);
};

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* TilingService::GetTilingBatch(
    grpc::CallbackServerContext* context) {
  return new BatchReactor(this, context);
}

}  // namespace npu::server
