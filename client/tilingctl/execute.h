// `tilingctl execute`: .npy operands in, an Execute request out, C and the
// report back.
//
// The file I/O and flag handling stay in main.cc; this file holds the
// conversions between NumPy arrays and the wire's tensors, the reading of a
// hand-editable tiling file, and the human-readable report, so that each is
// unit-tested without a server (tests/client/execute_test.cc).
#ifndef NPU_CLIENT_TILINGCTL_EXECUTE_H_
#define NPU_CLIENT_TILINGCTL_EXECUTE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/npy.h"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::client {

// The wire tensor of operand `what` ("--a A.npy") from a .npy array, for an
// operand of `dtype`: float16 arrays for float16, float32 for float32, and
// uint16 arrays holding the bits for bfloat16 (NumPy has no bfloat16).
// `rank` is the number of dimensions the operand must have (2, or 1 for the
// bias). kInvalidArgument says which flag to change.
absl::StatusOr<npu::tiling::v1::Tensor> TensorFromNpy(const NpyArray& array,
                                                      npu::tiling::v1::DataType dtype, int rank,
                                                      absl::string_view what);

// The .npy array of a wire tensor (C): float16, float32, or uint16 for
// bfloat16. kInvalidArgument when the data does not match the shape.
absl::StatusOr<NpyArray> NpyFromTensor(const npu::tiling::v1::Tensor& tensor);

// A tiling file for `--tiling`: the JSON that `tilingctl tile --json` prints
// (a TilingResponse in the proto JSON mapping), possibly edited, or the JSON
// of `tilingctl execute --json`, whose "tiling" is used. Unknown field names
// are errors, so that a typo in a hand edit is not silently ignored.
absl::StatusOr<npu::tiling::v1::TilingResponse> ParseTilingFile(absl::string_view json_text);

// The report for people: the tiling that ran, the error against the fp64
// reference, the timing with the per-core table, host time.
std::string FormatExecute(const npu::tiling::v1::ExecuteResponse& response);

}  // namespace npu::client

#endif  // NPU_CLIENT_TILINGCTL_EXECUTE_H_
