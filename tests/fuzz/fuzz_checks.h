// Checks shared by the service fuzz targets (tests/fuzz).
#ifndef NPU_TESTS_FUZZ_FUZZ_CHECKS_H_
#define NPU_TESTS_FUZZ_FUZZ_CHECKS_H_

#include "absl/strings/string_view.h"

namespace npu::fuzz {

// Whether `message` starts with the wire path of the field it is about, as
// every service error should: "problem: ...", "platform_overrides.aic_num:
// ...", "tiling.fields[baseM]: ...", "tiling.tiling_key model: ...". The
// path is the first word (up to a space or ':'), and its root must be a
// request field (or "request" for bytes that are no request at all).
inline bool NamesAField(absl::string_view message) {
  const size_t end = message.find_first_of(" :");
  if (end == absl::string_view::npos || end == 0) return false;
  const absl::string_view path = message.substr(0, end);
  const absl::string_view root = path.substr(0, path.find_first_of(".["));
  for (absl::string_view field :
       {"request", "id", "problem", "platform", "platform_overrides", "forced_strategy",
        "include_trace", "client_id", "mode", "advise", "view", "tiling", "inputs", "seed",
        "timing_only", "return_c", "threads", "kernel_schedule"}) {
    if (root == field) return true;
  }
  return false;
}

}  // namespace npu::fuzz

#endif  // NPU_TESTS_FUZZ_FUZZ_CHECKS_H_
