#include "server/tiling/quant/quant_request.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "server/tiling/batch_shape.h"
#include "server/tiling/int_math.h"

namespace npu::tiling::quant {
namespace {

// CANN's fractal of an NZ weight: 16 rows by 32 columns.
constexpr int64_t kNzRows = 16;
constexpr int64_t kNzCols = 32;

std::vector<int64_t> WithMatrix(const std::vector<int64_t>& batch, int64_t rows, int64_t cols) {
  std::vector<int64_t> shape = batch;
  shape.push_back(rows);
  shape.push_back(cols);
  return shape;
}

QuantTensor Optional(const QuantTensorSpec& spec) {
  QuantTensor out;
  out.present = spec.present;
  if (!spec.present) return out;
  out.dtype = GeDtypeOf(spec.dtype);
  out.origin = spec.shape;
  out.storage = spec.shape;
  return out;
}

}  // namespace

GeDtype GeDtypeOf(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return GeDtype::kFloat16;
    case DataType::kBFloat16:
      return GeDtype::kBFloat16;
    case DataType::kFloat32:
      return GeDtype::kFloat;
    case DataType::kInt8:
      return GeDtype::kInt8;
    case DataType::kInt4:
      return GeDtype::kInt4;
    case DataType::kFloat8E4M3:
      return GeDtype::kFloat8E4M3;
    case DataType::kFloat8E5M2:
      return GeDtype::kFloat8E5M2;
    case DataType::kHiFloat8:
      return GeDtype::kHiFloat8;
    case DataType::kFloat4E2M1:
      return GeDtype::kFloat4E2M1;
    case DataType::kFloat4E1M2:
      return GeDtype::kFloat4E1M2;
    case DataType::kFloat8E8M0:
      return GeDtype::kFloat8E8M0;
    case DataType::kInt32:
      return GeDtype::kInt32;
    case DataType::kInt64:
      return GeDtype::kInt64;
    case DataType::kUint64:
      return GeDtype::kUint64;
  }
  return GeDtype::kFloat;
}

QuantRequest QuantRequestOf(const MatmulProblem& p) {
  QuantRequest r;
  r.x1.present = true;
  r.x1.dtype = GeDtypeOf(p.dtype_a);
  r.x1.origin = p.trans_a ? WithMatrix(p.batch.a, p.k, p.m) : WithMatrix(p.batch.a, p.m, p.k);
  r.x1.storage = r.x1.origin;
  r.x1.nz = p.format_a == Format::kFractalNz;

  r.x2.present = true;
  r.x2.dtype = GeDtypeOf(p.dtype_b);
  const int64_t rows = p.trans_b ? p.n : p.k;
  const int64_t cols = p.trans_b ? p.k : p.n;
  r.x2.origin = WithMatrix(p.batch.b, rows, cols);
  r.x2.nz = p.format_b == Format::kFractalNz;
  if (!r.x2.nz) {
    r.x2.storage = r.x2.origin;
  } else if (!p.storage_shape_b.empty()) {
    r.x2.storage = p.storage_shape_b;
  } else {
    r.x2.storage = p.batch.b;
    r.x2.storage.push_back(CeilDiv(cols, kNzCols));
    r.x2.storage.push_back(CeilDiv(rows, kNzRows));
    r.x2.storage.push_back(kNzRows);
    r.x2.storage.push_back(kNzCols);
  }

  r.y.present = true;
  r.y.dtype = GeDtypeOf(p.dtype_c);
  r.y.origin = WithMatrix(OutputBatchDims(p), p.m, p.n);
  r.y.storage = r.y.origin;

  r.scale = Optional(p.quant.scale);
  r.offset = Optional(p.quant.offset);
  r.pertoken = Optional(p.quant.pertoken);
  r.bias.present = p.has_bias;
  if (p.has_bias) {
    r.bias.dtype = GeDtypeOf(p.dtype_bias);
    r.bias.origin = p.quant.bias_shape.empty() ? std::vector<int64_t>{p.n} : p.quant.bias_shape;
    r.bias.storage = r.bias.origin;
  }
  r.transpose_x1 = p.trans_a;
  r.transpose_x2 = p.trans_b;
  r.group_size = p.quant.group_size_k | p.quant.group_size_n << 16 | p.quant.group_size_m << 32;
  r.deterministic_level = p.deterministic_level;
  r.tensor_api = p.quant.tensor_api;
  return r;
}

}  // namespace npu::tiling::quant
