// The arithmetic of QuantBatchMatmulV3 on the Ascend 950 (DAV_3510) for one
// [m, k] x [k, n] product: what the kernels compute (`QuantMatmulDevice`), the
// exact answer (`QuantMatmulReference`, fp64) and how far apart the two may
// be (`QuantMatmulErrorBound`). Plain functions over host vectors; batches,
// transposes, NZ layouts and tiling are the caller's business (the result
// does not depend on the tiling: each path fixes its own order of operations,
// described below). Part of `npu_emulator`, on top of quant_formats.h.
//
// Vocabulary. x1 is A ([m, k]), x2 is B ([k, n]). CANN's `scale` input is
// x2's scale; its `pertoken_scale` is x1's. A *path* is the part of the
// chip that dequantises (QuantPath below); a K *group* is a run of K the
// per-block or MX scales cover.
//
// What the kernels do (sources: hicann/ops-nn e5c3fa93,
// `matmul/quant_batch_matmul_v3/op_kernel/arch35/` and `matmul/common/cmct/`;
// asc-devkit 82b89a15; the op's formulas in
// `matmul/quant_batch_matmul_v4/docs/aclnnQuantMatmulV5.md` (950 section)):
//   * Accumulation in the cube's L0C. int8 x int8 (and int4 x int4, which the
//     kernels widen to int8) sums exactly in int32 and, like the hardware,
//     wraps modulo 2^32 on overflow. fp8 / hifloat8 / fp4 products are exact
//     in fp32 and are summed in fp32, round to nearest even, in K order (our
//     model: the cube's internal order within a 32-wide K step is not
//     documented; the error bound below holds for any order).
//   * kFixpipe (the cube-only kernels, e.g. CUBE_BASIC_API_ASW): the
//     dequantisation happens in the fixpipe on the way out of L0C, with a
//     19-bit float scale ("fp19": fp32 sign, exponent and the top 10 mantissa
//     bits; `aclnnTransQuantParamV2.md`: out = (scale & 0xFFFFE000) | 1 << 46,
//     an int9 offset in bits 45..37; the fixpipe reads bits 31..13). A float
//     or bf16 per-tensor scale is truncated the same way by the kernel
//     (`cmct/kernel/kernel_qbmm_cube.h`, DEQ_SCALE_MUL), a double scale after
//     the fp32 product pertoken[0] * scale[0]. A bias (int32 for int inputs,
//     fp32 for fp8 / hifloat8) is the L0C's initial value, so it is added
//     BEFORE the dequantisation: y = (x1 @ x2 + bias) * scale
//     (aclnnQuantMatmulV5, T-C / T-T). Model: acc -> fp32 -> * scale (fp32,
//     nearest even) -> cast to y. y int8 (REQ8 / VREQ8): round to nearest
//     even, saturate to int9 [-256, 255], add the word's offset, saturate to
//     int8 (asc-devkit `examples/.../fixpipe_l0c2gm/scripts/gen_data_s322s8.py`;
//     bit 46, "signed output", is taken as set, as TransQuantParamV2 sets it).
//   * kVectorEpilogue (the "mix" kernels, `qbmm_mix_online_dynamic.h`
//     VFDoDequant): the AIV reads L0C (int32 -> fp32, nearest even), then in
//     fp32, each step rounded: * scale (per-tensor or per-channel; bf16 scale
//     widened exactly), * pertoken (per row, or the single double-scale
//     value), + bias (fp32, or fp16 / bf16 widened exactly), then the cast to
//     y (nearest even, not saturating). An int32 bias still goes into L0C
//     (before the dequantisation); float biases are added here, AFTER it.
//     GroupedMatmul's mix kernel (ops-transformer `gqmm_mix_online_dynamic.h`)
//     runs the same steps and then, for its `act_type`, an activation in
//     fp32 before the cast, each step rounded: ReLU; SiLU x / (exp(-x) + 1)
//     and FastGelu x / (exp(-1.702 x) + 1) (a multiply, Exp, an add, a
//     divide); GELU tanh as x / (exp(t) + 1) with t = -1.5957691 * 0.044715
//     * (x^3 + x / 0.044715) (two multiplies for x^3, an axpy, a multiply,
//     then as SiLU).
//   * kPerBlock (PERBLOCK_BASIC_API_ASW, `cmct/epilogue/block_epilogue_pertile.h`):
//     the cube produces one fp32 partial per K group (group_k elements, the
//     last one ragged, started from 0); the AIV multiplies it by
//     fp32(x1_scale[i / group_m][g] * x2_scale[g][j / group_n]) and adds it to
//     an fp32 running sum in K order; then the cast to y. No bias.
//   * kMx (`cmct/block/block_mmad_mx.h`): e8m0 scales per 32 elements of K;
//     per block of 32 (the last one ragged) the fp32 partial (from 0) times
//     2^(ea - 127 + eb - 127) is added to the fp32 accumulator, which starts
//     from the fp32 bias (the bias table is L0C's initial value); then the
//     cast to y. (Our model of the cube's MX step; the source fixes the
//     bias-first order and the fp32 L0C, not the rounding inside a block.)
//   * kInt32Output (y int32, int8 inputs): the int32 accumulator plus the
//     int32 bias, no dequantisation (the fixpipe's NoQuant mode); the scale is
//     validated but not applied.
//
// The reference is the same formula evaluated exactly: integer sums in
// int64, float products exact in fp64 and summed in fp64, scales as the
// user gave them (the fp19 truncation of a float scale is counted as device
// error; a packed uint64 word means its fp19 value exactly), no rounding
// before the output cast. For y int8 the reference stops before the output
// stage (no offset, no clamping); ToOutputRange() applies that stage's exact,
// unrounded part (int9 clamp, offset, int8 clamp) so that
//   |device - ToOutputRange(reference)| <= QuantMatmulErrorBound()
// element by element.
//
// The error bound (all amounts per output element; u = 2^-24, the fp32 unit
// roundoff; eta = 2^-150, fp32's absolute rounding error near zero;
// gamma_n = n u / (1 - n u)):
//   * A sum of n exact products started from s0, in fp32 in any order:
//       |err| <= gamma_n (|s0| + sum |p|)      (Higham, Accuracy and Stability
//     of Numerical Algorithms, 2nd ed., eq. 4.4). No eta: every product of
//     these formats is a multiple of 2^-44, so the sums never reach fp32's
//     subnormals. int32 sums: 0.
//   * Every later fp32 step of the path carries the error e of its input
//     value v (true value, |v| known from the reference) forward:
//       convert or add exact b:   e' = e + u (|v + b| + e) + eta
//       multiply by c (device c~):  e' = |c~| e + |c~ - c| |v| + u |c~| (|v| + e) + eta
//     so the fp19 truncation (|c~ - c| < 2^-10 |c|) of a float scale on the
//     fixpipe appears as its own term.
//   * Per-block: the above per group (sum, then * fp32(s1 s2)), then the fp32
//     sum of the groups' terms with gamma_{groups - 1}. MX: every block's sum
//     and the accumulation of the scaled blocks together,
//       gamma_{32 + blocks} (|bias| + sum_j 2^e_j sum_{p in block j} |p|)
//     plus 2 eta per block (the scaling and the add may go subnormal).
//   * Activation (vector epilogue only): with input error e on a value v
//     and X = |v| + e, e' = L e + (c |t(X)| + 8) u (|f(v)| + L e) + 2^-120 X
//     + eta, where f is the activation (the reference evaluates it in fp64),
//     L its Lipschitz constant (ReLU 1, SiLU and FastGelu 1.1, GELU tanh
//     1.13: the largest slopes of x sigmoid(a x) and of its tanh form), t
//     the exponent's argument and c the roundings that reach it (1 for
//     SiLU, 2 for FastGelu, 6 for GELU tanh, each fp32 constant counted):
//     an absolute error d in t is a relative error d of exp(t), and each
//     later step adds u. ReLU: e' = e.
//   * Output cast: float16 e + 2^-11 (|v| + e) + 2^-25; bfloat16
//     e + 2^-8 (|v| + e) + 2^-134; float32 nothing more; int8 e + 1/2;
//     int32 0.
//   * The fp64 reference's own rounding is covered by adding
//     2^-50 (k + 8) times the magnitude of the whole computation.
// The bound assumes no overflow: it is +infinity where |v| + e reaches the
// output format's overflow threshold, and the int32 bound 0 assumes the sum
// does not wrap.
#ifndef NPU_EMULATOR_QUANT_NUMERICS_H_
#define NPU_EMULATOR_QUANT_NUMERICS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/tiling/types.h"

