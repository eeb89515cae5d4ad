// Value types shared by the tiling engine, the emulator and the service.
//
// This is the bottom layer (`npu_tiling_types`): plain data describing a
// matrix-multiplication problem, the chip it runs on, and the plan the tiling
// engine chooses for it. Nothing here knows about gRPC, protobuf, Prometheus,
// threads or clocks.
//
// Vocabulary used across the tree:
//   * base block   - one L0 tile, base_m x base_n output elements, base_k deep.
//   * work unit    - what one core does in one round (a base block, or a
//                    k-slice of it under Stream-K).
//   * core         - an AIC (cube) or AIV (vector) core of the chip.
//   * CANN names   - the wire API also carries CANN's own identifiers (tiling
//                    key, model / full-load / l0c2out names, tiling-data field
//                    names) so users can compare our answers with CANN's.
#ifndef NPU_SERVER_TILING_TYPES_H_
#define NPU_SERVER_TILING_TYPES_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/tiling/lazy_text.h"

namespace npu::tiling {

// Element types. The float matmuls take the first three; the quantized
// matmul (QuantBatchMatmulV3) takes the 8- and 4-bit inputs, and scales,
// biases and outputs of the others.
enum class DataType {
  kFloat16,
  kBFloat16,
  kFloat32,
  kInt8,
  kInt4,
  kFloat8E4M3,  // float8_e4m3fn
  kFloat8E5M2,
  kHiFloat8,
  kFloat4E2M1,
  kFloat8E8M0,  // MX block scales: a power of two
  kInt32,
  kInt64,
  kUint64,  // packed dequantization scales
  // float4_e1m2: GroupedMatmul's quant path names it among the 4-bit x
  // types its dispatch sends to the quant strategies.
  kFloat4E1M2,
};
// Every DataType, in enum order.
inline constexpr DataType kAllDataTypes[] = {
    DataType::kFloat16,    DataType::kBFloat16,   DataType::kFloat32,    DataType::kInt8,
    DataType::kInt4,       DataType::kFloat8E4M3, DataType::kFloat8E5M2, DataType::kHiFloat8,
    DataType::kFloat4E2M1, DataType::kFloat8E8M0, DataType::kInt32,      DataType::kInt64,
    DataType::kUint64,     DataType::kFloat4E1M2};
// float16, bfloat16 or float32: the float matmuls' types.
inline bool IsFloatMatmulType(DataType dtype) {
  return dtype == DataType::kFloat16 || dtype == DataType::kBFloat16 || dtype == DataType::kFloat32;
}
enum class Format { kNd, kFractalNz };

// Bits per element of `dtype`: the one size table. Sub-byte element types
// (int4, fp4) have a seat here; every buffer size is computed from it.
// Inline: the engine reads it several times per decision.
constexpr uint32_t DataTypeBits(DataType dtype) {
  switch (dtype) {
    case DataType::kInt4:
    case DataType::kFloat4E2M1:
    case DataType::kFloat4E1M2:
      return 4;
    case DataType::kInt8:
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
    case DataType::kHiFloat8:
    case DataType::kFloat8E8M0:
      return 8;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 16;
    case DataType::kFloat32:
    case DataType::kInt32:
      return 32;
    case DataType::kInt64:
    case DataType::kUint64:
      return 64;
  }
  return 0;
}
// Bytes per element of `dtype`, for the whole-byte types (every DataType
// but int4 and fp4): DataTypeBits() / 8.
constexpr uint64_t DataTypeBytes(DataType dtype) { return DataTypeBits(dtype) / 8; }
// Bytes `elements` elements of `dtype` occupy, packed (rounded up to a whole
// byte for a sub-byte type).
constexpr uint64_t DataTypeBytesOf(DataType dtype, uint64_t elements) {
  return (elements * DataTypeBits(dtype) + 7) / 8;
}
// Lower-case wire name: "float16", "bfloat16", "float32", "int8",
// "float8_e4m3fn"...
std::string_view DataTypeName(DataType dtype);
absl::StatusOr<DataType> ParseDataType(std::string_view name);
// "ND" or "FRACTAL_NZ".
std::string_view FormatName(Format format);
absl::StatusOr<Format> ParseFormat(std::string_view name);

// A non-contiguous view of A whose storage is one-dimensional (CANN's
// "createView with TensorV2"). Rank 2: A is [m, k] with row stride
// `row_stride`. Rank 3: A is [batch, m / batch, k]; rows of one batch are
// `row_stride` apart and batches `batch_stride` apart. Only un-transposed A
// supports it, as in CANN.
struct SliceView {
  bool enabled = false;
  int rank = 3;
  int64_t batch = 1;         // rank 3 only
  int64_t batch_stride = 0;  // elements between batches (rank 3)
  int64_t row_stride = 0;    // elements between rows
};

// The CANN operator a problem is tiled for. Each has its own registry of
// strategies, input rules and tiling-key layout.
enum class MatmulOp : uint8_t {
  kMatMulV3 = 0,                  // one 2-D matmul
  kBatchMatMulV3 = 1,             // batched A and B with NumPy broadcast of the batch dims
  kFusedMatMul = 2,               // a matmul and its epilogue (FusedOp)
  kQuantBatchMatmulV3 = 3,        // 8- / 4-bit inputs with dequantization scales
  kWeightQuantBatchMatmulV2 = 4,  // float x, 8- / 4-bit weight dequantized on the vector cores
  // y = permute(x1) @ permute(x2) over 3-D tensors, y written back permuted
  // (MLA's absorbed per-head projections)
  kTransposeBatchMatMul = 5,
  kTransposeQuantBatchMatMul = 6,  // the same with float8 / hifloat8 inputs and scales
  // E experts' matmuls y_e = x_e * W_e over tensor lists (the MoE expert
  // matmul); its inputs are MatmulProblem::grouped alone
  kGroupedMatmul = 7,
};
// Every operator, in enum order (an index of per-operator tables).
inline constexpr MatmulOp kAllMatmulOps[] = {
    MatmulOp::kMatMulV3,           MatmulOp::kBatchMatMulV3,
    MatmulOp::kFusedMatMul,        MatmulOp::kQuantBatchMatmulV3,
    MatmulOp::kWeightQuantBatchMatmulV2, MatmulOp::kTransposeBatchMatMul,
    MatmulOp::kTransposeQuantBatchMatMul, MatmulOp::kGroupedMatmul};
inline constexpr int kMatmulOpCount = static_cast<int>(sizeof(kAllMatmulOps) / sizeof(MatmulOp));
// CANN's op type names: "MatMulV3", "BatchMatMulV3", "FusedMatMul"...
std::string_view MatmulOpName(MatmulOp op);
// Accepts CANN's names and the wire spellings "matmul_v3",
// "batch_matmul_v3", "fused_matmul".
absl::StatusOr<MatmulOp> ParseMatmulOp(std::string_view name);

// FusedMatMul's epilogue (CANN's fused_op_type). The value is the OPTYPE
// nibble of FusedMatMul's tiling key.
enum class FusedOp : uint8_t {
  kNone = 0,
  kAdd = 1,         // C + x3
  kMul = 2,         // C * x3
  kGeluErf = 3,     // GELU, erf form
  kGeluTanh = 4,    // GELU, tanh approximation
  kRelu = 5,        // max(C, 0)
  kCast16To32 = 6,  // 16-bit inputs, float32 output
};
// What an epilogue is, as the strategies, validation, the kernel type, the
// advisor and the emulator read it: the one table of those facts (CANN's
// fused_matmul_builtin_tiling.cpp and fused_mat_mul_tilingkey.h).
struct EpilogueTraits {
  bool reads_x3 = false;         // ADD, MUL: a second operand x3 of C's shape
  bool gelu = false;             // GELU_ERF, GELU_TANH: 2-D float16 / bfloat16 only, no bias
  bool on_vector_cores = false;  // the AIVs apply it, so the kernel is mixed (MIX_AIC_1_2)
  bool batched = false;          // the batched strategies (..._INHERITED_FROM_BMMV3) take it
};
constexpr EpilogueTraits TraitsOf(FusedOp op) {
  switch (op) {
    case FusedOp::kNone:
    case FusedOp::kRelu:
      return {false, false, false, true};
    case FusedOp::kAdd:
    case FusedOp::kMul:
      return {true, false, true, true};
    case FusedOp::kGeluErf:
    case FusedOp::kGeluTanh:
      return {false, true, true, false};
    case FusedOp::kCast16To32:
      return {false, false, false, false};
  }
  return {};
}
// CANN's attribute values: "", "add", "mul", "gelu_erf", "gelu_tanh", "relu",
// "16cast32".
std::string_view FusedOpName(FusedOp op);
// The key's names: "NONE", "ADD", "MUL", "GELU_ERF", "GELU_TANH", "RELU",
// "16CAST32".
std::string_view FusedOpKeyName(FusedOp op);
// Accepts the attribute values ("none" for "") and the key's names.
absl::StatusOr<FusedOp> ParseFusedOp(std::string_view name);

// One matrix multiplication C[m, n] = A[m, k] * B[k, n] (+ bias[n]); m, n and k
// are the sizes after the transposes are applied. BatchMatMulV3 and
// FusedMatMul problems add batch dims (one such matmul per batch) and
// FusedMatMul an epilogue.
// The batch attributes of a problem (BatchMatMulV3, FusedMatMul).
struct BatchDims {
  // Batch dims of A, B and C, outermost first (at most 4 each); empty for a
  // 2-D operand. An empty `c` of a batched problem means the broadcast of
  // `a` and `b`.
  std::vector<int64_t> a, b, c;
  // BatchMatMulV3: batch dims of a bias of rank above 2 (one bias row per
  // batch); empty for a bias shared by every batch.
  std::vector<int64_t> bias;
  // BatchMatMulV3: A (B) is a transposed non-contiguous view, a 3-D operand
  // stored [rows, batch, cols] and viewed [batch, rows, cols] (CANN's {1, 0, 2}
  // permuted view).
  bool a_interleaved = false;
  bool b_interleaved = false;

