// The arithmetic of GroupedMatmul's two weight-quant kernels with 8-bit x on
// the Ascend 950 (DAV_3510), A8W4 (int8 x, int4 weight) and MX-A8W4
// (float8_e4m3fn x, float4_e2m1 weight), for one expert's [m, k] x [k, n]
// product: what the kernels compute (`...Device`), the exact answer
// (`...Reference`, fp64) and how far apart the two may be (`...ErrorBound`).
// Plain functions over host vectors like quant_numerics.h, on whose vector
// epilogue and MX models they are built; the experts, the token split and
// the NZ layouts are the caller's (grouped_emulation.h). Part of
// `npu_emulator`.
//
// Which kernel runs (ops-transformer `gmm/grouped_matmul/op_kernel/
// grouped_matmul_apt.cpp`, V310_GMM_ANTI_QUANT): int8 x takes the
// vector-cube-vector controller (`arch35/weight_quant_basic_block/
// weight_quant_vcv_basic_block.h`, config S8S4_NZKN_G: per-group antiquant,
// NZ weight not transposed); float8_e4m3fn x takes the basic block with
// MXA8W4_NZNK (MX antiquant, NZ weight transposed). The operands' dtypes on
// DAV_3510 are those of the op's ascend950 config (`op_host/
// grouped_matmul_def.cpp`): A8W4 x int8, weight int4 (or int32, eight per
// word), antiquant_scale float16 [E, G, N], scale float32 [E, N],
// per_token_scale float32 [M], bias float32 [E, N], y float16 / bfloat16;
// MX-A8W4 x float8_e4m3fn, weight float4_e2m1 (or float32, eight per word),
// antiquant_scale and per_token_scale float8_e8m0, bias float16 with y
// float16 and bfloat16 with y bfloat16. The infershape checker
// (`op_host/grouped_matmul_infershape_weight_quant_checker.cpp`) requires
// A8W4's scale and per_token_scale ([M]) and refuses an antiquant offset;
// MX-A8W4 takes no scale.
//
// A8W4, in order (each step's rounding):
//   1. The AIVs widen the weight into L1 as int8
//      (`basic_block_vf_nz.h` AntiQuantS8S4NzKnGroupVf): the int4 code cast
//      to float16 (exact), times its K group's float16 antiquant scale in
//      float16 (nearest even), cast to int8 (CAST_RINT: nearest even;
//      NO_SAT, so a value outside [-128, 127] is not specified: our model
//      saturates, and the bound is infinite for such a column).
//   2. The cube sums int8 x times that int8 weight over the whole K in
//      int32 (exact; the matmul's C is int32 in UB, `weight_quant_vcv_
//      basic_block.h` ubOutputS32Buffer_); no bias on the cube (the host
//      tiling leaves it to UB, `op_host/op_tiling/arch35/
//      grouped_weight_quant_batch_matmul_tiling.cpp`).
//   3. The AIVs dequantize C (`anti_quant_y_vf.h` AntiQuantYB32), in fp32,
//      each step nearest even: int32 -> fp32, times scale[n], times
//      per_token_scale[m], plus bias[n], then the cast to y (nearest even,
//      not saturating). Steps 2 and 3 are quant_numerics.h's vector
//      epilogue (int32 sum, * scale, * pertoken, + bias, cast), which the
//      device model runs on x and the int8 weight of step 1.
// MX-A8W4, in order:
//   1. The AIVs rewrite each float4_e2m1 nibble s e1 e0 m as the
//      float8_e4m3fn byte s 0 0 e1 e0 m 0 0 (`basic_block_vf_mx.h`
//      AntiQuantMxA8W4NzNkVf: two shifts right by 2 and one left by 4, a
//      select, an and with 0x9C) into L1: the weight's value times 2^-6,
//      exactly, for all 16 codes (MxA8W4WeightCode()).
//   2. The AIVs scale the bias by 0.015625 (2^-6) in its own dtype
//      (MxA8W4BiasCompute: exact in bfloat16; float16 rounds below 2^-8,
//      where the product is subnormal), and the cube starts L0C from it
//      (the bias table, fp32; `basic_api/weight_quant_basic_api_v1.h` Mmad).
//   3. The cube's MX matmul with x's e8m0 scale (per_token_scale) and the
//      weight's (antiquant_scale), one per 32 of K: quant_numerics.h's kMx
//      model, in fp32.
//   4. The fixpipe multiplies by 64.0 (deqScalar 0x42800000, QF322F16_PRE /
//      QF322BF16_PRE) and casts to y: 64 is a power of two, so the product
//      is exact in fp32 (overflow aside) and y is the nearest-even cast of
//      64 times the result of step 3.
//
// The reference is the formula evaluated exactly in fp64:
//   A8W4     y = per_token_scale[m] * scale[n] * sum_k x * (w * s_g) + bias
//   MX-A8W4  y = sum_k x * 2^(ex - 127) * w * 2^(ew - 127) + bias
// with every scale as given (the int8 rounding of w * s_g, the float16
// rounding of bias * 2^-6 are device error).
//
// The bound, per element (u_y the unit roundoff of y):
//   A8W4: the vector epilogue's QuantMatmulErrorBound() of the int8 weight
//   the AIV writes (exact int32 sum, three fp32 steps, the cast), plus
//   |scale * per_token_scale| (1 + u_y + 2^-20) sum_k |x| d_k, where d_k,
//   the widening's error of w * s_g, is 0 when w * s_g is an integer in
//   [-128, 127] (the float16 product and the rint are then exact), else
//   2^-11 |w * s_g| + 2^-25 + 1/2 (the float16 rounding, its subnormal
//   floor, the rint); infinite when w * s_g is any other value beyond 127
//   in magnitude (step 1's unspecified cast) or k reaches 2^17 (the int32
//   sum may wrap); plus the fp64 reference's 2^-50 (k + 8) of the
//   computation's magnitude.
//   MX-A8W4: 64 (B + 2 d_b) before the cast, B the MX bound of
//   QuantMatmulErrorBound() on the scaled operands of steps 1-3 (fp32
//   out), d_b = |bias as step 2 rounds it - bias * 2^-6|, then the cast's
//   u_y (|ref| + e) plus y's subnormal half-ulp; infinite where y
//   overflows.
#ifndef NPU_EMULATOR_A8W4_NUMERICS_H_
#define NPU_EMULATOR_A8W4_NUMERICS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/tiling/types.h"

