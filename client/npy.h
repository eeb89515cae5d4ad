// NumPy .npy files: the array format `tilingctl execute` reads operands from
// and writes C to.
//
// Supported: format versions 1.0, 2.0 and 3.0; C (row-major) order;
// little-endian float16 ('<f2'), float32 ('<f4'), uint16 ('<u2', how bfloat16
// travels, since NumPy has no bfloat16), int32 ('<i4'), int64 ('<i8') and
// uint64 ('<u8'); and the one-byte int8 ('|i1') and uint8 ('|u1', how 8-bit
// float codes and packed 4-bit codes travel). NumPy writes '|' (no byte
// order) for one-byte types; '<' and '>' mean the same bytes there and are
// accepted too. Everything else -- big-endian multi-byte data, other dtypes,
// fortran_order arrays, object arrays, pickles -- is refused with a message
// that says what was found. The reader trusts nothing in the file: every
// length, the header's syntax and the shape's product are checked before any
// data is touched, so a malformed or hostile file yields an
// absl::Status, never a crash or an oversized allocation.
//
// Depends on Abseil only (library npu_npy), so fuzzers can link it alone.
#ifndef NPU_CLIENT_NPY_H_
#define NPU_CLIENT_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npu::client {

enum class NpyDtype { kFloat16, kFloat32, kUint16, kInt8, kUint8, kInt32, kInt64, kUint64 };

// The descr NumPy writes: "<f2", "<f4", "<u2", "|i1", "|u1", "<i4", "<i8",
// "<u8".
absl::string_view NpyDescr(NpyDtype dtype);
// 1, 2, 4 or 8.
int NpyItemBytes(NpyDtype dtype);

struct NpyArray {
  NpyDtype dtype = NpyDtype::kFloat32;
  std::vector<int64_t> shape;  // empty: a scalar (one element)
  std::string data;            // little-endian elements, C order

  uint64_t elements() const;
};

// Largest data section the reader accepts: 2 GiB, the most a protobuf bytes
// field (and so an Execute request) can carry.
inline constexpr uint64_t kMaxNpyDataBytes = uint64_t{1} << 31;

// Parses the contents of a .npy file. kInvalidArgument says what is wrong
// (bad magic, unsupported version or dtype, malformed header, fortran_order,
// a data length that does not match the shape, ...).
absl::StatusOr<NpyArray> ParseNpy(absl::string_view bytes);

// The .npy encoding of `array` (version 1.0; 2.0 only if the header needs
// it), its header padded so the data starts at a multiple of 64 bytes as
// NumPy writes it. kInvalidArgument when data does not match the shape.
absl::StatusOr<std::string> SerializeNpy(const NpyArray& array);

// ParseNpy / SerializeNpy on a file; errors name the path.
absl::StatusOr<NpyArray> ReadNpyFile(const std::string& path);
absl::Status WriteNpyFile(const std::string& path, const NpyArray& array);

}  // namespace npu::client

#endif  // NPU_CLIENT_NPY_H_
