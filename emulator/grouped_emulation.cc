#include "emulator/grouped_emulation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "emulator/a8w4_numerics.h"
#include "emulator/quant_emulation.h"
#include "emulator/quant_formats.h"
#include "emulator/quant_numerics.h"
#include "emulator/weight_quant_emulation.h"
#include "server/tiling/grouped/gmm_path.h"
#include "server/tiling/int_math.h"
#include "server/tiling/status_macros.h"

namespace npu::emu {
namespace {

using tiling::CeilDiv;
using tiling::DataType;
using tiling::GroupedTensor;
using tiling::MatmulProblem;
using tiling::grouped::GmmGroup;
using tiling::grouped::GmmGroups;
using tiling::grouped::GmmPath;

constexpr double kInf = std::numeric_limits<double>::infinity();
// K elements per MX scale pair (two e8m0 codes of 32) and per per-block
// scale, as the scales' shapes count them.
constexpr uint64_t kMxPairK = 64;
constexpr uint64_t kPerBlockSize = 128;
// The lists Execute reads (y is the output; group_list's values are the
// histogram's).
constexpr GroupedTensor kInputLists[] = {
    GroupedTensor::kX,          GroupedTensor::kWeight,          GroupedTensor::kBias,
    GroupedTensor::kScale,      GroupedTensor::kOffset,          GroupedTensor::kAntiquantScale,
    GroupedTensor::kAntiquantOffset, GroupedTensor::kPerTokenScale};

std::string Name(GroupedTensor t) { return std::string(tiling::GroupedTensorName(t)); }
std::string DimsText(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}
uint64_t Elements(const std::vector<int64_t>& dims) {
  uint64_t count = 1;
  for (int64_t d : dims) count *= static_cast<uint64_t>(d);
  return count;
}
const tiling::GroupedTensorList& List(const MatmulProblem& p, GroupedTensor t) {
  return p.grouped[t];
}
const std::vector<HostTensor>& Inputs(const Tensors& t, GroupedTensor list) {
  return t.grouped[static_cast<size_t>(list)];
}

// --- Raw elements ------------------------------------------------------------

// Element `si` of `src` to element `di` of `dst` (the same dtype), bit for
// bit; 4-bit codes by their nibbles.
void CopyRaw(const HostTensor& src, uint64_t si, HostTensor& dst, uint64_t di) {
  const uint64_t bits = tiling::DataTypeBits(src.dtype);
  if (bits == 4) {
    SetQuantCode(dst.dtype, absl::MakeSpan(dst.bytes), di,
                 GetQuantCode(src.dtype, src.bytes, si));
    return;
  }
  const uint64_t bytes = bits / 8;
  std::memcpy(dst.bytes.data() + di * bytes, src.bytes.data() + si * bytes, bytes);
}

HostTensor Empty(DataType dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  t.bytes.assign(tiling::DataTypeBytesOf(dtype, Elements(shape)), 0);
  t.shape = std::move(shape);
  return t;
}

// The `shape` elements of `t` from element `offset` on.
HostTensor Slice(const HostTensor& t, uint64_t offset, std::vector<int64_t> shape) {
  HostTensor out = Empty(t.dtype, std::move(shape));
  const uint64_t count = out.elements();
  if (tiling::DataTypeBits(t.dtype) % 8 == 0 && count > 0) {
    const uint64_t bytes = tiling::DataTypeBits(t.dtype) / 8;
    std::memcpy(out.bytes.data(), t.bytes.data() + offset * bytes, count * bytes);
    return out;
  }
  for (uint64_t i = 0; i < count; ++i) CopyRaw(t, offset + i, out, i);
  return out;
}

// A [rows, cols] matrix read from `t` at `offset`, stored there [cols, rows]
// when `transposed`.
HostTensor Matrix(const HostTensor& t, uint64_t offset, uint64_t rows, uint64_t cols,
                  bool transposed) {
  const std::vector<int64_t> shape{static_cast<int64_t>(rows), static_cast<int64_t>(cols)};
  if (!transposed) return Slice(t, offset, shape);
  HostTensor out = Empty(t.dtype, shape);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < cols; ++c) CopyRaw(t, offset + c * rows + r, out, r * cols + c);
  }
  return out;
}

uint64_t ReadU64(const HostTensor& t, uint64_t index) {
  uint64_t value = 0;
  std::memcpy(&value, t.bytes.data() + 8 * index, 8);
  return value;
}
int32_t ReadI32(const HostTensor& t, uint64_t index) {
  int32_t value = 0;
  std::memcpy(&value, t.bytes.data() + 4 * index, 4);
  return value;
}
void WriteI32(HostTensor& t, uint64_t index, int32_t value) {
  std::memcpy(t.bytes.data() + 4 * index, &value, 4);
}

// y's value at `index`: the integer outputs by their codes.
double LoadY(const HostTensor& y, uint64_t index) {
  switch (y.dtype) {
    case DataType::kInt8: {
      int8_t code = 0;
      std::memcpy(&code, y.bytes.data() + index, 1);
      return code;
    }
    case DataType::kInt32:
      return ReadI32(y, index);
    default:
      return y.Get(index);
  }
}
void StoreY(HostTensor& y, uint64_t index, double value) {
  switch (y.dtype) {
    case DataType::kInt8: {
      const auto code = static_cast<int8_t>(value);
      std::memcpy(y.bytes.data() + index, &code, 1);
      return;
    }
    case DataType::kInt32:
      WriteI32(y, index, static_cast<int32_t>(value));
      return;
    default:
      y.Set(index, static_cast<float>(value));
  }
}

// --- Groups, schedules -------------------------------------------------------

// The first element of group g's C in y (all groups' blocks in order).
std::vector<uint64_t> COffsets(const GmmGroups& groups) {
  std::vector<uint64_t> offsets;
  uint64_t at = 0;
  for (const GmmGroup& g : groups.groups) {
    offsets.push_back(at);
    at += g.m * g.n;
  }
  return offsets;
}

// The units of group `g` as a schedule of its own matmul (rows from 0).
tiling::Schedule GroupSchedule(const tiling::Schedule& schedule, const GmmGroup& group,
                               uint32_t g) {
  tiling::Schedule out;
  out.model = schedule.model;
  out.aic_cores = schedule.aic_cores;
  out.base_m = schedule.base_m;
  out.base_n = schedule.base_n;
  out.base_k = schedule.base_k;
  out.k_l1 = schedule.k_l1;
  out.batch = 1;
  out.batch_rows = group.m;
  for (const tiling::WorkUnit& unit : schedule.units) {
    if (unit.batch != g) continue;
    tiling::WorkUnit local = unit;
    local.m = {unit.m.begin - group.c_row, unit.m.end - group.c_row};
    local.batch = 0;
    out.units.push_back(local);
    out.rounds = std::max(out.rounds, unit.round + 1);
  }
  return out;
}

// --- The quant path's modes --------------------------------------------------

// The scales' modes as CANN's SetQuantMode reads them from the dtypes and
// shapes (the struct's aQuantMode / bQuantMode).
struct QuantModes {
  bool mx = false;
  bool per_block = false;     // per-group x / per-block weight scales
  bool b_per_tensor = false;  // the weight's scale [E] / [E, 1]; else [E, n]
  bool has_a = false;         // per_token_scale given
  bool a_per_tensor = false;  // x's scale one per group ([E] / [E, 1]); else per row
};

QuantModes ModesOf(const MatmulProblem& p, const GmmGroups& groups) {
  QuantModes modes;
  const tiling::GroupedTensorList& scale = List(p, GroupedTensor::kScale);
  const tiling::GroupedTensorList& x_scale = List(p, GroupedTensor::kPerTokenScale);
  modes.has_a = x_scale.present();
  if (scale.present() && scale.dtype == DataType::kFloat8E8M0) {
    modes.mx = true;
    return modes;
  }
  const uint64_t e = groups.groups.size();
  if (scale.present()) {
    const std::vector<int64_t>& w = scale.instances[0].origin;
    modes.b_per_tensor = (w.size() == 2 && w.back() == 1) ||
                         (w.size() == 1 && static_cast<uint64_t>(w[0]) == e);
    if (w.size() == 3 && modes.has_a && x_scale.instances[0].origin.size() == 2 &&
        List(p, GroupedTensor::kX).dtype != DataType::kInt8) {
      modes.per_block = true;
      return modes;
    }
  }
  if (modes.has_a) {
    const std::vector<int64_t>& x = x_scale.instances[0].origin;
    const bool per_tensor =
        (x.size() == 2 && x.back() == 1) ||
        (x.size() == 1 && static_cast<uint64_t>(x[0]) == e &&
         (groups.group_type == tiling::kGroupTypeSplitK || e != groups.split_total));
    modes.a_per_tensor = List(p, GroupedTensor::kX).dtype != DataType::kInt8 && per_tensor;
  }
  return modes;
}

