#include "server/tiling/validate.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/tiling/int_math.h"

namespace npu::tiling {
namespace {

// Each operand must stay below 2^46 bytes (64 TiB) so that every byte count
// the heuristics form, including sums of all three tensors, fits in 64 bits.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 46;
// Tiling-data stride fields are 32-bit.
constexpr int64_t kMaxStride = std::numeric_limits<uint32_t>::max();

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

absl::Status CheckDim(std::string_view field, int64_t value, int64_t min) {
  if (value < min || value > kMaxDim) {
    return Invalid(absl::StrCat("field ", std::string(field), "=", value, " must be in [", min,
                                ", ", kMaxDim, "]"));
  }
  return absl::OkStatus();
}

absl::Status CheckTensorBytes(std::string_view tensor, uint64_t rows, uint64_t cols,
                              DataType dtype) {
  // rows, cols <= 2^31, so the element count fits; the byte count may not.
  const unsigned __int128 bytes =
      static_cast<unsigned __int128>(rows) * cols * DataTypeBytes(dtype);
  if (bytes > kMaxTensorBytes) {
    return Invalid(absl::StrCat("tensor ", std::string(tensor), " of ", rows, "x", cols, " ",
                                std::string(DataTypeName(dtype)), " exceeds the limit of ",
                                kMaxTensorBytes, " bytes"));
  }
  return absl::OkStatus();
}

// CANN's MatMulV3 dtype table for arch35: A and B share a dtype; float16 and
// bfloat16 may produce float32; bias is C's dtype or float32.
bool DtypesSupported(const MatmulProblem& p) {
  if (p.dtype_a != p.dtype_b) return false;
  const bool c_ok = p.dtype_c == p.dtype_a ||
                    (p.dtype_a != DataType::kFloat32 && p.dtype_c == DataType::kFloat32);
  if (!c_ok) return false;
  if (!p.has_bias) return true;
  if (p.dtype_a == DataType::kFloat32) return p.dtype_bias == DataType::kFloat32;
  return p.dtype_bias == p.dtype_a || p.dtype_bias == DataType::kFloat32;
}

absl::Status CheckNzStorageOfB(const MatmulProblem& p) {
  // B as stored: [k, n], or [n, k] when transposed.
  const int64_t rows = p.trans_b ? p.n : p.k;
  const int64_t cols = p.trans_b ? p.k : p.n;
  const int64_t col_align = 32 / static_cast<int64_t>(DataTypeBytes(p.dtype_b));
  if (p.storage_shape_b.empty()) return absl::OkStatus();  // canonical NZ storage
  const auto& s = p.storage_shape_b;
  const std::string shape = absl::StrCat("[", absl::StrJoin(s, ", "), "]");
  if (s.size() < 4) {
    return Invalid(
        absl::StrCat("field storage_shape_b=", shape, " must have at least 4 dims for FRACTAL_NZ"));
  }
  for (int64_t d : s) {
    if (d <= 0 || d > kMaxDim) {
      return Invalid(
          absl::StrCat("field storage_shape_b=", shape, " has a dim outside [1, ", kMaxDim, "]"));
    }
  }
  const size_t r = s.size();
  const int64_t rows_stored = s[r - 3] * s[r - 2];
  const int64_t cols_stored = s[r - 4] * s[r - 1];
  const int64_t rows_needed = static_cast<int64_t>(CeilAlign(rows, 16));
  const int64_t cols_needed = static_cast<int64_t>(CeilAlign(cols, col_align));
  if (rows_stored != rows_needed || cols_stored != cols_needed) {
    return Invalid(absl::StrCat("field storage_shape_b=", shape, " does not hold B of ", rows, "x",
                                cols,
                                ": FRACTAL_NZ needs dims[-3]*dims[-2]=align16(rows)=", rows_needed,
                                " and dims[-4]*dims[-1]=align", col_align, "(cols)=", cols_needed,
                                ", got ", rows_stored, " and ", cols_stored));
  }
  return absl::OkStatus();
}

absl::Status CheckSlice(const MatmulProblem& p) {
  const SliceView& s = p.a_slice;
  if (!s.enabled) return absl::OkStatus();
  if (p.trans_a)
    return Invalid("field a_slice: a non-contiguous slice view of A needs trans_a=false");
  if (s.rank != 2 && s.rank != 3) {
    return Invalid(absl::StrCat("field a_slice.rank=", s.rank, " must be 2 or 3"));
  }
  if (s.row_stride < p.k || s.row_stride > kMaxStride) {
    return Invalid(absl::StrCat("field a_slice.row_stride=", s.row_stride, " must be in [k=", p.k,
                                ", ", kMaxStride, "]"));
  }
  if (s.rank == 2) return absl::OkStatus();
  if (s.batch < 1 || s.batch > p.m || p.m % s.batch != 0) {
    return Invalid(absl::StrCat("field a_slice.batch=", s.batch, " must divide m=", p.m));
  }
  const int64_t rows = p.m / s.batch;
  const int64_t min_batch_stride = (rows - 1) * s.row_stride + p.k;
  if (s.batch_stride < min_batch_stride || s.batch_stride > kMaxStride) {
    return Invalid(absl::StrCat("field a_slice.batch_stride=", s.batch_stride, " must be in [",
                                min_batch_stride, ", ", kMaxStride,
                                "] so that batches do not overlap"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateProblem(const MatmulProblem& p) {
  if (auto s = CheckDim("m", p.m, 1); !s.ok()) return s;
  if (auto s = CheckDim("n", p.n, 1); !s.ok()) return s;
  if (auto s = CheckDim("k", p.k, 0); !s.ok()) return s;
  if (p.k == 0 && p.has_bias) {
    return Invalid("field k=0 is not allowed with a bias: k must be in [1, 2147483647]");
  }
  if (p.format_a != Format::kNd)
    return Invalid("field format_a must be ND (FRACTAL_NZ A is unsupported)");
  if (p.format_c != Format::kNd)
    return Invalid("field format_c must be ND (FRACTAL_NZ C is unsupported)");
  if (!DtypesSupported(p)) {
    return Invalid(absl::StrCat(
        "fields dtype_a/dtype_b/dtype_c", p.has_bias ? "/dtype_bias" : "", " = ",
        std::string(DataTypeName(p.dtype_a)), "/", std::string(DataTypeName(p.dtype_b)), "/",
        std::string(DataTypeName(p.dtype_c)),
        p.has_bias ? absl::StrCat("/", std::string(DataTypeName(p.dtype_bias))) : "",
        " are unsupported: A and B must match; C is A's dtype or float32 (float16/bfloat16 A); "
        "bias is A's dtype or float32"));
  }
  if (p.deterministic_level < 0 || p.deterministic_level > 3) {
    return Invalid(
        absl::StrCat("field deterministic_level=", p.deterministic_level, " must be in [0, 3]"));
  }
  if (p.hf32 && p.force_grp_acc_fp32) {
    return Invalid("fields hf32 and force_grp_acc_fp32 are exclusive (one opImplMode value)");
  }
  if (p.format_b == Format::kFractalNz) {
    if (auto s = CheckNzStorageOfB(p); !s.ok()) return s;
  } else if (!p.storage_shape_b.empty()) {
    return Invalid("field storage_shape_b is only meaningful when format_b is FRACTAL_NZ");
  }
  if (auto s = CheckSlice(p); !s.ok()) return s;
  const uint64_t m = p.m, n = p.n, k = p.k;
  if (auto s = CheckTensorBytes("A", m, k, p.dtype_a); !s.ok()) return s;
  if (auto s = CheckTensorBytes("B", k, n, p.dtype_b); !s.ok()) return s;
  if (auto s = CheckTensorBytes("C", m, n, p.dtype_c); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status ValidateTilingArch(const ChipSpec& chip) {
  if (chip.npu_arch == NpuArch::kDav3510) return absl::OkStatus();
  // CANN selects its mat_mul_v3 host tiling per NpuArch; the arch35
  // strategies reimplemented here are DAV_3510's. Another architecture has
  // other buffers, another fixpipe and other kernels, so answering with
  // these plans would be wrong, not approximate.
  return absl::FailedPreconditionError(absl::StrCat(
      "CANN's arch35 mat_mul_v3 tiling applies to DAV_3510 only; platform \"", chip.name, "\" is ",
      std::string(NpuArchName(chip.npu_arch)), " (Execute with a kernel_schedule runs on it)"));
}

}  // namespace npu::tiling