  bool IsDefault() const {
    return a.empty() && b.empty() && c.empty() && bias.empty() && !a_interleaved && !b_interleaved;
  }
  bool operator==(const BatchDims& o) const {
    return a == o.a && b == o.b && c == o.c && bias == o.bias && a_interleaved == o.a_interleaved &&
           b_interleaved == o.b_interleaved;
  }
  bool operator!=(const BatchDims& o) const { return !(*this == o); }
};

// FusedMatMul's epilogue: the operation, the shape of its extra operand x3
// for add and mul ([m, n] or [b, m, n]; empty means [m, n]) and CANN's
// inner_precise (0 high precision, 1 high performance).
struct FusedEpilogue {
  FusedOp op = FusedOp::kNone;
  std::vector<int64_t> x3_shape;
  int inner_precise = 0;

  bool IsDefault() const { return op == FusedOp::kNone && x3_shape.empty() && inner_precise == 0; }
  bool operator==(const FusedEpilogue& o) const {
    return op == o.op && x3_shape == o.x3_shape && inner_precise == o.inner_precise;
  }
  bool operator!=(const FusedEpilogue& o) const { return !(*this == o); }
};

// One input of QuantBatchMatmulV3 beyond x1 and x2: present or not, its
// dtype and CANN's origin shape.
struct QuantTensorSpec {
  bool present = false;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;