// A list's only tensor (the quant and weight-quant paths take single ones).
const HostTensor& Single(const Tensors& t, GroupedTensor list) { return Inputs(t, list)[0]; }

// Group `g`'s QuantOperands (the file comment's layouts).
// CANN's act_type (GroupedMatmul's ActiveType): 1 ReLU, 2 GELU tanh, 4
// FastGelu, 5 SiLU; the tiling refuses the others (3, GELU erf, included).
QuantActivation ActivationOf(int64_t act_type) {
  switch (act_type) {
    case 1:
      return QuantActivation::kRelu;
    case 2:
      return QuantActivation::kGeluTanh;
    case 4:
      return QuantActivation::kFastGelu;
    case 5:
      return QuantActivation::kSilu;
    default:
      return QuantActivation::kNone;
  }
}

absl::StatusOr<QuantOperands> QuantGroupOperands(const MatmulProblem& p, const GmmGroups& groups,
                                                 const QuantModes& modes, size_t g,
                                                 const Tensors& t) {
  const GmmGroup& group = groups.groups[g];
  const uint64_t m = group.m, n = group.n, k = group.k;
  QuantOperands op;
  op.m = m;
  op.n = n;
  op.k = k;
  const HostTensor& x = Single(t, GroupedTensor::kX);
  const HostTensor& w = Single(t, GroupedTensor::kWeight);
  op.x1_dtype = x.dtype;
  op.x2_dtype = w.dtype;
  op.x1 = Matrix(x, group.x_offset, m, k, groups.trans_x).bytes;
  op.x2 = Matrix(w, group.w_offset, k, n, groups.trans_w).bytes;
  op.y_dtype = List(p, GroupedTensor::kY).dtype;
  op.activation = ActivationOf(p.grouped.act_type);
  const HostTensor& scale = Single(t, GroupedTensor::kScale);
  op.scale_dtype = scale.dtype;
  const bool split_k = groups.group_type == tiling::kGroupTypeSplitK;
  if (modes.mx) {
    // e8m0 codes per 32 of K; the scales store them in pairs per 64.
    const uint64_t kg = CeilDiv(k, kMxGroupSize);
    const uint64_t pairs = CeilDiv(k, kMxPairK);
    const uint64_t first = group.k_offset / kMxPairK + g;  // split K: the group's first pair row
    const HostTensor& xs = Single(t, GroupedTensor::kPerTokenScale);
    op.scale_e8m0.resize(kg * n);
    op.pertoken_e8m0.resize(m * kg);
    op.has_pertoken = true;
    for (uint64_t j = 0; j < kg; ++j) {
      for (uint64_t col = 0; col < n; ++col) {
        const uint64_t at = split_k ? ((first + j / 2) * n + col) * 2 + j % 2
                            : groups.trans_w
                                ? ((g * n + col) * pairs + j / 2) * 2 + j % 2
                                : ((g * pairs + j / 2) * n + col) * 2 + j % 2;
        op.scale_e8m0[j * n + col] =
            static_cast<uint8_t>(GetQuantCode(DataType::kFloat8E8M0, scale.bytes, at));
      }
      for (uint64_t i = 0; i < m; ++i) {
        const uint64_t at = split_k ? ((first + j / 2) * m + i) * 2 + j % 2
                                    : ((group.c_row + i) * pairs + j / 2) * 2 + j % 2;
        op.pertoken_e8m0[i * kg + j] =
            static_cast<uint8_t>(GetQuantCode(DataType::kFloat8E8M0, xs.bytes, at));
      }
    }
  } else if (modes.per_block) {
    const uint64_t kb = CeilDiv(k, kPerBlockSize), nb = CeilDiv(n, kPerBlockSize);
    op.group_m = 1;
    op.group_n = kPerBlockSize;
    op.group_k = kPerBlockSize;
    op.scale = Matrix(scale, g * kb * nb, kb, nb, groups.trans_w).ToFloats();
    const HostTensor& xs = Single(t, GroupedTensor::kPerTokenScale);
    op.has_pertoken = true;
    op.pertoken = Slice(xs, group.c_row * kb, {static_cast<int64_t>(m), static_cast<int64_t>(kb)})
                      .ToFloats();
  } else {
    const uint64_t count = modes.b_per_tensor ? 1 : n;
    const uint64_t first = modes.b_per_tensor ? g : g * n;
    if (scale.dtype == DataType::kUint64 || scale.dtype == DataType::kInt64) {
      for (uint64_t j = 0; j < count; ++j) op.scale_words.push_back(ReadU64(scale, first + j));
    } else {
      for (uint64_t j = 0; j < count; ++j) op.scale.push_back(scale.Get(first + j));
    }
    if (modes.has_a) {
      const HostTensor& xs = Single(t, GroupedTensor::kPerTokenScale);
      op.has_pertoken = true;
      if (modes.a_per_tensor) {
        op.pertoken.push_back(xs.Get(g));
      } else {
        for (uint64_t i = 0; i < m; ++i) op.pertoken.push_back(xs.Get(group.c_row + i));
      }
    }
  }
  if (groups.has_bias) {
    const HostTensor& bias = Single(t, GroupedTensor::kBias);
    op.has_bias = true;
    op.bias_dtype = bias.dtype;
    for (uint64_t j = 0; j < n; ++j) {
      if (bias.dtype == DataType::kInt32) {
        op.bias_int32.push_back(ReadI32(bias, group.bias_offset + j));
      } else {
        op.bias_float.push_back(bias.Get(group.bias_offset + j));
      }
    }
  }
  return op;
}

// The plan's kernel runs `path`: KERNEL_TYPE 0 dequantizes in the fixpipe
// (MX in the cube), 1 on the vector cores, 2 per group / per block; the MX
// basic-API struct is MX.
absl::Status CheckQuantKernel(const tiling::TilingPlan& plan, QuantPath path) {
  if (plan.data.kernel == tiling::KernelId::kGroupedQuantBasicApi) {
    if (path == QuantPath::kMx) return absl::OkStatus();
  } else if (plan.data.kernel == tiling::KernelId::kGroupedQuant) {
    switch ((plan.key.grouped_bits >> 4) & 0xF) {
      case 0:
        if (path == QuantPath::kFixpipe || path == QuantPath::kMx ||
            path == QuantPath::kInt32Output) {
          return absl::OkStatus();
        }
        break;
      case 1:
        if (path == QuantPath::kVectorEpilogue) return absl::OkStatus();
        break;
      case 2:
        if (path == QuantPath::kPerBlock) return absl::OkStatus();
        break;
      default:
        break;
    }
  }
  return absl::UnimplementedError(absl::StrCat(
      "the scales dequantize on the ", QuantPathName(path), " path, but the plan's kernel (",
      std::string(plan.data.struct_name()), ", KERNEL_TYPE ", (plan.key.grouped_bits >> 4) & 0xF,
      ") runs another; the emulator models each kernel with its own operands"));
}

// --- The weight-quant path ---------------------------------------------------

struct WqGroup {
  MatmulProblem problem;
  Tensors tensors;
};