namespace npu::emu {

// One expert's A8W4 operands, row-major.
struct A8W4Operands {
  uint64_t m = 0, k = 0, n = 0;
  std::vector<uint8_t> x;       // int8 codes [m, k]
  std::vector<uint8_t> weight;  // int4 codes [k, n], two per byte (quant_formats.h)
  // K rows per antiquant scale row: antiquant_scale is [ceil(k /
  // group_size), n] float16 values.
  uint64_t group_size = 0;
  std::vector<float> antiquant_scale;
  std::vector<float> scale;            // float32 [n]
  std::vector<float> per_token_scale;  // float32 [m]
  bool has_bias = false;
  std::vector<float> bias;  // float32 [n]
  tiling::DataType y_dtype = tiling::DataType::kFloat16;
};

// Checks the sizes, the float16 scales and y (float16 / bfloat16);
// kInvalidArgument names the field: "antiquant_scale: 7 values, expected
// ceil(k / group_size) * n = 8".
absl::Status CheckA8W4Operands(const A8W4Operands& operands);

// The int8 weight the AIVs write to L1 (step 1), [k, n] int8 codes.
absl::StatusOr<std::vector<uint8_t>> A8W4WeightInL1(const A8W4Operands& operands);

// y as the kernel computes it, m * n row-major values of y_dtype.
absl::StatusOr<std::vector<double>> A8W4Device(const A8W4Operands& operands);
// y exactly, before any rounding (the file comment).
absl::StatusOr<std::vector<double>> A8W4Reference(const A8W4Operands& operands);
// The per-element bound on |device - reference| (+infinity where the
// kernel's result is not specified or y overflows).
absl::StatusOr<std::vector<double>> A8W4ErrorBound(const A8W4Operands& operands);

// One expert's MX-A8W4 operands, row-major.
struct MxA8W4Operands {
  uint64_t m = 0, k = 0, n = 0;
  std::vector<uint8_t> x;       // float8_e4m3fn codes [m, k]
  std::vector<uint8_t> weight;  // float4_e2m1 codes [k, n], two per byte
  // e8m0 codes per 32 of K: x's [m, ceil(k / 32)], the weight's
  // [ceil(k / 32), n] (CANN stores both with the K groups in pairs; the
  // unpacking is the caller's).
  std::vector<uint8_t> x_scale;
  std::vector<uint8_t> weight_scale;
  bool has_bias = false;
  tiling::DataType bias_dtype = tiling::DataType::kFloat16;  // float16 / bfloat16
  std::vector<float> bias;                                   // [n] values of bias_dtype
  tiling::DataType y_dtype = tiling::DataType::kFloat16;
};

// The float8_e4m3fn byte the AIV writes for float4_e2m1 `nibble` (step 1):
// its value is the nibble's times 2^-6.
uint8_t MxA8W4WeightCode(uint8_t nibble);

absl::Status CheckMxA8W4Operands(const MxA8W4Operands& operands);
absl::StatusOr<std::vector<double>> MxA8W4Device(const MxA8W4Operands& operands);
absl::StatusOr<std::vector<double>> MxA8W4Reference(const MxA8W4Operands& operands);
absl::StatusOr<std::vector<double>> MxA8W4ErrorBound(const MxA8W4Operands& operands);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_A8W4_NUMERICS_H_