  bool operator==(const QuantTensorSpec& o) const {
    return present == o.present && (!present || (dtype == o.dtype && shape == o.shape));
  }
  bool operator!=(const QuantTensorSpec& o) const { return !(*this == o); }
};

// QuantBatchMatmulV3's inputs beyond x1 (A) and x2 (B) and its attributes
// (the bias is the problem's has_bias / dtype_bias, shaped here). The quant
// mode is inferred from them, as CANN infers it.
struct QuantInputs {
  QuantTensorSpec scale;            // required
  QuantTensorSpec pertoken;         // optional: the per-token (x1) scale
  QuantTensorSpec offset;           // optional
  std::vector<int64_t> bias_shape;  // empty: [n]
  int64_t group_size_m = 0, group_size_n = 0, group_size_k = 0;
  // The runtime's asc-devkit has the Tensor API (version 9.1.0 or later).
  bool tensor_api = true;
  // WeightQuantBatchMatmulV2: the weight's dequantization scale (required)
  // and offset, the int8 output's quant scale and offset, and group_size.
  QuantTensorSpec antiquant_scale;
  QuantTensorSpec antiquant_offset;
  QuantTensorSpec quant_scale;
  QuantTensorSpec quant_offset;
  int64_t group_size = 0;

  bool IsDefault() const {
    return !scale.present && !pertoken.present && !offset.present && bias_shape.empty() &&
           group_size_m == 0 && group_size_n == 0 && group_size_k == 0 && tensor_api &&
           !antiquant_scale.present && !antiquant_offset.present && !quant_scale.present &&
           !quant_offset.present && group_size == 0;
  }
  bool operator==(const QuantInputs& o) const {
    return scale == o.scale && pertoken == o.pertoken && offset == o.offset &&
           bias_shape == o.bias_shape && group_size_m == o.group_size_m &&
           group_size_n == o.group_size_n && group_size_k == o.group_size_k &&
           tensor_api == o.tensor_api && antiquant_scale == o.antiquant_scale &&
           antiquant_offset == o.antiquant_offset && quant_scale == o.quant_scale &&
           quant_offset == o.quant_offset && group_size == o.group_size;
  }
  bool operator!=(const QuantInputs& o) const { return !(*this == o); }
};

// TransposeBatchMatMul's and TransposeQuantBatchMatMul's attributes. Both
// compute y = permute(x1) @ permute(x2) over 3-D tensors that share one
// batch dim (in MLA models, the heads) and write y back permuted, so that no
// separate transpose runs. A perm reads a stored tensor as its logical one,
// logical[i] = stored[perm[i]], with x1 logical [batch, m, k], x2 [batch, k,
// n] and y [batch, m, n]; the problem's m, n and k are the logical sizes.
// perm_x1 [1, 0, 2] reads x1 stored [m, batch, k], perm_x2 [0, 2, 1] x2
// stored [batch, n, k], and perm_y [1, 0, 2] writes y as [m, batch, n]. The
// quantized op's x1 and x2 scales are the problem's quant.pertoken and
// quant.scale.
struct TransposeAttrs {
  // Each must have three entries (CANN's rule); which ones each op accepts
  // is its checker's (validate.cc).
  std::vector<int64_t> perm_x1, perm_x2, perm_y;
  // The batch of x1, x2 and y. CANN checks no lower bound: 0 is an input.
  int64_t batch = 1;
  // CANN's batch_split_factor attribute: y's batch is written in this many
  // parts (values below 1 mean 1); the batch must divide by it.
  int64_t batch_split_factor = 1;
  // TransposeBatchMatMul: the scale of an INT8 y, one 64-bit dequantization
  // word per (batch, n) column ([batch * n]); absent for a float y.
  QuantTensorSpec scale;