// Group `g` as a WeightQuantBatchMatmulV2 matmul of its blocks.
absl::StatusOr<WqGroup> WeightQuantGroup(const MatmulProblem& p, const GmmGroups& groups, size_t g,
                                         const Tensors& t) {
  const GmmGroup& group = groups.groups[g];
  const tiling::GroupedTensorList& scale_list = List(p, GroupedTensor::kAntiquantScale);
  const tiling::GroupedTensorList& offset_list = List(p, GroupedTensor::kAntiquantOffset);
  WqGroup out;
  MatmulProblem& q = out.problem;
  q.op = tiling::MatmulOp::kWeightQuantBatchMatmulV2;
  q.m = static_cast<int64_t>(group.m);
  q.n = static_cast<int64_t>(group.n);
  q.k = static_cast<int64_t>(group.k);
  q.dtype_a = List(p, GroupedTensor::kX).dtype;
  q.dtype_b = List(p, GroupedTensor::kWeight).dtype;
  q.dtype_c = List(p, GroupedTensor::kY).dtype;
  q.trans_b = groups.trans_w;
  q.has_bias = groups.has_bias;
  q.dtype_bias = List(p, GroupedTensor::kBias).dtype;
  // The antiquant scale of one expert: its own tensor of a list, or the
  // single tensor without its leading expert dim.
  const bool scale_list_per_group = scale_list.size() > 1;
  const std::vector<int64_t>& scale_dims =
      scale_list.instances[scale_list_per_group ? g : 0].origin;
  std::vector<int64_t> shape(scale_dims.begin() + (scale_list_per_group ? 0 : 1),
                             scale_dims.end());
  const uint64_t per_group = Elements(shape);
  uint64_t group_count = 1;
  if (shape.size() == 2) {
    group_count = static_cast<uint64_t>(groups.trans_w ? shape[1] : shape[0]);
  }
  q.quant.antiquant_scale = {true, scale_list.dtype, shape};
  q.quant.antiquant_offset = {offset_list.present(), offset_list.dtype, shape};
  if (scale_list.dtype == DataType::kFloat8E8M0) {
    q.quant.group_size = static_cast<int64_t>(kMxGroupSize);
  } else if (group_count > 1) {
    q.quant.group_size = static_cast<int64_t>(CeilDiv(group.k, group_count));
  }
  if (q.has_bias) q.quant.bias_shape = {q.n};
  Tensors& u = out.tensors;
  u.a = Slice(Inputs(t, GroupedTensor::kX)[group.x_index], group.x_offset, {q.m, q.k});
  u.b = Slice(Inputs(t, GroupedTensor::kWeight)[group.w_index], group.w_offset,
              WeightShapeOf(q));
  const size_t scale_index = scale_list_per_group ? g : 0;
  const uint64_t scale_offset = scale_list_per_group ? 0 : g * per_group;
  u.scale = Slice(Inputs(t, GroupedTensor::kAntiquantScale)[scale_index], scale_offset, shape);
  if (offset_list.present()) {
    u.offset =
        Slice(Inputs(t, GroupedTensor::kAntiquantOffset)[scale_index], scale_offset, shape);
  }
  if (q.has_bias) {
    u.bias = Slice(Inputs(t, GroupedTensor::kBias)[group.bias_index], group.bias_offset, {q.n});
  }
  return out;
}

// --- The weight-quant path's 8-bit x kernels --------------------------------

// The weight-quant kernel family x's dtype selects (ops-transformer
// grouped_matmul_apt.cpp dispatches on ORIG_DTYPE_X): the A16 antiquant
// kernels, A8W4's vector-cube-vector kernel (int8 x) and MX-A8W4's
// (float8_e4m3fn x); a8w4_numerics.h has the facts of the latter two.
enum class WqKernel { kA16, kA8W4, kMxA8W4, kOther };

WqKernel WqKernelOf(const MatmulProblem& p) {
  switch (List(p, GroupedTensor::kX).dtype) {
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return WqKernel::kA16;
    case DataType::kInt8:
      return WqKernel::kA8W4;
    case DataType::kFloat8E4M3:
      return WqKernel::kMxA8W4;
    default:
      return WqKernel::kOther;
  }
}

// K per MX-A8W4 scale pair (two e8m0 codes of 32 each).
constexpr uint64_t kMxA8W4PairK = 64;

// Group `g`'s A8W4 operands: x's rows, the expert's int4 weight [k, n], its
// float16 antiquant scale rows [G, n] of [E, G, n], scale [E, n], the rows'
// per_token_scale of [M], the bias [E, n].
A8W4Operands A8W4GroupOperands(const MatmulProblem& p, const GmmGroups& groups, size_t g,
                               const Tensors& t) {
  const GmmGroup& group = groups.groups[g];
  const int64_t m = static_cast<int64_t>(group.m), k = static_cast<int64_t>(group.k),
                n = static_cast<int64_t>(group.n);
  A8W4Operands a;
  a.m = group.m;
  a.k = group.k;
  a.n = group.n;
  a.x = Slice(Single(t, GroupedTensor::kX), group.x_offset, {m, k}).bytes;
  a.weight = Slice(Inputs(t, GroupedTensor::kWeight)[group.w_index], group.w_offset, {k, n}).bytes;
  const HostTensor& antiquant = Single(t, GroupedTensor::kAntiquantScale);
  const int64_t rows = antiquant.shape[1];
  a.group_size = group.k / static_cast<uint64_t>(rows);
  a.antiquant_scale =
      Slice(antiquant, g * group.n * static_cast<uint64_t>(rows), {rows, n}).ToFloats();
  a.scale = Slice(Single(t, GroupedTensor::kScale), g * group.n, {n}).ToFloats();
  a.per_token_scale = Slice(Single(t, GroupedTensor::kPerTokenScale), group.c_row, {m}).ToFloats();
  if (groups.has_bias) {
    a.has_bias = true;
    a.bias =
        Slice(Inputs(t, GroupedTensor::kBias)[group.bias_index], group.bias_offset, {n}).ToFloats();
  }
  a.y_dtype = List(p, GroupedTensor::kY).dtype;
  return a;
}

// Group `g`'s MX-A8W4 operands: x's rows, the expert's transposed float4
// weight as [k, n], its e8m0 codes of [E, n, k / 64, 2] (a single-multi-
// single scale list: [n, k / 64, 2] per expert) and x's rows of [M, k / 64,
// 2], unpacked per 32 of K; the bias [E, n] (per expert [n]).
MxA8W4Operands MxA8W4GroupOperands(const MatmulProblem& p, const GmmGroups& groups, size_t g,
                                   const Tensors& t) {
  const GmmGroup& group = groups.groups[g];
  const uint64_t m = group.m, k = group.k, n = group.n;
  MxA8W4Operands a;
  a.m = m;
  a.k = k;
  a.n = n;
  a.x = Slice(Single(t, GroupedTensor::kX), group.x_offset,
              {static_cast<int64_t>(m), static_cast<int64_t>(k)})
            .bytes;
  a.weight =
      Matrix(Inputs(t, GroupedTensor::kWeight)[group.w_index], group.w_offset, k, n, true).bytes;
  const uint64_t kg = CeilDiv(k, kMxGroupSize), pairs = CeilDiv(k, kMxA8W4PairK);
  const std::vector<HostTensor>& scales = Inputs(t, GroupedTensor::kAntiquantScale);
  const bool scale_list = scales.size() > 1;
  const HostTensor& ws = scales[scale_list ? g : 0];
  const uint64_t first_col = scale_list ? 0 : g * n;
  const HostTensor& xs = Single(t, GroupedTensor::kPerTokenScale);
  a.weight_scale.resize(kg * n);
  a.x_scale.resize(m * kg);
  for (uint64_t j = 0; j < kg; ++j) {
    for (uint64_t col = 0; col < n; ++col) {
      const uint64_t at = ((first_col + col) * pairs + j / 2) * 2 + j % 2;
      a.weight_scale[j * n + col] =
          static_cast<uint8_t>(GetQuantCode(DataType::kFloat8E8M0, ws.bytes, at));
    }
    for (uint64_t i = 0; i < m; ++i) {
      const uint64_t at = ((group.c_row + i) * pairs + j / 2) * 2 + j % 2;
      a.x_scale[i * kg + j] =
          static_cast<uint8_t>(GetQuantCode(DataType::kFloat8E8M0, xs.bytes, at));
    }
  }
  if (groups.has_bias) {
    a.has_bias = true;
    a.bias_dtype = List(p, GroupedTensor::kBias).dtype;
    a.bias = Slice(Inputs(t, GroupedTensor::kBias)[group.bias_index], group.bias_offset,
                   {static_cast<int64_t>(n)})
                 .ToFloats();
  }
  a.y_dtype = List(p, GroupedTensor::kY).dtype;
  return a;
}

// Group `g`'s y (A8W4 / MX-A8W4), its reference and its bound.
struct EightBitGroup {
  std::vector<double> device, reference, bound;
};

