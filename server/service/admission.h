// Admission control and draining of the service's RPCs.
//
// At most `max_inflight` RPCs (unary calls plus open batch streams) run at
// once; the next one is refused with RESOURCE_EXHAUSTED rather than queued,
// so an overloaded replica sheds load quickly and the client can try another
// one. While draining (TilingServer::Shutdown()), every new call is refused
// with UNAVAILABLE, which clients retry elsewhere, and calls already admitted
// run on. The gRPC adapter (tiling_service.h) owns one; each RPC family's
// handler admits its call and releases it when the call is done.
#ifndef NPU_SERVER_SERVICE_ADMISSION_H_
#define NPU_SERVER_SERVICE_ADMISSION_H_

#include <atomic>

#include "absl/status/status.h"

namespace npu::server {

class Admission {
 public:
  explicit Admission(int max_inflight) : max_inflight_(max_inflight) {}

  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // Admits one more RPC, or returns false when `max_inflight` are running or
  // the service is draining.
  bool TryAdmit();
  // Ends an admitted RPC.
  void Release() { inflight_.fetch_sub(1); }
  // Why TryAdmit() refused: UNAVAILABLE while draining, RESOURCE_EXHAUSTED
  // otherwise.
  absl::Status RefusalError() const;

  // From now on refuses every new call; calls already admitted run on.
  void BeginDrain() { draining_.store(true); }
  // RPCs currently admitted.
  int inflight() const { return inflight_.load(); }

 private:
  const int max_inflight_;
  std::atomic<int> inflight_{0};
  std::atomic<bool> draining_{false};
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_ADMISSION_H_