  bool IsDefault() const {
    return perm_x1.empty() && perm_x2.empty() && perm_y.empty() && batch == 1 &&
           batch_split_factor == 1 && !scale.present;
  }
  bool operator==(const TransposeAttrs& o) const {
    return perm_x1 == o.perm_x1 && perm_x2 == o.perm_x2 && perm_y == o.perm_y &&
           batch == o.batch && batch_split_factor == o.batch_split_factor && scale == o.scale;
  }
  bool operator!=(const TransposeAttrs& o) const { return !(*this == o); }
};

// GroupedMatmul's inputs. Each input of the op is a tensor list: no
// instance (the input is absent: the tiling sees neither a description nor
// a shape), one instance (a single tensor, e.g. x of all tokens [M, K] or
// the experts' weights [E, K, N]) or several (a list: one tensor per
// expert). A list has one dtype and one format; each instance has CANN's
// origin shape and its storage shape (they differ for FRACTAL_NZ).
struct GroupedShape {
  std::vector<int64_t> origin;
  std::vector<int64_t> storage;

  bool operator==(const GroupedShape& o) const {
    return origin == o.origin && storage == o.storage;
  }
  bool operator!=(const GroupedShape& o) const { return !(*this == o); }
};

struct GroupedTensorList {
  DataType dtype = DataType::kFloat16;
  Format format = Format::kNd;
  std::vector<GroupedShape> instances;

  bool present() const { return !instances.empty(); }
  size_t size() const { return instances.size(); }
  // An absent list's dtype and format mean nothing, so they do not count.
  bool operator==(const GroupedTensorList& o) const {
    return instances == o.instances &&
           (instances.empty() || (dtype == o.dtype && format == o.format));
  }
  bool operator!=(const GroupedTensorList& o) const { return !(*this == o); }
};

// The op's tensors in its IR order: the nine inputs, then the output y.
enum class GroupedTensor : uint8_t {
  kX = 0,
  kWeight = 1,
  kBias = 2,
  kScale = 3,
  kOffset = 4,
  kAntiquantScale = 5,
  kAntiquantOffset = 6,
  kGroupList = 7,
  kPerTokenScale = 8,
  kY = 9,
};
inline constexpr size_t kGroupedTensorCount = 10;
// "x", "weight", "bias", "scale", "offset", "antiquant_scale",
// "antiquant_offset", "group_list", "per_token_scale", "y": the IR names,
// which are also the wire's field names.
std::string_view GroupedTensorName(GroupedTensor tensor);

// CANN's group_type attribute: how the experts split the problem.
inline constexpr int64_t kGroupTypeNone = -1;   // no split: lists of x, weight and y
inline constexpr int64_t kGroupTypeSplitM = 0;  // x's rows belong to the experts
inline constexpr int64_t kGroupTypeSplitK = 2;  // x's and weight's K belong to the experts
// CANN's group_list_type attribute: how group_list's values count.
inline constexpr int64_t kGroupListCumulative = 0;
inline constexpr int64_t kGroupListCounts = 1;
inline constexpr int64_t kGroupListSparse = 2;

// GroupedMatmul's problem: its tensor lists and attributes, as CANN's
// tiling context holds them (the attributes in IR order). The problem's
// other fields (m, n, k, dtypes, transposes, formats, bias) are not read
// and stay at their defaults: every shape is here. The engine's paths
// (server/tiling/grouped/) check CANN's rules.
struct GroupedInputs {
  std::array<GroupedTensorList, kGroupedTensorCount> tensors;
  int64_t split_item = 0;
  int64_t dtype = 0;  // CANN's dtype attribute (the quant path's output type code)
  bool transpose_weight = false;
  bool transpose_x = false;
  int64_t group_type = kGroupTypeNone;
  int64_t group_list_type = kGroupListCumulative;
  int64_t act_type = 0;
  std::vector<int64_t> tuning_config;
  // The runtime token distribution: rows per expert (split M) or K per
  // group (split K), for Execute and timing. CANN's tiling reads only
  // group_list's length, never its values, so no plan depends on it: it is
  // left out of the decision cache's key (problem_key.cc) and of the
  // tiling. Empty: spread evenly.
  std::vector<int64_t> token_histogram;

  const GroupedTensorList& operator[](GroupedTensor t) const {
    return tensors[static_cast<size_t>(t)];
  }
  GroupedTensorList& operator[](GroupedTensor t) { return tensors[static_cast<size_t>(t)]; }