absl::StatusOr<EightBitGroup> EightBitWeightQuantGroup(const MatmulProblem& p,
                                                       const GmmGroups& groups, size_t g,
                                                       const Tensors& t, bool with_device,
                                                       bool with_check) {
  EightBitGroup out;
  if (WqKernelOf(p) == WqKernel::kA8W4) {
    const A8W4Operands a = A8W4GroupOperands(p, groups, g, t);
    if (with_device) {
      ASSIGN_OR_RETURN(out.device, A8W4Device(a));
    }
    if (with_check) {
      ASSIGN_OR_RETURN(out.reference, A8W4Reference(a));
      ASSIGN_OR_RETURN(out.bound, A8W4ErrorBound(a));
    }
  } else {
    const MxA8W4Operands a = MxA8W4GroupOperands(p, groups, g, t);
    if (with_device) {
      ASSIGN_OR_RETURN(out.device, MxA8W4Device(a));
    }
    if (with_check) {
      ASSIGN_OR_RETURN(out.reference, MxA8W4Reference(a));
      ASSIGN_OR_RETURN(out.bound, MxA8W4ErrorBound(a));
    }
  }
  return out;
}

// `y` (one group's [m, n]) against `reference` under `bound`, element by
// element; an infinite bound (the kernel's result unspecified, or y's
// overflow) is skipped.
AccuracyReport CompareElements(const HostTensor& y, const std::vector<double>& reference,
                               const std::vector<double>& bound) {
  AccuracyReport r;
  r.passed = true;
  r.output_unit_roundoff = UnitRoundoff(y.dtype);
  bool have = false;
  for (uint64_t at = 0; at < reference.size(); ++at) {
    if (bound[at] == kInf) continue;
    const double device = y.Get(at);
    double error = std::fabs(device - reference[at]);
    if (std::isnan(error)) error = kInf;
    const double ratio = error == 0 ? 0 : (bound[at] > 0 ? error / bound[at] : kInf);
    if (!(error <= bound[at])) {
      r.passed = false;
      ++r.elements_over_bound;
    }
    r.max_abs_error = std::max(r.max_abs_error, error);
    if (std::fabs(reference[at]) >= 1) {
      r.max_rel_error = std::max(r.max_rel_error, error / std::fabs(reference[at]));
    }
    if (!have || ratio > r.worst_bound_ratio) {
      have = true;
      r.worst_bound_ratio = ratio;
      r.worst_index = at;
      r.error_bound = bound[at];
    }
  }
  return r;
}

// `list` holds `shapes.size()` tensors of `dtype` with those origin shapes;
// kInvalidArgument names the field and the kernel's rule otherwise.
absl::Status ExpectList(const MatmulProblem& p, GroupedTensor list, DataType dtype,
                        const std::vector<std::vector<int64_t>>& shapes, const std::string& rule) {
  const tiling::GroupedTensorList& spec = List(p, list);
  bool ok = spec.size() == shapes.size() && (shapes.empty() || spec.dtype == dtype);
  for (size_t i = 0; ok && i < shapes.size(); ++i) ok = spec.instances[i].origin == shapes[i];
  if (ok) return absl::OkStatus();
  std::string given = "no tensor";
  if (spec.present()) {
    given = absl::StrCat(spec.size(), " x ", std::string(tiling::DataTypeName(spec.dtype)), " ",
                         DimsText(spec.instances[0].origin));
  }
  return absl::InvalidArgumentError(absl::StrCat("grouped.", Name(list), ": ", given, "; ", rule));
}

// What the emulator takes of the A8W4 and MX-A8W4 kernels (the checks of
// CANN's infershape, grouped_matmul_infershape_weight_quant_checker.cpp,
// that the tiling does not make, and the dtypes of the ascend950 config).
absl::Status CheckEightBitWeightQuant(const MatmulProblem& p, const GmmGroups& groups) {
  const WqKernel kernel = WqKernelOf(p);
  const DataType w = List(p, GroupedTensor::kWeight).dtype;
  const DataType y = List(p, GroupedTensor::kY).dtype;
  const uint64_t e = groups.groups.size();
  const int64_t ei = static_cast<int64_t>(e);
  const int64_t mi = static_cast<int64_t>(groups.split_total);
  const GmmGroup& first = groups.groups[0];
  const int64_t k = static_cast<int64_t>(first.k), n = static_cast<int64_t>(first.n);
  const char* name = kernel == WqKernel::kA8W4 ? "A8W4" : "MX-A8W4";
  if (y != DataType::kFloat16 && y != DataType::kBFloat16) {
    return absl::UnimplementedError(
        absl::StrCat("grouped.y.dtype=", std::string(tiling::DataTypeName(y)), ": the ", name,
                     " kernel writes float16 or bfloat16"));
  }
  if (groups.group_type == tiling::kGroupTypeSplitK) {
    return absl::UnimplementedError(absl::StrCat(
        "grouped.group_type=2 (", groups.FormName(), "): the ", name,
        " kernel's controller (grouped_matmul_weight_quant_resplit_controller.h) reads every "
        "group_list value as the group's rows; the emulator models its split M"));
  }
  const bool form_ok = groups.group_type == tiling::kGroupTypeSplitM && groups.single_x &&
                       groups.single_y && (groups.single_w || kernel == WqKernel::kMxA8W4);
  if (!form_ok) {
    return absl::UnimplementedError(
        absl::StrCat("grouped.group_type=", groups.group_type, " (", groups.FormName(), "): the ",
                     name, " kernel runs split M with one x and one y (and one weight",
                     kernel == WqKernel::kMxA8W4 ? ", or one per expert)" : ")"));
  }
  if (List(p, GroupedTensor::kAntiquantOffset).present()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grouped.antiquant_offset: the ", name,
        " kernel takes none (CANN's infershape refuses it with an int8-int4 or fp8-fp4 pair)"));
  }
  const bool has_bias = List(p, GroupedTensor::kBias).present();
  if (kernel == WqKernel::kA8W4) {
    if (w != DataType::kInt4 || groups.trans_w) {
      return absl::UnimplementedError(absl::StrCat(
          "grouped.weight.dtype=", std::string(tiling::DataTypeName(w)),
          groups.trans_w ? " transposed" : "",
          ": the A8W4 kernel (S8S4_NZKN_G) reads an int4 weight [E, K, N], not transposed"));
    }
    const tiling::GroupedTensorList& antiquant = List(p, GroupedTensor::kAntiquantScale);
    if (antiquant.present() && antiquant.dtype != DataType::kFloat16) {
      return absl::UnimplementedError(absl::StrCat(
          "grouped.antiquant_scale.dtype=", std::string(tiling::DataTypeName(antiquant.dtype)),
          ": the A8W4 kernel on DAV_3510 reads float16 per-group scales (the ascend950 "
          "combinations of grouped_matmul_def.cpp); the emulator models those"));
    }
    const int64_t rows = antiquant.size() == 1 && antiquant.instances[0].origin.size() == 3
                             ? antiquant.instances[0].origin[1]
                             : 0;
    if (rows <= 0 || k % rows != 0) {
      return ExpectList(p, GroupedTensor::kAntiquantScale, DataType::kFloat16, {{ei, -1, n}},
                        "A8W4 takes one float16 [E, G, N] with G dividing K");
    }
    RETURN_IF_ERROR(ExpectList(p, GroupedTensor::kAntiquantScale, DataType::kFloat16,
                               {{ei, rows, n}}, "A8W4 takes one float16 [E, G, N]"));
    RETURN_IF_ERROR(ExpectList(p, GroupedTensor::kScale, DataType::kFloat32, {{ei, n}},
                               "A8W4 dequantizes y by one float32 [E, N] (required)"));
    RETURN_IF_ERROR(ExpectList(p, GroupedTensor::kPerTokenScale, DataType::kFloat32, {{mi}},
                               "A8W4 dequantizes y by one float32 [M] (required)"));
    if (has_bias) {
      RETURN_IF_ERROR(ExpectList(p, GroupedTensor::kBias, DataType::kFloat32, {{ei, n}},
                                 "A8W4 adds one float32 [E, N] on the vector cores"));
    }
    return absl::OkStatus();
  }
  // MX-A8W4.
  if (w != DataType::kFloat4E2M1 || !groups.trans_w) {
    return absl::UnimplementedError(absl::StrCat(
        "grouped.weight.dtype=", std::string(tiling::DataTypeName(w)),
        groups.trans_w ? "" : " not transposed",
        ": the MX-A8W4 kernel (MXA8W4_NZNK) reads a transposed float4_e2m1 weight [E, N, K]"));
  }
  if (k % static_cast<int64_t>(kMxA8W4PairK) != 0) {
    return absl::UnimplementedError(
        absl::StrCat("grouped.x: K=", k,
                     " is not a multiple of 64, so the MX-A8W4 scales [.., K / 64, 2] "
                     "do not cover its last 32-element blocks"));
  }
  const int64_t pairs = k / static_cast<int64_t>(kMxA8W4PairK);
  for (const GmmGroup& g : groups.groups) {
    if (static_cast<int64_t>(g.n) != n || static_cast<int64_t>(g.k) != k) {
      return absl::InvalidArgumentError(
          "grouped.weight: MX-A8W4's weights per expert must share K and N (CANN's infershape)");
    }
  }
  std::vector<std::vector<int64_t>> scale_shapes{{ei, n, pairs, 2}};
  std::vector<std::vector<int64_t>> bias_shapes{{ei, n}};
  if (!groups.single_w) {
    scale_shapes.assign(e, {n, pairs, 2});
    bias_shapes.assign(e, {n});
  }
  RETURN_IF_ERROR(ExpectList(p, GroupedTensor::kAntiquantScale, DataType::kFloat8E8M0, scale_shapes,
                             "MX-A8W4 takes float8_e8m0 [E, N, K / 64, 2] (single-multi-single: "
                             "[N, K / 64, 2] per expert)"));
  RETURN_IF_ERROR(ExpectList(p, GroupedTensor::kPerTokenScale, DataType::kFloat8E8M0,
                             {{mi, pairs, 2}},
                             "MX-A8W4 takes x's float8_e8m0 scale [M, K / 64, 2] (required)"));
  RETURN_IF_ERROR(ExpectList(p, GroupedTensor::kScale, DataType::kFloat32, {},
                             "MX-A8W4 takes no scale (CANN's infershape)"));
  if (has_bias) {
    RETURN_IF_ERROR(ExpectList(p, GroupedTensor::kBias, y, bias_shapes,
                               "MX-A8W4 adds a bias of y's dtype, [E, N] (single-multi-single: "
                               "[N] per expert)"));
  }
  return absl::OkStatus();
}

