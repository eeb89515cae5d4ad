#include "server/tiling/quant/quant_capability.h"

#include "server/tiling/quant/quant_dtype.h"

namespace npu::tiling::quant {
namespace {

// The mix and Stream-K kernels pair every cube core with two vector cores.
constexpr uint32_t kVectorCoresPerCube = 2;

bool Answer(bool ok, std::string_view why, std::string* reason) {
  if (reason != nullptr) *reason = std::string(why);
  return ok;
}

// The problem as CUBE_BASIC_API_ASW and MIX_ASW judge it: INT4 x INT4 read as
// INT8 x INT8 (arch35/adaptive_sliding_window_cube_basic_api_tiling.cpp and
// adaptive_sliding_window_mix_tiling.cpp, IsCapable).
QuantFacts AsInt8IfInt4Pair(const QuantFacts& facts) {
  QuantFacts seen = facts;
  if (IsInt4Pair(facts)) seen.x1 = seen.x2 = GeDtype::kInt8;
  return seen;
}

bool CubeBasicApiAswCapable(const QuantFacts& facts, std::string* reason) {
  const QuantFacts seen = AsInt8IfInt4Pair(facts);
  if (IsFp8OrHif8TTFloatBiasMix(seen)) {
    return Answer(false, "FP8/HIF8 double scale with a FLOAT bias needs vector dequant", reason);
  }
  if (IsCubeBasicApiCapable(seen) && !seen.x2_nz) {
    return Answer(true, "pure-cube dequant, ND weight", reason);
  }
  if (IsWeightNzNonMxCubeBasicApiCapable(seen)) {
    return Answer(true, "pure-cube dequant, NZ weight with the Tensor API", reason);
  }
  return Answer(false, "dequant is not pure-cube (or NZ weight without the Tensor API)", reason);
}

// arch35/adaptive_sliding_window_cube_tiling.cpp IsCapable: the pure-cube
// rule on the dtypes as given (no INT4 rewrite), NZ weight only.
bool CubeAswCapable(const QuantFacts& facts, std::string* reason) {
  const bool cube_per_tensor =
      facts.is_per_tensor &&
      ((facts.x1 == GeDtype::kInt8 && facts.bias == GeDtype::kInt32 && !facts.is_pertoken) ||
       (IsFp8OrHif8(facts.x1) && IsIntegerScale(facts.scale)));
  const bool cube_per_channel =
      facts.is_per_channel && (IsIntegerScale(facts.scale) || facts.y == GeDtype::kInt32);
  const bool cube =
      (facts.is_double_scale && !facts.is_per_channel) || cube_per_tensor || cube_per_channel;
  if (IsFp8OrHif8TTFloatBiasMix(facts) || !cube) {
    return Answer(false, "dequant is not pure-cube", reason);
  }
  if (!facts.x2_nz) return Answer(false, "ND weight", reason);
  return Answer(true, "pure-cube dequant, NZ weight", reason);
}

// arch35/adaptive_sliding_window_mix_basic_api_tiling.cpp IsCapable.
bool MixBasicApiAswCapable(const QuantFacts& facts, std::string* reason) {
  const bool vector_dequant = IsScaleVecPostProcess(facts) || facts.is_pertoken ||
                              IsBf16Mix(facts) || IsFp8OrHif8TTFloatBiasMix(facts);
  if (!vector_dequant) return Answer(false, "no vector dequant", reason);
  if (facts.trans_a) return Answer(false, "transposed x1", reason);
  if (!IsMixTensorApi(facts)) return Answer(false, "dtypes outside the mix Tensor-API set", reason);
  if (!facts.x2_nz) return Answer(false, "ND weight", reason);
  if (!facts.tensor_api) return Answer(false, "no Tensor API", reason);
  return Answer(true, "vector dequant, NZ weight, Tensor API", reason);
}

// arch35/adaptive_sliding_window_mix_tiling.cpp IsCapable (after the INT4
// rewrite, which by itself makes the problem a mix one).
bool MixAswCapable(const QuantFacts& facts, std::string* reason) {
  const QuantFacts seen = AsInt8IfInt4Pair(facts);
  const bool vector_dequant = IsScaleVecPostProcess(seen) || seen.is_pertoken || IsBf16Mix(seen) ||
                              IsFp8OrHif8TTFloatBiasMix(seen) || IsInt4Pair(facts);
  if (!vector_dequant) return Answer(false, "no vector dequant", reason);
  if (seen.y == GeDtype::kInt32) return Answer(false, "INT32 output", reason);
  return Answer(true, "vector dequant", reason);
}

}  // namespace

std::string_view QuantStrategyName(QuantStrategyId id) {
  switch (id) {
    case QuantStrategyId::kMxStreamK:
      return "MX_STREAMK";
    case QuantStrategyId::kMxBasicApiAsw:
      return "MX_BASIC_API_ASW";
    case QuantStrategyId::kCubeBasicApiAsw:
      return "CUBE_BASIC_API_ASW";
    case QuantStrategyId::kCubeAsw:
      return "CUBE_ASW";
    case QuantStrategyId::kMixBasicApiAsw:
      return "MIX_BASIC_API_ASW";
    case QuantStrategyId::kMixAsw:
      return "MIX_ASW";
    case QuantStrategyId::kPerblockBasicApiAsw:
      return "PERBLOCK_BASIC_API_ASW";
  }
  return "";
}

bool IsStrategyCapable(QuantStrategyId id, const QuantFacts& facts, const ChipSpec& chip,
                       std::string* reason) {
  switch (id) {
    case QuantStrategyId::kMxStreamK:
      return StreamKInputCapable(facts, chip, reason);
    case QuantStrategyId::kMxBasicApiAsw:
      return IsMxBasicApiCapable(facts) ? Answer(true, "MX FP8 or FP4", reason)
                                        : Answer(false, "not MX FP8/FP4", reason);
    case QuantStrategyId::kCubeBasicApiAsw:
      return CubeBasicApiAswCapable(facts, reason);
    case QuantStrategyId::kCubeAsw:
      return CubeAswCapable(facts, reason);
    case QuantStrategyId::kMixBasicApiAsw:
      return MixBasicApiAswCapable(facts, reason);
    case QuantStrategyId::kMixAsw:
      return MixAswCapable(facts, reason);
    case QuantStrategyId::kPerblockBasicApiAsw:
      return IsPerblockBasicApiCapable(facts) ? Answer(true, "per-block", reason)
                                              : Answer(false, "not per-block", reason);
  }
  return Answer(false, "unknown strategy", reason);
}

bool IsInt4Pair(const QuantFacts& facts) {
  return facts.x1 == GeDtype::kInt4 && facts.x2 == GeDtype::kInt4;
}

bool IsCubeBasicApiCapable(const QuantFacts& facts) {
  const GeDtype a = IsInt4Pair(facts) ? GeDtype::kInt8 : facts.x1;
  // CANN reads the bias dtype even without a bias; absent, it is INT32.
  const bool per_tensor =
      facts.is_per_tensor &&
      ((a == GeDtype::kInt8 && facts.bias == GeDtype::kInt32 && !facts.is_pertoken) ||
       (IsFp8OrHif8(a) && IsIntegerScale(facts.scale)));
  const bool per_channel =
      facts.is_per_channel && (IsIntegerScale(facts.scale) || facts.y == GeDtype::kInt32);
  return (facts.is_double_scale && !facts.is_per_channel) || per_tensor || per_channel;
}

bool IsMxBasicApiCapable(const QuantFacts& facts) {
  const bool mx_fp8 = IsFp8(facts.x1) && IsFp8(facts.x2) && facts.is_mx;
  const bool mx_fp4 =
      facts.is_mx && facts.x1 == GeDtype::kFloat4E2M1 && facts.x2 == GeDtype::kFloat4E2M1;
  return mx_fp8 || mx_fp4;
}

bool IsPerblockBasicApiCapable(const QuantFacts& facts) {
  // x2 is always ND or FRACTAL_NZ once parsed.
  return facts.is_per_block;
}

bool IsFp8OrHif8TTFloatBiasMix(const QuantFacts& facts) {
  const bool double_per_tensor =
      facts.is_double_scale && facts.is_per_tensor && !facts.is_per_channel;
  const bool float_scales = facts.scale == GeDtype::kFloat && facts.pertoken == GeDtype::kFloat;
  const bool float_bias = facts.has_bias && facts.bias == GeDtype::kFloat;
  return IsFp8OrHif8(facts.x1) && double_per_tensor && float_scales && float_bias;
}

bool IsMixTensorApi(const QuantFacts& facts) {
  const bool int8_to_bf16 =
      facts.x1 == GeDtype::kInt8 && facts.y == GeDtype::kBFloat16 &&
      (!facts.has_bias || facts.bias == GeDtype::kBFloat16 || facts.bias == GeDtype::kFloat);
  const bool e4m3_or_hif8 = (facts.x1 == GeDtype::kFloat8E4M3 || facts.x1 == GeDtype::kHiFloat8) &&
                            (!facts.has_bias || facts.bias == GeDtype::kFloat);
  return (int8_to_bf16 || e4m3_or_hif8) && facts.x1 == facts.x2 && facts.y != GeDtype::kInt32;
}

bool IsNonMxCubeBasicApiCapable(const QuantFacts& facts) {
  return IsCubeBasicApiCapable(facts) && !IsMxBasicApiCapable(facts) &&
         !IsFp8OrHif8TTFloatBiasMix(facts);
}

bool IsWeightNzNonMxCubeBasicApiCapable(const QuantFacts& facts) {
  return facts.x2_nz && facts.tensor_api && IsNonMxCubeBasicApiCapable(facts);
}

bool IsScaleVecPostProcess(const QuantFacts& facts) {
  return facts.is_per_channel && !IsIntegerScale(facts.scale);
}

bool IsBf16Mix(const QuantFacts& facts) {
  const bool float_scale = !IsIntegerScale(facts.scale) && facts.scale != GeDtype::kFloat8E8M0;
  const bool per_channel = float_scale && facts.is_per_channel;
  const bool per_tensor_float_bias =
      float_scale && facts.is_per_tensor && facts.x1 == GeDtype::kInt8 && facts.has_bias &&
      (facts.bias == GeDtype::kFloat || facts.bias == GeDtype::kBFloat16);
  return (per_channel || per_tensor_float_bias || IsFp8OrHif8TTFloatBiasMix(facts)) &&
         facts.y != GeDtype::kInt32;
}

bool IsMxStreamKInput(const QuantFacts& facts) { return IsMxBasicApiCapable(facts); }

bool IsPostDequantBiasInput(const QuantFacts& facts) {
  const bool int8 = facts.x1 == GeDtype::kInt8 && facts.x2 == GeDtype::kInt8;
  const bool int8_single_scale =
      int8 && !facts.is_double_scale && facts.has_bias &&
      (facts.scale == GeDtype::kFloat || facts.scale == GeDtype::kBFloat16) &&
      facts.bias == facts.scale;
  const bool double_float_scale = facts.is_double_scale && facts.scale == GeDtype::kFloat &&
                                  facts.pertoken == GeDtype::kFloat && facts.has_bias &&
                                  facts.bias == GeDtype::kFloat;
  return int8_single_scale || double_float_scale;
}

bool IsPertensorStreamKInput(const QuantFacts& facts) {
  // x1 ND (the output is always ND); x2 ND or NZ.
  if (facts.x1_nz) return false;
  if (!facts.is_per_tensor || facts.is_pertoken || facts.is_per_channel || facts.is_mx ||
      facts.is_per_block) {
    return false;
  }
  const bool int_scale = IsIntegerScale(facts.scale);
  const bool float_scale = facts.scale == GeDtype::kFloat || facts.scale == GeDtype::kBFloat16;
  if (facts.x1 == GeDtype::kInt8 && facts.x2 == GeDtype::kInt8) {
    const bool fp16_or_bf16 = facts.y == GeDtype::kFloat16 || facts.y == GeDtype::kBFloat16;
    const bool scale_and_output =
        !facts.is_double_scale &&
        ((int_scale && fp16_or_bf16) || (float_scale && facts.y == GeDtype::kBFloat16));
    const bool bias_ok =
        !facts.has_bias || facts.bias == GeDtype::kInt32 || IsPostDequantBiasInput(facts);
    return scale_and_output && bias_ok;
  }
  const bool hif8_pair = facts.x1 == GeDtype::kHiFloat8 && facts.x2 == GeDtype::kHiFloat8;
  const bool fp8_pair = IsFp8(facts.x1) && IsFp8(facts.x2);
  if (!hif8_pair && !fp8_pair) return false;
  const bool output_ok =
      facts.y == GeDtype::kFloat16 || facts.y == GeDtype::kBFloat16 || facts.y == GeDtype::kFloat;
  const bool scale_ok = (!facts.is_double_scale && int_scale) ||
                        (facts.is_double_scale && facts.scale == GeDtype::kFloat &&
                         facts.pertoken == GeDtype::kFloat);
  const bool bias_ok = !facts.has_bias || (int_scale && facts.bias == GeDtype::kFloat) ||
                       IsPostDequantBiasInput(facts);
  return scale_ok && output_ok && bias_ok;
}

bool StreamKInputCapable(const QuantFacts& facts, const ChipSpec& chip, std::string* reason) {
  if (!IsMxStreamKInput(facts) && !IsPertensorStreamKInput(facts)) {
    return Answer(false, "neither MX nor a per-tensor Stream-K input", reason);
  }
  if (facts.batch_c != 1) return Answer(false, "batched output", reason);
  if (chip.aiv_num == 0 || chip.aic_num == 0 || chip.aiv_num % kVectorCoresPerCube != 0 ||
      chip.aiv_num / kVectorCoresPerCube != chip.aic_num) {
    return Answer(false, "aiv_num != 2 * aic_num", reason);
  }
  if (facts.deterministic_level > 1) return Answer(false, "deterministic level > 1", reason);
  if (!facts.tensor_api) return Answer(false, "no Tensor API", reason);
  return Answer(true, "Stream-K input (benefit gate not evaluated)", reason);
}

}  // namespace npu::tiling::quant