  bool IsDefault() const {
    for (const GroupedTensorList& list : tensors) {
      if (list.present()) return false;
    }
    return split_item == 0 && dtype == 0 && !transpose_weight && !transpose_x &&
           group_type == kGroupTypeNone && group_list_type == kGroupListCumulative &&
           act_type == 0 && tuning_config.empty() && token_histogram.empty();
  }
  // Everything but the histogram, which no tiling reads.
  bool SameTiling(const GroupedInputs& o) const {
    return tensors == o.tensors && split_item == o.split_item && dtype == o.dtype &&
           transpose_weight == o.transpose_weight && transpose_x == o.transpose_x &&
           group_type == o.group_type && group_list_type == o.group_list_type &&
           act_type == o.act_type && tuning_config == o.tuning_config;
  }
  bool operator==(const GroupedInputs& o) const {
    return SameTiling(o) && token_histogram == o.token_histogram;
  }
  bool operator!=(const GroupedInputs& o) const { return !(*this == o); }
};

struct MatmulProblem {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  DataType dtype_a = DataType::kFloat16;
  DataType dtype_b = DataType::kFloat16;
  DataType dtype_c = DataType::kFloat16;
  bool has_bias = false;
  DataType dtype_bias = DataType::kFloat16;
  bool trans_a = false;  // A is stored [k, m]
  bool trans_b = false;  // B is stored [n, k]
  Format format_a = Format::kNd;
  Format format_b = Format::kNd;
  Format format_c = Format::kNd;
  // Storage shape of B when format_b is FRACTAL_NZ: [..., d0, d1, d2, d3] with
  // d1 * d2 == align16(rows) and d0 * d3 == align(cols, 32 bytes). Empty means
  // the canonical NZ storage of B's shape.
  std::vector<int64_t> storage_shape_b;
  bool hf32 = false;                // opImplMode 0x40
  bool force_grp_acc_fp32 = false;  // opImplMode 0x4
  int deterministic_level = 0;      // 0..3; above 1 forbids cross-core K split
  bool avoid_tensor_api = false;    // offset_x == 0x80
  SliceView a_slice;                // MatMulV3 only

  MatmulOp op = MatmulOp::kMatMulV3;
  BatchDims batch;      // BatchMatMulV3 and FusedMatMul
  FusedEpilogue fused;  // FusedMatMul
  QuantInputs quant;    // QuantBatchMatmulV3, TransposeQuantBatchMatMul
  TransposeAttrs transpose;  // TransposeBatchMatMul, TransposeQuantBatchMatMul
  GroupedInputs grouped;     // GroupedMatmul: its whole problem