// --- The no-quant path -------------------------------------------------------

// Group `g` as a MatMulV3 matmul of its blocks.
WqGroup FloatGroup(const MatmulProblem& p, const GmmGroups& groups, size_t g, const Tensors& t) {
  const GmmGroup& group = groups.groups[g];
  WqGroup out;
  MatmulProblem& q = out.problem;
  q.m = static_cast<int64_t>(group.m);
  q.n = static_cast<int64_t>(group.n);
  q.k = static_cast<int64_t>(group.k);
  q.dtype_a = List(p, GroupedTensor::kX).dtype;
  q.dtype_b = List(p, GroupedTensor::kWeight).dtype;
  q.dtype_c = List(p, GroupedTensor::kY).dtype;
  q.trans_a = groups.trans_x;
  q.trans_b = groups.trans_w;
  q.has_bias = groups.has_bias;
  q.dtype_bias = List(p, GroupedTensor::kBias).dtype;
  const std::vector<int64_t> a = q.trans_a ? std::vector<int64_t>{q.k, q.m}
                                           : std::vector<int64_t>{q.m, q.k};
  const std::vector<int64_t> b = q.trans_b ? std::vector<int64_t>{q.n, q.k}
                                           : std::vector<int64_t>{q.k, q.n};
  out.tensors.a = Slice(Inputs(t, GroupedTensor::kX)[group.x_index], group.x_offset, a);
  out.tensors.b = Slice(Inputs(t, GroupedTensor::kWeight)[group.w_index], group.w_offset, b);
  if (q.has_bias) {
    out.tensors.bias =
        Slice(Inputs(t, GroupedTensor::kBias)[group.bias_index], group.bias_offset, {q.n});
  }
  return out;
}

// --- Random draws --------------------------------------------------------------

uint64_t Mix(uint64_t& state) {  // splitmix64
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double Uniform(uint64_t& state) {  // [0, 1), 53 bits
  return static_cast<double>(Mix(state) >> 11) * std::ldexp(1.0, -53);
}

double LargestMagnitude(DataType dtype) {
  absl::StatusOr<std::vector<double>> values = RepresentableValues(dtype);
  if (!values.ok() || values->empty()) return 1;
  return std::max(std::fabs(values->front()), std::fabs(values->back()));
}

void FillUniform(HostTensor& t, uint64_t& state, double scale) {
  for (uint64_t i = 0; i < t.elements(); ++i) {
    t.Set(i, static_cast<float>((2 * Uniform(state) - 1) * scale));
  }
}

void FillCodes(HostTensor& t, uint64_t& state) {
  absl::StatusOr<std::vector<uint8_t>> codes = DrawQuantValues(t.dtype, t.elements(), Mix(state));
  if (codes.ok() && codes->size() == t.bytes.size()) t.bytes = *std::move(codes);
}

// Scales of magnitude f * `magnitude`, f uniform in [1/2, 1): floats as
// their dtype rounds them, fixpipe words packed, e8m0 codes one of the eight
// powers of two at most the magnitude.
void FillScale(HostTensor& t, uint64_t& state, double magnitude) {
  for (uint64_t i = 0; i < t.elements(); ++i) {
    const double value = (0.5 + 0.5 * Uniform(state)) * magnitude;
    switch (t.dtype) {
      case DataType::kFloat8E8M0: {
        const int e = static_cast<int>(std::floor(std::log2(magnitude))) -
                      static_cast<int>(Mix(state) % 8);
        SetQuantCode(DataType::kFloat8E8M0, absl::MakeSpan(t.bytes), i,
                     static_cast<uint32_t>(std::clamp(e + 127, 0, 254)));
        break;
      }
      case DataType::kUint64:
      case DataType::kInt64: {
        const uint64_t word = PackFixpipeScale(static_cast<float>(value));
        std::memcpy(t.bytes.data() + 8 * i, &word, 8);
        break;
      }
      default:
        t.Set(i, static_cast<float>(value));
    }
  }
}

}  // namespace

absl::Status CheckGroupedModelled(const MatmulProblem& p) {
  ASSIGN_OR_RETURN(const GmmGroups groups, tiling::grouped::GroupsOf(p.grouped));
  const GmmPath path = tiling::grouped::PathOf(p.grouped);
  // The quant path's vector epilogue applies CANN's activations; the tiling
  // refuses an activation elsewhere, and an explicit tiling's may name any.
  const bool modelled_activation = p.grouped.act_type == 0 ||
                                   (path == GmmPath::kQuant &&
                                    ActivationOf(p.grouped.act_type) != QuantActivation::kNone);
  if (!modelled_activation) {
    return absl::UnimplementedError(absl::StrCat(
        "grouped.act_type=", p.grouped.act_type,
        ": the emulator models the quant path's activations 1 (relu), 2 (gelu_tanh), "
        "4 (fast_gelu) and 5 (silu)"));
  }
  const bool singles = groups.single_x && groups.single_w && groups.single_y;
  const DataType x = List(p, GroupedTensor::kX).dtype;
  const DataType w = List(p, GroupedTensor::kWeight).dtype;
  if (path == GmmPath::kQuant) {
    for (const auto& [dtype, field] : {std::pair{x, "grouped.x.dtype"},
                                       std::pair{w, "grouped.weight.dtype"}}) {
      if (!IsQuantElementType(dtype) || dtype == DataType::kInt32) {
        return absl::UnimplementedError(
            absl::StrCat(field, "=", std::string(tiling::DataTypeName(dtype)),
                         ": the emulator has no codec of it"));
      }
    }
    if (!List(p, GroupedTensor::kScale).present()) {
      return absl::UnimplementedError(
          "grouped.scale: the emulator models the quant path with the weight's scale given");
    }
    const bool mx = List(p, GroupedTensor::kScale).dtype == DataType::kFloat8E8M0;
    const bool split_ok = groups.group_type == tiling::kGroupTypeSplitM ||
                          (mx && groups.group_type == tiling::kGroupTypeSplitK && !groups.trans_w);
    if (!singles || !split_ok) {
      return absl::UnimplementedError(absl::StrCat(
          "grouped.group_type=", groups.group_type, " (", groups.FormName(),
          "): the emulator models the quant path's split M with single x, weight and y, and "
          "MX split K"));
    }
  }
  if (path == GmmPath::kWeightQuant) {
    const WqKernel kernel = WqKernelOf(p);
    if (kernel == WqKernel::kOther) {
      return absl::UnimplementedError(
          absl::StrCat("grouped.x.dtype=", std::string(tiling::DataTypeName(x)),
                       ": the emulator models the weight-quant path with float16 / bfloat16 "
                       "x, int8 x (A8W4) and float8_e4m3fn x (MX-A8W4)"));
    }
    if (!IsQuantElementType(w) || w == DataType::kInt32) {
      return absl::UnimplementedError(
          absl::StrCat("grouped.weight.dtype=", std::string(tiling::DataTypeName(w)),
                       ": the emulator has no codec of it"));
    }
    if (kernel != WqKernel::kA16) return CheckEightBitWeightQuant(p, groups);
    const tiling::GroupedTensorList& scale = List(p, GroupedTensor::kAntiquantScale);
    if (!scale.present() || (scale.size() != 1 && scale.size() != groups.groups.size())) {
      return absl::UnimplementedError(
          "grouped.antiquant_scale: the emulator models the weight-quant path with one antiquant "
          "scale tensor, or one per group");
    }
    if (groups.group_type == tiling::kGroupTypeSplitK || groups.trans_x) {
      return absl::UnimplementedError(absl::StrCat(
          "grouped.group_type=", groups.group_type, " (", groups.FormName(),
          "): the emulator models the weight-quant path's split M and no-split forms"));
    }
  }
  return absl::OkStatus();
}

