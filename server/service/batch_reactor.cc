#include "server/service/batch_reactor.h"

#include <cassert>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/service/logging.h"
#include "server/service/request_pipeline.h"
#include "server/service/status_mapping.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
using Clock = std::chrono::steady_clock;

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
class BatchReactor final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  BatchReactor(TilingAnswers& answers, ServiceMetrics& metrics, Admission& admission,
               int64_t max_batch, grpc::CallbackServerContext* context)
      : answers_(answers),
        metrics_(metrics),
        admission_(admission),
        max_batch_(max_batch),
        context_(context),
        start_(Clock::now()) {
    metrics_.RpcStarted(RpcMethod::kGetTilingBatch);
    admitted_ = admission_.TryAdmit();
    if (!admitted_) {
      final_status_ = admission_.RefusalError();
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
    metrics_.MessageReceived(RpcMethod::kGetTilingBatch);
    if (++received_ > max_batch_) {
      CloseReads(absl::ResourceExhaustedError(absl::StrCat(
          "GetTilingBatch accepts at most ", max_batch_,
          " requests per stream (--max_batch); the first ", max_batch_, " were answered")));
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
        metrics_.MessageSent(RpcMethod::kGetTilingBatch);
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
    if (admitted_) admission_.Release();
    metrics_.RpcHandled(RpcMethod::kGetTilingBatch, code, SecondsSince(start_));
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
    pb::TilingRequest* request = TilingRequestFor(request_bytes_, owned);
    absl::Status status = ParseRequestBytes(request_bytes_, request);
    if (status.ok() && request->mode() == pb::TILING_MODE_ADVISE) {
      // Batch items are answered on the RPC thread, in order; one advice
      // would hold the stream (and a callback thread) for seconds.
      status = absl::InvalidArgumentError(
          "mode: TILING_MODE_ADVISE is not served on GetTilingBatch (each advice runs tens of "
          "emulations); call GetTiling for it");
    }
    grpc::ByteBuffer bytes;
    if (status.ok()) status = answers_.AnswerSerialized(*request, &bytes);
    if (status.ok()) return bytes;
    metrics_.RequestFailed(status.code());
    LogOutcome("GetTilingBatch", request->client_id(), request->id(), status);
    pb::TilingResponse response;
    response.set_id(request->id());
    StatusToItem(status, response.mutable_status());
    const absl::Status serialized = SerializeMessage(response, &bytes);
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

  TilingAnswers& answers_;
  ServiceMetrics& metrics_;
  Admission& admission_;
  const int64_t max_batch_;
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

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StartBatch(
    TilingAnswers& answers, ServiceMetrics& metrics, Admission& admission, int64_t max_batch,
    grpc::CallbackServerContext* context) {
  return new BatchReactor(answers, metrics, admission, max_batch, context);
}

}  // namespace npu::server