  // Whether the problem is exactly a MatMulV3 one as requests before the op
  // field existed could state it (every new field at its default).
  bool IsPlainMatMulV3() const {
    return op == MatmulOp::kMatMulV3 && batch.IsDefault() && fused.IsDefault() &&
           quant.IsDefault() && transpose.IsDefault() && grouped.IsDefault();
  }
};

// The product of `dims` (1 when empty).
uint64_t BatchProduct(const std::vector<int64_t>& dims);

// The chip's architecture (CANN's NpuArch). CANN's arch35 mat_mul_v3 tiling
// applies to DAV_3510 only; the emulator times both.
enum class NpuArch : uint8_t {
  kDav3510 = 0,  // Ascend 950PR / 950DT
  kDav2201 = 1,  // Atlas A2 (Ascend 910B) and A3
};
// "DAV_3510", "DAV_2201".
std::string_view NpuArchName(NpuArch arch);
absl::StatusOr<NpuArch> ParseNpuArch(std::string_view name);

// Hardware facts of one chip. Sizes are per core.
struct ChipSpec {
  std::string name;
  NpuArch npu_arch = NpuArch::kDav3510;
  uint32_t aic_num = 0;  // cube cores
  uint32_t aiv_num = 0;  // vector cores
  uint64_t l1_bytes = 0;
  uint64_t l0a_bytes = 0;
  uint64_t l0b_bytes = 0;
  uint64_t l0c_bytes = 0;
  uint64_t ub_bytes = 0;
  uint64_t l2_bytes = 0;  // chip-wide
  uint64_t bt_bytes = 0;  // bias table
  uint32_t cube_freq_mhz = 0;
  uint32_t ddr_bytes_per_cycle = 0;  // per cube core
  uint32_t l2_bytes_per_cycle = 0;   // per cube core
};

// Name of the embedded default platform.
inline constexpr std::string_view kDefaultPlatform = "ascend950pr";

// Every built-in platform profile, default first.
const std::vector<ChipSpec>& BuiltinPlatforms();
// The built-in profile called `name`, or kNotFound.
absl::StatusOr<ChipSpec> FindPlatform(std::string_view name);
// Checks every field of `chip` against the limits the engine relies on;
// kInvalidArgument names the field and the limit.
absl::Status ValidateChip(const ChipSpec& chip);

// ---------------------------------------------------------------------------
// Tiling key: CANN's bit fields, decoded.
enum class ApiLevel : uint8_t { kHigh = 0, kBasic = 1, kTensor = 2 };
enum class KernelModel : uint8_t {
  kBasic = 0,
  kStreamK = 1,
  kKEqualZero = 2,
  kToMul = 3,
  kToMultiMul = 4,
  kSlice = 5,
  kBasicSplitK = 6,
  kStreamKSplitK = 7,
};
enum class FullLoad : uint8_t { kNone = 0, kA = 1, kB = 2, kAB = 3 };
enum class L0cToOut : uint8_t { kOnTheFly = 0, kNdFixpipe1To1 = 1, kNdFixpipe1To2 = 2 };
// kMixed1To1: one AIV per AIC (GroupedMatmul's no-quant kernel with x
// transposed).
enum class KernelType { kAicOnly, kMixed1To2, kAivOnly, kMixed1To1 };

// CANN identifiers: "TENSOR_LEVEL", "STREAM_K", "A_FULL_LOAD", "ND_FIXPIPE_1_2"...
std::string_view ApiLevelName(ApiLevel level);
std::string_view KernelModelName(KernelModel model);
std::string_view FullLoadName(FullLoad full_load);
std::string_view L0cToOutName(L0cToOut out);
// "AIC_ONLY", "MIX_AIC_1_AIV_2", "AIV_ONLY", "MIX_AIC_1_AIV_1".
std::string_view KernelTypeName(KernelType type);

// How an op packs its tiling key. MatMulV3 and BatchMatMulV3 share one
// layout; FusedMatMul packs the transposes as one field and adds the
// epilogue and the inner precision; QuantBatchMatmulV3's 18-bit key is its
// own (transposes, batch mode, kernel type, API level), and so are
// WeightQuantBatchMatmulV2's 36 bits and the transposed batch matmuls' (the
// perms, the batch split and the API level or the precision mode).
enum class KeyLayout : uint8_t {
  kMatMul = 0,
  kFused = 1,
  kQuant = 2,
  kWeightQuant = 3,
  kTransposeBatch = 4,
  kTransposeQuant = 5,
  // GroupedMatmul's three paths, each its kernels' own template arguments.
  kGroupedNoQuant = 6,
  kGroupedQuant = 7,
  kGroupedWeightQuant = 8,
};
// The key layout of `op`.
KeyLayout KeyLayoutOf(MatmulOp op);

// BatchMatMulV3's BATCH_MODEL values (bits 11:8 of its and FusedMatMul's key).
enum class BatchModel : uint8_t {
  kForBatch = 0,
  kIterBatchSingleBias = 1,
  kBatchMatMulToMul = 2,
  kMergeBatch = 3,
  kFusedBatch = 4,
  kBroadcastBatch = 5,
  kIterBatchBroadcastA = 6,
  kIterBatchBroadcastB = 7,
};
// "FOR_BATCH", "ITER_BATCH_SINGLE_BIAS", ... as CANN names them.
std::string_view BatchModelName(uint8_t batch_model);

struct TilingKey {
  ApiLevel api_level = ApiLevel::kHigh;
  bool trans_a = false;
  bool trans_b = false;
  uint8_t batch_model = 0;
  KernelModel model = KernelModel::kBasic;
  FullLoad full_load = FullLoad::kNone;
  L0cToOut l0c2out = L0cToOut::kOnTheFly;
  KeyLayout layout = KeyLayout::kMatMul;
  // FusedMatMul layout only.
  FusedOp fused_op = FusedOp::kNone;
  uint8_t inner_precise = 0;
  // QuantBatchMatmulV3 layout only: CANN's KERNELTYPE (the batch mode is
  // `batch_model`: 0 WITH_BATCH, 1 WITHOUT_BATCH).
  uint8_t quant_kernel = 0;
  // WeightQuantBatchMatmulV2 layout only: its 36-bit key as CANN packs it
  // (key_layout.cc names the fields; trans_a / trans_b mirror two of them).
  uint64_t weight_quant_bits = 0;
  // The transposed batch matmuls' layouts only: PERM_X1 (1: [1, 0, 2], 0:
  // [0, 1, 2]), PERM_X2 (1: [0, 2, 1], 0: [0, 1, 2]), BATCH_SPLIT (1 when y's
  // batch is written in parts) and, for TransposeQuantBatchMatMul,
  // PRECISION_MODE (0 FP8, 1 MXFP8, 2 HIFP8); TransposeBatchMatMul's
  // API_LEVEL is `api_level`.
  uint8_t perm_x1 = 0;
  uint8_t perm_x2 = 0;
  uint8_t batch_split = 0;
  uint8_t precision_mode = 0;
  // GroupedMatmul's layouts only: the key as CANN packs it (key_layout.cc
  // names each path's fields; trans_a / trans_b mirror two of them).
  uint64_t grouped_bits = 0;