OperandShapes GroupedShapes(const MatmulProblem& p) {
  OperandShapes shapes;
  absl::StatusOr<GmmGroups> groups = tiling::grouped::GroupsOf(p.grouped);
  if (!groups.ok()) return shapes;
  shapes.a = List(p, GroupedTensor::kX).instances[0].origin;
  shapes.b = List(p, GroupedTensor::kWeight).instances[0].origin;
  if (groups->has_bias) shapes.bias = List(p, GroupedTensor::kBias).instances[0].origin;
  const tiling::GroupedTensorList& y = List(p, GroupedTensor::kY);
  shapes.c = groups->single_y && y.present()
                 ? y.instances[0].origin
                 : std::vector<int64_t>{static_cast<int64_t>(groups->y_elements)};
  return shapes;
}

absl::Status CheckGroupedInputs(const MatmulProblem& p, const Tensors& t) {
  ASSIGN_OR_RETURN(const GmmGroups groups, tiling::grouped::GroupsOf(p.grouped));
  for (GroupedTensor list : kInputLists) {
    const tiling::GroupedTensorList& spec = List(p, list);
    const std::vector<HostTensor>& given = Inputs(t, list);
    if (given.size() != spec.size()) {
      return absl::InvalidArgumentError(absl::StrCat("grouped.", Name(list), ": ", given.size(),
                                                     " tensors given, the problem's list has ",
                                                     spec.size()));
    }
    for (size_t i = 0; i < given.size(); ++i) {
      const HostTensor& tensor = given[i];
      const std::string at = absl::StrCat("grouped.", Name(list), "[", i, "]");
      if (tensor.dtype != spec.dtype || tensor.shape != spec.instances[i].origin) {
        return absl::InvalidArgumentError(
            absl::StrCat(at, ": ", std::string(tiling::DataTypeName(tensor.dtype)), " ",
                         DimsText(tensor.shape), ", expected ",
                         std::string(tiling::DataTypeName(spec.dtype)), " ",
                         DimsText(spec.instances[i].origin)));
      }
      if (tensor.bytes.size() != tiling::DataTypeBytesOf(spec.dtype, tensor.elements())) {
        return absl::InvalidArgumentError(
            absl::StrCat(at, ": ", tensor.bytes.size(), " bytes, expected ",
                         tiling::DataTypeBytesOf(spec.dtype, tensor.elements())));
      }
    }
  }
  // group_list, when given, is the runtime split: it must be the histogram.
  const std::vector<HostTensor>& group_list = Inputs(t, GroupedTensor::kGroupList);
  if (!group_list.empty()) {
    const HostTensor& list = group_list[0];
    const bool split = groups.group_type != tiling::kGroupTypeNone;
    if (group_list.size() != 1 || list.dtype != DataType::kInt64 || !split ||
        list.elements() != groups.histogram.size() || list.bytes.size() != 8 * list.elements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "grouped.group_list: one int64 tensor of the ", groups.histogram.size(),
          " group sizes, and only for a split problem"));
    }
    int64_t sum = 0;
    for (size_t e = 0; e < groups.histogram.size(); ++e) {
      int64_t value = 0;
      std::memcpy(&value, list.bytes.data() + 8 * e, 8);
      sum += groups.histogram[e];
      const int64_t want =
          p.grouped.group_list_type == tiling::kGroupListCumulative ? sum : groups.histogram[e];
      if (value != want) {
        return absl::InvalidArgumentError(
            absl::StrCat("grouped.group_list[", e, "]=", value, ", but the token histogram (",
                         std::string(tiling::grouped::HistogramSourceName(groups.source)),
                         ") gives ", want));
      }
    }
  }
  if (!Inputs(t, GroupedTensor::kY).empty()) {
    return absl::InvalidArgumentError("grouped.y: the output is not an input");
  }
  if (!t.a.bytes.empty() || !t.b.bytes.empty() || t.bias || t.x3 || t.scale ||
      t.pertoken_scale || t.offset) {
    return absl::InvalidArgumentError(
        "GroupedMatmul's tensors are its lists (inputs.grouped); a, b, bias, x3, scale, "
        "pertoken_scale and offset must be empty");
  }
  return absl::OkStatus();
}

Tensors RandomGroupedInputs(const MatmulProblem& p, uint64_t seed) {
  uint64_t state = seed ^ 0x47524F5550454400ull;  // "GROUPED"
  Tensors t;
  absl::StatusOr<GmmGroups> groups = tiling::grouped::GroupsOf(p.grouped);
  const GmmPath path = tiling::grouped::PathOf(p.grouped);
  uint64_t k = 1;
  if (groups.ok()) {
    for (const GmmGroup& g : groups->groups) k = std::max(k, g.k);
  }
  const DataType y = List(p, GroupedTensor::kY).dtype;
  const double max_x = path == GmmPath::kQuant ? LargestMagnitude(List(p, GroupedTensor::kX).dtype)
                                               : 1.0;
  const double max_w = path == GmmPath::kNoQuant
                           ? 1.0
                           : LargestMagnitude(List(p, GroupedTensor::kWeight).dtype);
  // RandomQuantInputs()' magnitudes: |y| below about 2^14 (int8: 2^7 with
  // S = sqrt(k), its saturation being modelled).
  const bool int8_y = y == DataType::kInt8;
  const double target = int8_y ? 128.0 : 16384.0;
  const double spread = int8_y ? std::sqrt(static_cast<double>(k)) : static_cast<double>(k);
  const bool has_x_scale = List(p, GroupedTensor::kPerTokenScale).present();
  // The 8-bit x weight-quant kernels: A8W4's group scales are small integers
  // (the int4 weight widens exactly to int8) and its scale keeps
  // |x w8 scale| k within y's range; MX-A8W4's x scale brings x to [-1, 1].
  const WqKernel wq = path == GmmPath::kWeightQuant ? WqKernelOf(p) : WqKernel::kA16;
  const double max_x8 = LargestMagnitude(List(p, GroupedTensor::kX).dtype);
  for (GroupedTensor list : kInputLists) {
    const tiling::GroupedTensorList& spec = List(p, list);
    std::vector<HostTensor>& out = t.grouped[static_cast<size_t>(list)];
    for (const tiling::GroupedShape& shape : spec.instances) {
      HostTensor tensor = Empty(spec.dtype, shape.origin);
      const bool quantized = IsQuantElementType(spec.dtype) && spec.dtype != DataType::kInt32;
      switch (list) {
        case GroupedTensor::kX:
        case GroupedTensor::kWeight:
          if (quantized) {
            FillCodes(tensor, state);
          } else {
            FillUniform(tensor, state, 1.0);
          }
          break;
        case GroupedTensor::kBias:
          if (spec.dtype == DataType::kInt32) {
            for (uint64_t i = 0; i < tensor.elements(); ++i) {
              WriteI32(tensor, i, static_cast<int32_t>(Mix(state) % 2001) - 1000);
            }
          } else {
            FillUniform(tensor, state, 1.0);
          }
          break;
        case GroupedTensor::kPerTokenScale:
          FillScale(tensor, state, 1.0 / (wq == WqKernel::kMxA8W4 ? max_x8 : max_x));
          break;
        case GroupedTensor::kScale:
          if (wq == WqKernel::kA8W4) {
            FillScale(tensor, state, target / (static_cast<double>(k) * max_x8 * max_x8));
          } else {
            FillScale(tensor, state, target / (spread * max_w * (has_x_scale ? 1.0 : max_x)));
          }
          break;
        case GroupedTensor::kAntiquantScale:
          if (wq == WqKernel::kA8W4) {
            // 1 .. 16: int4 times it stays in [-128, 112].
            for (uint64_t i = 0; i < tensor.elements(); ++i) {
              tensor.Set(i, static_cast<float>(1 + Mix(state) % 16));
            }
          } else {
            FillScale(tensor, state, 1.0 / max_w);
          }
          break;
        case GroupedTensor::kAntiquantOffset:
          FillUniform(tensor, state, max_w / 8);
          break;
        case GroupedTensor::kOffset:
          // The int8 output's offset: checked, never read (the fixpipe word
          // carries it).
          break;
        default:
          break;
      }
      out.push_back(std::move(tensor));
    }
  }
  return t;
}