namespace npu::emu {

// The activation a vector epilogue applies after the dequantization and the
// bias, before the cast (GroupedMatmul's act_type 1, 2, 4, 5).
enum class QuantActivation { kNone, kRelu, kGeluTanh, kFastGelu, kSilu };

// One QuantBatchMatmulV3 product's operands. Matrices are row-major logical
// [m, k] (x1) and [k, n] (x2) codes of their dtype, packed two per byte for
// the 4-bit types (quant_formats.h); scale vectors are row-major too.
struct QuantOperands {
  uint64_t m = 0, k = 0, n = 0;
  tiling::DataType x1_dtype = tiling::DataType::kInt8;
  tiling::DataType x2_dtype = tiling::DataType::kInt8;
  std::vector<uint8_t> x1;  // QuantBytes(x1_dtype, m * k) bytes
  std::vector<uint8_t> x2;  // QuantBytes(x2_dtype, k * n) bytes

  // CANN's `scale` (x2's scale). `scale_dtype` says which vector holds it:
  //   kFloat32 / kBFloat16  `scale`: 1 (per-tensor) or n (per-channel) values,
  //                         bf16 ones exactly representable; per-block:
  //                         [ceil(k / group_k), ceil(n / group_n)]
  //   kUint64 / kInt64      `scale_words`: 1 or n fixpipe words
  //                         (PackFixpipeScale(), CANN's TransQuantParamV2)
  //   kFloat8E8M0           `scale_e8m0`: MX codes [ceil(k / 32), n] (CANN
  //                         stores them as [ceil(k / 64), n, 2]: K groups
  //                         padded to even, pairs of them innermost;
  //                         unpacking is the caller's)
  tiling::DataType scale_dtype = tiling::DataType::kFloat32;
  std::vector<float> scale;
  std::vector<uint64_t> scale_words;
  std::vector<uint8_t> scale_e8m0;