  // CANN's packed key. MatMul layout: level | ta<<4 | tb<<6 | batch<<8 |
  // model<<12 | full_load<<16 | l0c2out<<20. Fused layout: level |
  // (ta + 2 tb)<<4 | batch<<8 | model<<12 | full_load<<16 | l0c2out<<20 |
  // fused_op<<24 | inner_precise<<28. Quant layout: ta | tb<<2 |
  // batch<<4 | kernel<<8 | level<<16. TransposeBatch layout: perm_x1 |
  // perm_x2<<4 | batch_split<<8 | level<<12. TransposeQuant layout: perm_x1
  // | perm_x2<<4 | batch_split<<8 | precision_mode<<10.
  uint64_t Encode() const;
  // The inverse of Encode() for `layout`; kInvalidArgument when a field is
  // out of range.
  static absl::StatusOr<TilingKey> Decode(uint64_t key, KeyLayout layout = KeyLayout::kMatMul);
  bool operator==(const TilingKey& other) const { return Encode() == other.Encode(); }
};

// ---------------------------------------------------------------------------
// Tiling data: the struct CANN serializes for the kernel, by field name.
//
// Struct and field names are fixed by CANN's kernels: they always point at
// static strings (literals or the layout tables), so a plan copies and frees
// no name strings.
//
// A field is a trivial type (no member initializers, a name that is a plain
// pointer and length), so that a struct of fields copies as one block: every
// decision copies a struct of zeros (tiling_data.h, NewTilingData()).
class FieldName {
 public:
  FieldName() = default;
  constexpr FieldName(std::string_view name)  // NOLINT: implicit, as a view is
      : data_(name.data()), size_(name.size()) {}
  constexpr FieldName(const char* name)  // NOLINT
      : FieldName(std::string_view(name)) {}
  constexpr operator std::string_view() const { return {data_, size_}; }  // NOLINT
  constexpr std::string_view view() const { return {data_, size_}; }

  friend constexpr bool operator==(FieldName a, std::string_view b) { return a.view() == b; }
  friend constexpr bool operator==(std::string_view a, FieldName b) { return a == b.view(); }
  friend constexpr bool operator==(FieldName a, FieldName b) { return a.view() == b.view(); }
  friend constexpr bool operator==(FieldName a, const char* b) { return a.view() == b; }
  template <typename T>
  friend constexpr bool operator!=(FieldName a, const T& b) {
    return !(a == b);
  }
  friend std::ostream& operator<<(std::ostream& os, FieldName name) { return os << name.view(); }

 private:
  const char* data_;
  size_t size_;
};

struct TilingField {
  FieldName name;
  uint64_t value;
  int bits;  // 32, 8 / 16 for a member packed into a word, or 64 (two words, low first)
};
static_assert(std::is_trivial_v<TilingField>, "a struct of fields must copy as one block");

// The device kernel family a plan is for: the kernels that read one
// tiling-data struct, told apart by the key. server/tiling/kernel_table.h
// holds one row per family (the struct, the kernel type of a key, the tile
// loops, the buffer demand and the block); the emulator keeps its own rows
// by the same id. Values index those tables.
enum class KernelId : uint8_t {
  // A plan without tiling data (the emulator's hand-built schedules): its
  // key's model says how it runs, as for MatMulV3's structs.
  kUnstructured,
  kMatMulCube,                // MatMulV3BasicTilingData: BASIC, STREAM_K, SLICE, split-K
  kMatMulZeroK,               // MatMulV3KEqZeroBasicTilingData
  kMatMulToMul,               // MatMulToMulBasicTilingData
  kMatMulToVector,            // MatMulToVectorBasicTilingData
  kBatchCube,                 // BatchMatMulV3BasicTilingData: ASW, full load, Stream-K
  kBatchIterate,              // BatchMatMulV3IterBatchBasicTilingData
  kBatchMerge,                // BatchMatMulV3MergeBatchBasicTilingData
  kBatchToMul,                // BatchMatMulToMulBasicTilingData
  kBatchHighLevel,            // BatchMatMulV3TilingData (the high-level Matmul API)
  kQuantBasic,                // QuantBatchMatmulV3BasicAPITilingData (38 words)
  kQuantStreamK,              // QuantBatchMatmulV3StreamKBasicAPITilingData (42 words)
  kQuantWithoutBatch,         // QuantBatchMatmulV3TensorAPIWithoutBatchTilingData (16 words)
  kQuantHighLevel,            // QuantBatchMatmulV3TilingDataParams (96 words)
  kWeightQuantAdaptiveSplit,  // WeightQuantBatchMatmulV2ASTilingDataParams (70 words)
  kWeightQuantRegBase,        // WeightQuantBatchMatmulV2RegBaseTilingDataParams (64 words)
  kWeightQuantCustom,         // WeightQuantBatchMatmulV2TilingData (120 words)
  // BatchMatMulV3TilingData read by the transposed batch matmuls' kernels,
  // which load x1 and store y through their perms.
  kTransposeBatch,       // TransposeBatchMatMul
  kTransposeQuantBatch,  // TransposeQuantBatchMatMul
  // GroupedMatmul's kernels, one struct each.
  kGroupedNoQuant,        // GMMNoQuantTilingData (62 words)
  kGroupedQuantBasicApi,  // GMMQuantBasicApiTilingData (18 words): MX basic API
  kGroupedQuant,          // GMMQuantTilingData (440 words)
  kGroupedWeightQuant,    // GMMWeightQuantTilingData (448 words)
};
inline constexpr size_t kKernelCount = 23;

struct TilingData {
  KernelId kernel = KernelId::kUnstructured;
  std::vector<TilingField> fields;

  // CANN's name of the struct, e.g. "MatMulV3BasicTilingData" (empty for
  // kUnstructured).
  std::string_view struct_name() const;