absl::StatusOr<HostTensor> RunGroupedNumerics(const tiling::Schedule& schedule,
                                              const tiling::TilingPlan& plan,
                                              const MatmulProblem& p, const Tensors& t,
                                              ThreadPool& pool,
                                              const std::atomic<bool>* cancelled) {
  RETURN_IF_ERROR(CheckGroupedModelled(p));
  RETURN_IF_ERROR(CheckGroupedInputs(p, t));
  RETURN_IF_ERROR(tiling::CheckScheduleCoverage(schedule, p));
  ASSIGN_OR_RETURN(const GmmGroups groups, tiling::grouped::GroupsOf(p.grouped));
  const GmmPath path = tiling::grouped::PathOf(p.grouped);
  const DataType y_dtype = List(p, GroupedTensor::kY).dtype;
  HostTensor y = Empty(y_dtype, GroupedShapes(p).c);
  const std::vector<uint64_t> offsets = COffsets(groups);
  const QuantModes modes = ModesOf(p, groups);
  for (size_t g = 0; g < groups.groups.size(); ++g) {
    if (cancelled != nullptr && cancelled->load()) {
      return absl::CancelledError("emulation cancelled during the grouped numerics");
    }
    const GmmGroup& group = groups.groups[g];
    // A group of k 0 (or no rows / columns) keeps its zeros.
    if (!group.computed()) continue;
    const tiling::Schedule local = GroupSchedule(schedule, group, static_cast<uint32_t>(g));
    HostTensor c;
    switch (path) {
      case GmmPath::kNoQuant: {
        WqGroup f = FloatGroup(p, groups, g, t);
        c = HostTensor::Zeros(y_dtype, {f.problem.m, f.problem.n});
        RETURN_IF_ERROR(RunNumerics(local, f.problem, f.tensors.a, f.tensors.b,
                                    f.tensors.bias ? &*f.tensors.bias : nullptr, pool, cancelled,
                                    c));
        break;
      }
      case GmmPath::kQuant: {
        ASSIGN_OR_RETURN(const QuantOperands op, QuantGroupOperands(p, groups, modes, g, t));
        ASSIGN_OR_RETURN(const QuantPath qpath, ClassifyQuantPath(op));
        RETURN_IF_ERROR(CheckQuantKernel(plan, qpath));
        ASSIGN_OR_RETURN(const std::vector<double> device, QuantMatmulDevice(op));
        c = Empty(y_dtype, {static_cast<int64_t>(group.m), static_cast<int64_t>(group.n)});
        // Each unit writes its rectangle; the values do not depend on the
        // tiling (quant_numerics.h).
        for (const tiling::WorkUnit& unit : local.units) {
          for (uint64_t i = unit.m.begin; i < unit.m.end; ++i) {
            for (uint64_t j = unit.n.begin; j < unit.n.end; ++j) {
              StoreY(c, i * group.n + j, device[i * group.n + j]);
            }
          }
        }
        break;
      }
      case GmmPath::kWeightQuant: {
        if (WqKernelOf(p) != WqKernel::kA16) {
          ASSIGN_OR_RETURN(const EightBitGroup eight,
                           EightBitWeightQuantGroup(p, groups, g, t, true, false));
          c = Empty(y_dtype, {static_cast<int64_t>(group.m), static_cast<int64_t>(group.n)});
          // Each unit writes its rectangle; the values do not depend on the
          // tiling (the int32 sum is exact, the MX sum runs in K order).
          for (const tiling::WorkUnit& unit : local.units) {
            for (uint64_t i = unit.m.begin; i < unit.m.end; ++i) {
              for (uint64_t j = unit.n.begin; j < unit.n.end; ++j) {
                StoreY(c, i * group.n + j, eight.device[i * group.n + j]);
              }
            }
          }
          break;
        }
        ASSIGN_OR_RETURN(WqGroup q, WeightQuantGroup(p, groups, g, t));
        absl::StatusOr<HostTensor> result =
            RunWeightQuantNumerics(local, q.problem, q.tensors, pool, cancelled);
        if (!result.ok()) {
          if (result.status().code() == absl::StatusCode::kInvalidArgument) {
            return absl::UnimplementedError(
                absl::StrCat("group ", g, ": the weight-quant numerics do not take its operands: ",
                             result.status().message()));
          }
          return result.status();
        }
        c = *std::move(result);
        break;
      }
      case GmmPath::kPreArch35:
        return absl::InvalidArgumentError("GroupedMatmul's pre-arch35 path has no kernel here");
    }
    for (uint64_t i = 0; i < c.elements(); ++i) CopyRaw(c, i, y, offsets[g] + i);
  }
  return y;
}

