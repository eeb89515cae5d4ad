// Fuzz target: the .npy reader of `tilingctl execute` (client/npy.h) on
// arbitrary bytes.
//
// ParseNpy must return an array or a status, never crash, read out of bounds
// or allocate more than the file's data (kMaxNpyDataBytes at most). An array
// it accepts must be consistent (data length == elements x item size) and
// survive a round trip: SerializeNpy then ParseNpy gives the same dtype,
// shape and data.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/npy.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "npy_fuzzer: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<npu::client::NpyArray> array = npu::client::ParseNpy(bytes);
  if (!array.ok()) {
    if (array.status().code() != absl::StatusCode::kInvalidArgument) Fail("not INVALID_ARGUMENT");
    if (array.status().message().empty()) Fail("an error without a message");
    return 0;
  }
  const uint64_t item_bytes = static_cast<uint64_t>(npu::client::NpyItemBytes(array->dtype));
  if (array->data.size() != array->elements() * item_bytes) Fail("data length != shape");
  if (array->data.size() > size) Fail("more data than input");

  absl::StatusOr<std::string> written = npu::client::SerializeNpy(*array);
  if (!written.ok()) Fail("an accepted array does not serialize");
  absl::StatusOr<npu::client::NpyArray> again = npu::client::ParseNpy(*written);
  if (!again.ok()) Fail("a serialized array does not parse");
  if (again->dtype != array->dtype || again->shape != array->shape || again->data != array->data) {
    Fail("round trip changed the array");
  }
  return 0;
}