  // The value of field `name`, if the struct has one.
  std::optional<uint64_t> Get(std::string_view name) const;
  // The struct as little-endian 32-bit words (8-bit fields packed, first
  // field in the lowest byte), as the kernel reads it.
  std::vector<uint32_t> RawWords() const;
  // The same words, each passed to `sink(uint32_t)` in order (no vector).
  template <typename Sink>
  void ForEachWord(Sink&& sink) const;
  // At least as many as ForEachWord() passes: a word per field, two for a
  // 64-bit one.
  size_t MaxWords() const {
    size_t words = fields.size();
    for (const TilingField& field : fields) words += field.bits == 64 ? 1 : 0;
    return words;
  }
};

template <typename Sink>
void TilingData::ForEachWord(Sink&& sink) const {
  uint32_t word = 0;
  int bits_in_word = 0;  // bits of packed members in `word` so far
  for (const TilingField& field : fields) {
    if (field.bits < 32) {
      const uint32_t mask = (uint32_t{1} << field.bits) - 1;
      word |= (static_cast<uint32_t>(field.value) & mask) << bits_in_word;
      bits_in_word += field.bits;
      if (bits_in_word == 32) {
        sink(word);
        word = 0;
        bits_in_word = 0;
      }
      continue;
    }
    if (bits_in_word != 0) {  // a partly filled word of packed members ends here
      sink(word);
      word = 0;
      bits_in_word = 0;
    }
    sink(static_cast<uint32_t>(field.value));
    if (field.bits == 64) sink(static_cast<uint32_t>(field.value >> 32));
  }
  if (bits_in_word != 0) sink(word);
}

// Block sizes and buffer choices of a cube plan, in elements unless named.
struct BlockTiling {
  uint64_t base_m = 0, base_n = 0, base_k = 0;
  uint64_t m_l1 = 0, n_l1 = 0, k_l1 = 0;
  uint64_t step_m = 1, step_n = 1, step_ka = 1, step_kb = 1;
  uint64_t depth_a1 = 1, depth_b1 = 1;
  uint64_t single_core_m = 0, single_core_n = 0, single_core_k = 0;
  uint64_t m_tail_cnt = 1, n_tail_cnt = 1, k_cnt = 1;  // tail re-split / K split counts
  uint64_t l1_buffer_num = 2, l0c_db = 1, ub_db = 1;
};

// Advisor extensions of a plan (not CANN modes). CANN's strategies never set
// them, so their defaults keep every engine answer exactly CANN's.
//
// CANN's SWAT window: rows of base blocks walked together before the next
// window (WINDOW_LEN of block_scheduler_aswt.h, seeds/001 section 4.1).
inline constexpr uint32_t kCannSwatWindowRows = 4;

// Partial L1 residency: a band of one operand stays in L1 across consecutive
// work units of a core while the other operand streams. kABand keeps mL1
// rows of A (the whole K) resident, kBBand keeps nL1 columns of B. CANN only
// knows whole-matrix residency (FullLoad), which it drops once the matrix
// exceeds 3/4 of L1 (seeds/001 section 6, item 3).
enum class L1Residency : uint8_t { kStreamed = 0, kABand = 1, kBBand = 2 };
// "STREAMED", "A_BAND", "B_BAND".
std::string_view L1ResidencyName(L1Residency residency);

// One line of the decision trace.
struct TraceEntry {
  std::string strategy;  // CANN strategy name, e.g. "BASIC_STREAM_K"
  bool capable = false;
  bool chosen = false;
  LazyText reason;  // why (not), with the numbers that decided it
};

// The engine's full answer for one problem.
// A buffer that CANN's plan needs more of than the chip has. CANN emits such
// plans (on custom platforms, and for some one-batch L0 blocks of
// ITER_BATCH_BROADCAST_BASICAPI on the 950PR); the engine answers CANN's plan
// unchanged and attaches this warning.
struct PlanWarning {
  std::string buffer;  // "L0A", "L0B", "L0C", "BT" or "L1"
  uint64_t need_bytes = 0;
  uint64_t have_bytes = 0;
  std::string message;  // the formula, the sizes and what the kernel would do
};

struct TilingPlan {
  std::string strategy;  // the strategy that produced the plan
  TilingKey key;
  uint32_t block_dim = 0;
  KernelType kernel_type = KernelType::kAicOnly;
  // QuantBatchMatmulV3: the quant mode CANN inferred ("PERCHANNEL"...); empty
  // for the other operators. A static string.
  std::string_view quant_mode;
  uint64_t workspace_bytes = 0;
  BlockTiling block;  // zero for the vector-only strategies
  TilingData data;
  LazyText detail;  // which sub-branch decided the plan, in words
  // Advisor extensions (see above); the defaults are CANN's behaviour.
  // Rows of base blocks per SWAT window; 0 also means CANN's value.
  uint32_t swat_window_rows = kCannSwatWindowRows;
  L1Residency l1_residency = L1Residency::kStreamed;
  // Buffers the plan overflows on the chip it was decided for; empty for a
  // plan that fits.
  std::vector<PlanWarning> warnings;
};

struct TilingDecision {
  TilingPlan plan;
  std::vector<TraceEntry> trace;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_TYPES_H_