absl::StatusOr<AccuracyReport> CheckGroupedAccuracy(const MatmulProblem& p, const Tensors& t,
                                                    const HostTensor& c, int threads,
                                                    const std::atomic<bool>* cancelled) {
  RETURN_IF_ERROR(CheckGroupedModelled(p));
  RETURN_IF_ERROR(CheckGroupedInputs(p, t));
  ASSIGN_OR_RETURN(const GmmGroups groups, tiling::grouped::GroupsOf(p.grouped));
  const DataType y_dtype = List(p, GroupedTensor::kY).dtype;
  if (c.dtype != y_dtype || c.shape != GroupedShapes(p).c) {
    return absl::InvalidArgumentError(absl::StrCat("c: ", DimsText(c.shape), ", expected y ",
                                                   DimsText(GroupedShapes(p).c)));
  }
  const GmmPath path = tiling::grouped::PathOf(p.grouped);
  const std::vector<uint64_t> offsets = COffsets(groups);
  const QuantModes modes = ModesOf(p, groups);
  AccuracyReport merged;
  merged.passed = true;
  merged.output_unit_roundoff =
      tiling::IsFloatMatmulType(y_dtype) ? UnitRoundoff(y_dtype) : 0.0;
  bool have_worst = false;
  auto merge = [&](const AccuracyReport& r, uint64_t offset) {
    merged.max_abs_error = std::max(merged.max_abs_error, r.max_abs_error);
    merged.max_rel_error = std::max(merged.max_rel_error, r.max_rel_error);
    merged.elements_over_bound += r.elements_over_bound;
    merged.passed = merged.passed && r.passed;
    merged.accumulation_unit_roundoff = r.accumulation_unit_roundoff;
    if (merged.bound_rule.empty()) merged.bound_rule = r.bound_rule;
    if (!have_worst || r.worst_bound_ratio > merged.worst_bound_ratio) {
      have_worst = true;
      merged.worst_bound_ratio = r.worst_bound_ratio;
      merged.error_bound = r.error_bound;
      merged.worst_index = offset + r.worst_index;
    }
  };
  for (size_t g = 0; g < groups.groups.size(); ++g) {
    const GmmGroup& group = groups.groups[g];
    if (group.m == 0 || group.n == 0) continue;
    const std::vector<int64_t> shape{static_cast<int64_t>(group.m),
                                     static_cast<int64_t>(group.n)};
    const HostTensor cg = Slice(c, offsets[g], shape);
    if (group.k == 0) {
      // The zero fill: exactly zero.
      AccuracyReport r;
      r.passed = true;
      for (uint64_t i = 0; i < cg.elements(); ++i) {
        const double error = std::fabs(LoadY(cg, i));
        r.max_abs_error = std::max(r.max_abs_error, error);
        if (!(error == 0)) {
          r.passed = false;
          ++r.elements_over_bound;
          r.worst_bound_ratio = kInf;
          r.worst_index = i;
        }
      }
      merge(r, offsets[g]);
      continue;
    }
    switch (path) {
      case GmmPath::kNoQuant: {
        WqGroup f = FloatGroup(p, groups, g, t);
        ASSIGN_OR_RETURN(AccuracyReport r,
                         CompareWithReference(f.problem, f.tensors, cg, threads, cancelled));
        r.bound_rule = absl::StrCat(
            "per expert, MatMulV3's float bound: u_out |ref| + 2 (k + 2) u_acc (sum |x w| + "
            "|bias|) + the smallest subnormal of y, u_out = ",
            r.output_unit_roundoff, ", u_acc = ", r.accumulation_unit_roundoff);
        merge(r, offsets[g]);
        break;
      }
      case GmmPath::kWeightQuant: {
        if (WqKernelOf(p) != WqKernel::kA16) {
          ASSIGN_OR_RETURN(const EightBitGroup eight,
                           EightBitWeightQuantGroup(p, groups, g, t, false, true));
          AccuracyReport r = CompareElements(cg, eight.reference, eight.bound);
          const bool a8w4 = WqKernelOf(p) == WqKernel::kA8W4;
          r.accumulation_unit_roundoff = a8w4 ? 0.0 : kAccumulationUnitRoundoff;
          r.bound_rule =
              a8w4 ? "A8W4: per expert, A8W4ErrorBound() (a8w4_numerics.h: the int4 weight "
                     "widened to int8 by its float16 group scale, exact when w * s is an "
                     "integer, else 1/2 + 2^-11 |w s| per element; the int32 sum; the vector "
                     "epilogue's fp32 * scale, * per_token_scale, + bias; the cast)"
                   : "MX-A8W4: per expert, MxA8W4ErrorBound() (a8w4_numerics.h: the float4 "
                     "weight as float8 times 2^-6 and the bias times 2^-6, the MX blocks' "
                     "fp32 sum within gamma_{32 + blocks}, the fixpipe's exact * 64, the cast)";
          merge(r, offsets[g]);
          break;
        }
        ASSIGN_OR_RETURN(WqGroup q, WeightQuantGroup(p, groups, g, t));
        ASSIGN_OR_RETURN(const AccuracyReport r,
                         CheckWeightQuantAccuracy(q.problem, q.tensors, cg));
        merge(r, offsets[g]);
        break;
      }
      case GmmPath::kQuant: {
        ASSIGN_OR_RETURN(const QuantOperands op, QuantGroupOperands(p, groups, modes, g, t));
        ASSIGN_OR_RETURN(const QuantPath qpath, ClassifyQuantPath(op));
        ASSIGN_OR_RETURN(const std::vector<double> reference, QuantMatmulReference(op));
        ASSIGN_OR_RETURN(const std::vector<double> bound, QuantMatmulErrorBound(op));
        AccuracyReport r;
        r.passed = true;
        bool have = false;
        for (uint64_t i = 0; i < group.m; ++i) {
          for (uint64_t j = 0; j < group.n; ++j) {
            const uint64_t at = i * group.n + j;
            if (bound[at] == kInf) continue;  // the output may overflow there
            const double device = LoadY(cg, at);
            const double expected = ToOutputRange(op, j, reference[at]);
            double error = std::fabs(device - expected);
            if (std::isnan(device) && std::isnan(expected)) error = 0;
            if (std::isnan(error)) error = kInf;
            const double ratio = error == 0 ? 0 : (bound[at] > 0 ? error / bound[at] : kInf);
            if (!(error <= bound[at])) {
              r.passed = false;
              ++r.elements_over_bound;
            }
            r.max_abs_error = std::max(r.max_abs_error, error);
            if (std::fabs(expected) >= 1) {
              r.max_rel_error = std::max(r.max_rel_error, error / std::fabs(expected));
            }
            if (!have || ratio > r.worst_bound_ratio) {
              have = true;
              r.worst_bound_ratio = ratio;
              r.worst_index = at;
              r.error_bound = bound[at];
            }
          }
        }
        const bool integer_sums = op.x1_dtype == DataType::kInt8 || op.x1_dtype == DataType::kInt4;
        r.accumulation_unit_roundoff = integer_sums ? 0.0 : kAccumulationUnitRoundoff;
        r.bound_rule = absl::StrCat(
            QuantPathName(qpath),
            ": per expert, QuantMatmulErrorBound() of its operands (quant_numerics.h: the sum "
            "exact in int32 or within gamma_k in fp32, each fp32 dequantization step, the "
            "fixpipe's fp19 scale, the output cast)");
        merge(r, offsets[g]);
        break;
      }
      case GmmPath::kPreArch35:
        return absl::InvalidArgumentError("GroupedMatmul's pre-arch35 path has no kernel here");
    }
  }
  if (!merged.bound_rule.empty()) {
    merged.bound_rule = absl::StrCat("GroupedMatmul ", std::string(tiling::grouped::GmmPathName(path)),
                                     ", every expert: ", merged.bound_rule);
  }
  return merged;
}

GroupedElement GroupedElementOf(const MatmulProblem& p, uint64_t index) {
  GroupedElement out;
  absl::StatusOr<GmmGroups> groups = tiling::grouped::GroupsOf(p.grouped);
  if (!groups.ok()) return out;
  uint64_t at = 0;
  for (size_t g = 0; g < groups->groups.size(); ++g) {
    const GmmGroup& group = groups->groups[g];
    const uint64_t size = group.m * group.n;
    if (index < at + size) {
      out.group = g;
      out.row = (index - at) / group.n;
      out.col = (index - at) % group.n;
      return out;
    }
    at += size;
  }
  return out;
}

MatmulProblem GroupedTimedProblem(const MatmulProblem& p) {
  MatmulProblem timed = p;
  absl::StatusOr<GmmGroups> groups = tiling::grouped::GroupsOf(p.grouped);
  if (!groups.ok()) return timed;
  uint64_t k = 0;
  for (const GmmGroup& g : groups->groups) k = std::max(k, g.k);
  timed.m = static_cast<int64_t>(groups->stacked_rows);
  timed.n = static_cast<int64_t>(groups->max_n);
  timed.k = static_cast<int64_t>(k);
  timed.dtype_a = List(p, GroupedTensor::kX).dtype;
  timed.dtype_b = List(p, GroupedTensor::kWeight).dtype;
  timed.dtype_c = List(p, GroupedTensor::kY).dtype;
  timed.trans_a = groups->trans_x;
  timed.trans_b = groups->trans_w;
  timed.has_bias = groups->has_bias;
  timed.dtype_bias = List(p, GroupedTensor::kBias).dtype;
  timed.format_b = List(p, GroupedTensor::kWeight).format;
  return timed;
}

tiling::Schedule GroupedL2View(const tiling::Schedule& schedule) {
  tiling::Schedule view = schedule;
  for (tiling::WorkUnit& unit : view.units) {
    const uint64_t shift = uint64_t{unit.batch} << 32;
    unit.n = {unit.n.begin + shift, unit.n.end + shift};
    unit.batch = 0;
  }
  view.batch = 1;
  return view;
}

uint64_t GroupedUsefulMacs(const MatmulProblem& p) {
  absl::StatusOr<GmmGroups> groups = tiling::grouped::GroupsOf(p.grouped);
  if (!groups.ok()) return 0;
  uint64_t macs = 0;
  for (const GmmGroup& g : groups->groups) macs += g.m * g.n * g.k;
  return macs;
}

std::string GroupedNote(const MatmulProblem& p) {
  absl::StatusOr<GmmGroups> groups = tiling::grouped::GroupsOf(p.grouped);
  return groups.ok() ? groups->Describe() : std::string();
}

}  // namespace npu::emu