  // CANN's optional `pertoken_scale` (x1's scale): fp32 `pertoken` with m
  // values (per-token), 1 value (fp8 / hifloat8 "double scale") or, per-block,
  // [ceil(m / group_m), ceil(k / group_k)]; for MX, `pertoken_e8m0` codes
  // [m, ceil(k / 32)] (CANN: [m, ceil(k / 64), 2], the same codes with the K
  // groups padded to even).
  bool has_pertoken = false;
  std::vector<float> pertoken;
  std::vector<uint8_t> pertoken_e8m0;

  // The optional bias, n values: `bias_int32` when bias_dtype is kInt32,
  // else `bias_float` (kFloat32, or kFloat16 / kBFloat16 values exactly
  // representable in that type).
  bool has_bias = false;
  tiling::DataType bias_dtype = tiling::DataType::kInt32;
  std::vector<int32_t> bias_int32;
  std::vector<float> bias_float;

  // Per-block group sizes; group_k == 0 means not per-block. CANN accepts
  // (group_m, group_n, group_k) = (1 or 128, 128, 128); any positive sizes
  // work here.
  uint64_t group_m = 0, group_n = 0, group_k = 0;

  // y: float16, bfloat16, float32, int8 or int32.
  tiling::DataType y_dtype = tiling::DataType::kFloat16;

  // kVectorEpilogue only (GroupedMatmul's mix kernel); any other path
  // refuses one.
  QuantActivation activation = QuantActivation::kNone;
};

// Where the dequantisation happens (see the file comment).
enum class QuantPath { kFixpipe, kVectorEpilogue, kPerBlock, kMx, kInt32Output };

// K elements per MX scale.
inline constexpr uint64_t kMxGroupSize = 32;

// Checks `operands` (sizes, dtype combinations, value representability) and
// returns the path the kernels would take. kInvalidArgument names the field:
// "scale: 7 values, expected n = 8"; an activation on a path other than
// kVectorEpilogue names `activation`. The path rules, first match wins:
// scale e8m0 -> kMx; group_k != 0 -> kPerBlock; y int32 -> kInt32Output;
// uint64 / int64 scale -> kFixpipe; a per-tensor float / bf16 scale with no
// per-token scale and no float bias, for int inputs, or for fp8 / hifloat8
// with a double scale (CANN's IsCubeBasicApiCapable) -> kFixpipe; otherwise
// kVectorEpilogue.
absl::StatusOr<QuantPath> ClassifyQuantPath(const QuantOperands& operands);

// CANN's TransQuantParamV2 word for `scale` and an optional offset: the fp32
// bits of `scale` with the low 13 cleared, bit 46 set, and `offset` rounded
// to nearest even, saturated to [-256, 255], in bits 45..37.
uint64_t PackFixpipeScale(float scale, float offset = 0.0f);
// The scale a fixpipe word applies (bits 31..13 as an fp32) and its int9
// offset.
float FixpipeScaleValue(uint64_t word);
int FixpipeOffset(uint64_t word);

// C as the kernels compute it: m * n row-major y values, each exactly a
// value of y_dtype (fp64 holds all of them, int32 included).
absl::StatusOr<std::vector<double>> QuantMatmulDevice(const QuantOperands& operands);

// C in fp64 before the final cast (see the file comment), m * n row-major.
absl::StatusOr<std::vector<double>> QuantMatmulReference(const QuantOperands& operands);

// The documented per-element bound on |device - ToOutputRange(reference)|,
// m * n row-major.
absl::StatusOr<std::vector<double>> QuantMatmulErrorBound(const QuantOperands& operands);

// The bound on a float16 or bfloat16 output cast (round to nearest even,
// not saturating) of a value within `error` of `value`: `error` plus half
// an ulp at |value| + error (2^-11 / 2^-8 relative, 2^-25 / 2^-134 near
// zero); +infinity where the cast may overflow.
double HalfCastErrorBound(tiling::DataType y_dtype, double value, double error);

// The fixpipe's int8 output stage (REQ8) of an fp32 value: round to nearest
// even, saturate to int9, add the word's offset, saturate to int8; NaN gives 0.
double FixpipeToInt8(float value, int offset);

// `value`, a reference element of column `column`, through the exact part of
// the output stage: for y int8 on the fixpipe, clamp to [-256, 255], add the
// column's offset, clamp to [-128, 127]; the identity otherwise.
// Precondition: ClassifyQuantPath(operands) is OK.
double ToOutputRange(const QuantOperands& operands, uint64_t column, double value);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_QUANT_NUMERICS_H_
