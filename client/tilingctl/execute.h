// `tilingctl execute`: .npy operands in, an Execute request out, C and the
// report back.
//
// The file I/O and flag handling stay in main.cc and requests.cc; this file
// holds the conversions between NumPy arrays and the wire's tensors (also
// QuantBatchMatmulV3's quantized inputs and scales, and the sizes read from
// the operands' shapes), the reading of a hand-editable tiling file, and the
// human-readable report, so that each is unit-tested without a server
// (tests/client/execute_test.cc).
#ifndef NPU_CLIENT_TILINGCTL_EXECUTE_H_
#define NPU_CLIENT_TILINGCTL_EXECUTE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/npy.h"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::client {

// One .npy operand file of `execute`, and how messages name it: its flag and
// path ("--a A.npy").
struct NpyOperand {
  std::string what;
  NpyArray array;
};

// The operand files of `execute`, by flag: --a (A, QuantBatchMatmulV3's
// x1), --b (B, x2), --bias, and QuantBatchMatmulV3's --scale_npy,
// --pertoken_npy and --offset_npy.
struct NpyOperands {
  std::optional<NpyOperand> a, b, bias, scale, pertoken_scale, offset;
};

// The sizes of a matmul; unset until known.
struct MatmulSizes {
  std::optional<int64_t> m, n, k;
};

// Fills in the unset `sizes` from the shapes of A and B, read from their
// last two dims: A is [m, k] ([k, m] with trans_a), B is [k, n] ([n, k] with
// trans_b); leading dims are batch dims. A 4-bit operand (int4, float4_e2m1)
// in a uint8 ('|u1') array counts two codes per byte of its last dim, except
// that a float4_e2m1 '|u1' array may also hold one unpacked code per byte.
// A size that only such last dims give is ambiguous, unless A's and B's
// allow one common value of k (one packed, the other not); an ambiguous size
// is kInvalidArgument naming the flag (--m, --n or --k) to pass. Also
// kInvalidArgument when A or B has fewer than two dims.
absl::Status SizesFromOperands(const NpyOperand& a, npu::tiling::v1::DataType dtype_a, bool trans_a,
                               const NpyOperand& b, npu::tiling::v1::DataType dtype_b, bool trans_b,
                               MatmulSizes& sizes);

// The wire tensor of operand `what` ("--a A.npy") from a .npy array, for an
// operand of `dtype`: float16 arrays for float16, float32 for float32, and
// uint16 arrays holding the bits for bfloat16 (NumPy has no bfloat16).
// `rank` is the number of dimensions the operand must have (2, or 1 for the
// bias). The float operators' operands only; QuantTensorFromNpy() takes
// QuantBatchMatmulV3's. kInvalidArgument says which flag to change.
absl::StatusOr<npu::tiling::v1::Tensor> TensorFromNpy(const NpyArray& array,
                                                      npu::tiling::v1::DataType dtype, int rank,
                                                      absl::string_view what);

// The wire tensor of QuantBatchMatmulV3's input `input` ("x1", "scale", ...)
// from the .npy array of `what` ("--scale_npy s.npy"). `dtype` and `shape`
// are the problem's for that input (the logical shape, outermost first), and
// `problem_flags` the flags that set them (named in errors). The array:
//   int8                      int8 ('|i1'), `shape`;
//   float8_e4m3fn, float8_e5m2, hifloat8, float8_e8m0
//                             uint8 ('|u1') raw codes, `shape` (ml_dtypes
//                             arrays: save arr.view(np.uint8));
//   int4, float4_e2m1         uint8 ('|u1') packed bytes, `shape` with its
//                             last dim halved: two codes per byte, element
//                             2i in the low nibble (as the wire and
//                             ml_dtypes pack them); or the codes unpacked in
//                             `shape`, which this function packs: for int4
//                             int8 ('|i1') values in [-8, 7], for float4_e2m1
//                             uint8 ('|u1') codes 0..15. The last dim must be
//                             even (CANN's rule), so that packing each row
//                             equals the wire's packing of the flat tensor;
//   int32, int64, uint64      '<i4', '<i8', '<u8' (uint64 / int64: the packed
//                             fixpipe scale words);
//   float32, bfloat16, float16
//                             '<f4', uint16 ('<u2') bits, '<f2'.
// kInvalidArgument names `what` and says what was expected, e.g.
// "--scale_npy s.npy: int64 ('<i8') array [8], the problem's scale is uint64
// [8] (--scale-dtype, --scale-shape); expected a uint64 ('<u8') array [8]".
absl::StatusOr<npu::tiling::v1::Tensor> QuantTensorFromNpy(
    const NpyArray& array, npu::tiling::v1::DataType dtype, const std::vector<int64_t>& shape,
    absl::string_view what, absl::string_view input, absl::string_view problem_flags);

// The inline inputs of an Execute request for `problem` from its operand
// files (a and b required). The float operators take A, B and the bias
// through TensorFromNpy() and refuse scale files. QuantBatchMatmulV3 takes
// each input through QuantTensorFromNpy() against the problem's dtype and
// shape (x1 batch_a + [m, k], x2 batch_b + [k, n], transposed as the problem
// says; the bias quant.bias_shape, [n] when empty; the scales as
// problem.quant describes them) and needs a file for each input the problem
// has (bias, scale, pertoken scale, offset) and none for the others.
// kInvalidArgument names the flag.
absl::StatusOr<npu::tiling::v1::ExecuteInputs> InputsFromNpy(
    const npu::tiling::v1::MatmulProblem& problem, const NpyOperands& files);

// The .npy array of a wire tensor (C), in the form QuantTensorFromNpy() and
// TensorFromNpy() read: float16, float32, uint16 for bfloat16, int8 ('|i1'),
// int32 ('<i4'), int64, uint64, uint8 codes for the 8-bit floats; a 4-bit
// tensor unpacked to its shape (int4 as int8 values, float4_e2m1 as uint8
// codes). kInvalidArgument when the data does not match the shape or the
// dtype is unspecified.
absl::StatusOr<NpyArray> NpyFromTensor(const npu::tiling::v1::Tensor& tensor);

// A tiling file for `--tiling`: the JSON that `tilingctl tile --json` prints
// (a TilingResponse in the proto JSON mapping), possibly edited, or the JSON
// of `tilingctl execute --json`, whose "tiling" is used. Unknown field names
// are errors, so that a typo in a hand edit is not silently ignored.
absl::StatusOr<npu::tiling::v1::TilingResponse> ParseTilingFile(absl::string_view json_text);

// GroupedMatmul's --skew zipf:S draw: `total` rows (or K) routed over
// `groups` experts, expert of popularity rank r (a permutation seeded by
// `seed`) drawn with weight r^-exponent, each token on its own (past 2^22
// tokens, the expected shares rounded by largest remainder). Deterministic
// for `seed` on every platform; sums to `total`.
std::vector<int64_t> ZipfHistogram(int64_t total, int64_t groups, double exponent, uint64_t seed);

// The report for people: the tiling that ran, how a GroupedMatmul's groups
// were split, the error against the fp64 reference, the timing with the
// per-core table, host time.
std::string FormatExecute(const npu::tiling::v1::ExecuteResponse& response);

}  // namespace npu::client

#endif  // NPU_CLIENT_TILINGCTL_EXECUTE_H_
