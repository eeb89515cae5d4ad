#include "server/service/admission.h"

#include "absl/strings/str_cat.h"

namespace npu::server {

bool Admission::TryAdmit() {
  if (draining_.load(std::memory_order_relaxed)) return false;
  if (inflight_.fetch_add(1) + 1 > max_inflight_) {
    inflight_.fetch_sub(1);
    return false;
  }
  return true;
}

absl::Status Admission::RefusalError() const {
  if (draining_.load(std::memory_order_relaxed)) {
    return absl::UnavailableError("server shutting down; retry on another replica");
  }
  return absl::ResourceExhaustedError(absl::StrCat("server overloaded: ", max_inflight_,
                                                   " RPCs in flight (--max_inflight); retry "
                                                   "later or on another replica"));
}

}  // namespace npu::server
